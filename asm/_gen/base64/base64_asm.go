// Command base64 generates the AVX-512 VBMI and AVX2 base64 kernels of package asm:
// ../../base64_amd64.s and the stubs ../../base64_stub_amd64.go.
//
// Reference: Wojciech Muła and Daniel Lemire, "Base64 encoding and decoding at
// almost the speed of a memory copy", Software: Practice and Experience 50(2),
// 2020 (arXiv:1910.05109), section 4 (AVX-512 VBMI). The Go reference
// functions are encodeBase64Generic and decodeBase64Generic in ../../base64.go;
// the tests in package asm compare every tier with them.
package main

//go:generate go run . -pkg asm -out ../../base64_amd64.s -stubs ../../base64_stub_amd64.go

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// unroll is the number of 64-byte blocks per iteration of the main loops.
const unroll = 4

// prefetchAhead is how far ahead of src and dst, in bytes, the main loops
// of the pf kernel variants (AVX-512 and AVX2) prefetch each cache line
// they will touch: one PREFETCHT0 per line of src and of dst per iteration.
// It pays where the working set outgrows L2 (the 1 MiB codec measurement,
// 1 MiB in and 1.33 MiB out, beside a 2 MiB L2): about 1.1x there and at
// 64 MiB (AVX2 1.2-1.3x at 64 MiB); in L2 (64 KiB) it cost 3-6%, so the
// dispatcher calls the pf variants only beyond L2 (prefetchMin in
// ../../base64_amd64.go). On dst it fetches the line, normally in the
// exclusive state, before the stores come, so they wait less for their read
// for ownership. 2048 measured best of 512..4096 (Xeon, 2 MiB L2).
const prefetchAhead = 2048

// prefetchLines emits one PREFETCHT0 per 64-byte line of the n bytes at
// prefetchAhead past base.
func prefetchLines(base Register, n int) {
	for off := 0; off < n; off += 64 {
		PREFETCHT0(Mem{Base: base, Disp: prefetchAhead + off})
	}
}

func main() {
	ConstraintExpr("!purego")
	encode("encodeBase64AVX512VBMI", false, false)
	encode("encodeBase64AVX512VBMINT", true, false)
	encode("encodeBase64AVX512VBMIPF", false, true)
	decode("decodeBase64AVX512VBMI", false, false)
	decode("decodeBase64AVX512VBMINT", true, false)
	decode("decodeBase64AVX512VBMIPF", false, true)
	encodeAVX2(false, false)
	encodeAVX2(true, false)
	encodeAVX2(false, true)
	for _, prev := range []bool{false, true} {
		decodeAVX2(false, prev, false)
		decodeAVX2(true, prev, false)
		decodeAVX2(false, prev, true)
	}
	Generate()
}

// encode emits encodeBase64AVX512VBMI, or with nt
// encodeBase64AVX512VBMINT, which writes with non-temporal stores.
//
// Per 48-byte input block, producing 64 characters:
//
//	in  := masked load of src[0:48] into a zmm, bytes 48..63 zeroed (a masked
//	       load never touches, so never faults on, bytes it does not load)
//	// each 32-bit lane i gets input bytes (3i+1, 3i, 3i+2, 3i+1): the 24 bits
//	// b0 b1 b2 of one group laid out so that each 6-bit field sits in one
//	// 8-bit window of the lane
//	in  = VPERMB(in, encodeShuffle)
//	// byte j of each qword = 8 bits of that qword starting at bit
//	// shift[j] = 10, 4, 22, 16, 42, 36, 54, 48: the four 6-bit fields of each
//	// of its two lanes, in output order, with 2 junk bits on top
//	idx := VPMULTISHIFTQB(in, shift)
//	// VPERMB looks up the low 6 bits only, so the junk bits do not matter
//	out := VPERMB(alphabet, idx)
//	store out to dst[0:64]
//
// The main loop does unroll blocks per iteration, then one block at a time.
//
// The nt variant is for outputs far larger than the last-level cache, where
// skipping the read-for-ownership of dst pays (about 1.2x at 64 MiB on Zen 4).
// VMOVNTDQ needs 64-byte aligned addresses, so when dst is 4-byte but not
// 64-byte aligned it first encodes one partial block with masked load and
// store (h = 64 - dst%64 characters from h/4*3 bytes); when dst is not even
// 4-byte aligned it uses plain stores throughout. It ends with SFENCE.
//
// The pf variant prefetches prefetchAhead bytes ahead in its main loop.
func encode(name string, nt, pf bool) {
	TEXT(name, NOSPLIT, "func(dst, src []byte, lut *[64]byte) int")
	Pragma("noescape")
	Doc(encodeDoc(name, nt, pf)...)
	e := &encoder{name: name, pf: pf}
	e.dst = Load(Param("dst").Base(), GP64())
	e.dstLen = Load(Param("dst").Len(), GP64())
	e.src = Load(Param("src").Base(), GP64())
	e.srcLen = Load(Param("src").Len(), GP64())
	lut := Load(Param("lut"), GP64())
	start := GP64()
	MOVQ(e.src, start)
	CMPQ(e.srcLen, U8(48))
	JB(LabelRef(e.l("ret")))
	CMPQ(e.dstLen, U8(64))
	JB(LabelRef(e.l("ret")))
	e.setup(lut)

	if nt {
		e.alignForNT()
		e.loops("nt", true)
	}
	e.loops("", false)

	Label(e.l("done"))
	if nt {
		SFENCE()
	}
	VZEROUPPER()
	Label(e.l("ret"))
	SUBQ(start, e.src)
	Store(e.src, ReturnIndex(0))
	RET()
}

// encodeDoc is the Go doc comment of the encode kernel name.
func encodeDoc(name string, nt, pf bool) []string {
	if pf {
		return pfDoc(name, "encodeBase64AVX512VBMI")
	}
	if nt {
		return []string{
			name + " is encodeBase64AVX512VBMI writing dst with",
			"non-temporal stores (past the caches) when dst is 4-byte aligned, for outputs",
			"much larger than the last-level cache; it may first encode one partial block",
			"(a multiple of 3 bytes below 48) to align dst to 64 bytes. It returns the src",
			"bytes consumed, a multiple of 3 (not always of 48), and wrote 4/3 of that to",
			"dst, within the same bounds as encodeBase64AVX512VBMI.",
		}
	}
	return []string{
		name + " encodes whole 48-byte blocks of src into 64-character",
		"blocks of dst with the alphabet lut, n = min(len(src)/48, len(dst)/64) blocks,",
		"and returns n*48, the src bytes consumed; it wrote n*64 bytes of dst. It reads",
		"only src[:n*48] and lut, writes only dst[:n*64], and needs AVX-512 F, BW and VBMI.",
	}
}

// pfDoc is the Go doc comment of the pf variant name of kernel base.
func pfDoc(name, base string) []string {
	return []string{
		name + " is " + base + " prefetching each line of src",
		"and dst 2 KiB ahead in its main loop, for working sets larger than L2.",
	}
}

// encoder holds the registers of one encode kernel.
type encoder struct {
	name                     string
	pf                       bool // prefetch in the main loop
	dst, dstLen, src, srcLen Register
	alphabet, shuffle, shift VecVirtual
	load                     Op // the 48-byte load mask
	mask                     Register
	regs                     [unroll]VecVirtual
}

// l is the kernel's label s.
func (e *encoder) l(s string) string { return e.name + "_" + s }

// setup loads the alphabet from lut, the shuffle and shift constants and
// the load mask, and allocates the block registers.
func (e *encoder) setup(lut Register) {
	e.alphabet = ZMM()
	VMOVDQU64(Mem{Base: lut}, e.alphabet)
	e.shuffle = ZMM()
	VMOVDQU64(encodeShuffle(), e.shuffle)
	e.shift = ZMM()
	VPBROADCASTQ(encodeShift(), e.shift)
	load := K()
	e.mask = GP64()
	MOVQ(U64(1<<48-1), e.mask)
	KMOVQ(e.mask, load)
	e.load = load
	for u := range e.regs {
		e.regs[u] = ZMM()
	}
}

// block encodes the bytes at s under the load mask lk into d, with a
// masked store under sk, a non-temporal store, or a plain store.
func (e *encoder) block(in VecVirtual, s, d Mem, lk, sk Op, ntStore bool) {
	VMOVDQU8_Z(s, lk, in)
	VPERMB(in, e.shuffle, in)
	VPMULTISHIFTQB(in, e.shift, in)
	VPERMB(e.alphabet, in, in)
	switch {
	case sk != nil:
		VMOVDQU8(in, sk, d)
	case ntStore:
		VMOVNTDQ(in, d)
	default:
		VMOVDQU64(in, d)
	}
}

// loops emits the unrolled loop, then the one-block loop, under prefix.
func (e *encoder) loops(prefix string, ntStore bool) {
	Label(e.l(prefix + "loop4"))
	CMPQ(e.srcLen, U32(48*unroll))
	JB(LabelRef(e.l(prefix + "loop1")))
	CMPQ(e.dstLen, U32(64*unroll))
	JB(LabelRef(e.l(prefix + "loop1")))
	if e.pf {
		prefetchLines(e.src, 48*unroll)
		prefetchLines(e.dst, 64*unroll)
	}
	for u, in := range e.regs {
		e.block(in, Mem{Base: e.src, Disp: 48 * u}, Mem{Base: e.dst, Disp: 64 * u}, e.load, nil, ntStore)
	}
	ADDQ(U32(48*unroll), e.src)
	ADDQ(U32(64*unroll), e.dst)
	SUBQ(U32(48*unroll), e.srcLen)
	SUBQ(U32(64*unroll), e.dstLen)
	JMP(LabelRef(e.l(prefix + "loop4")))

	Label(e.l(prefix + "loop1"))
	CMPQ(e.srcLen, U8(48))
	JB(LabelRef(e.l("done")))
	CMPQ(e.dstLen, U8(64))
	JB(LabelRef(e.l("done")))
	e.block(e.regs[0], Mem{Base: e.src}, Mem{Base: e.dst}, e.load, nil, ntStore)
	ADDQ(U8(48), e.src)
	ADDQ(U8(64), e.dst)
	SUBQ(U8(48), e.srcLen)
	SUBQ(U8(64), e.dstLen)
	JMP(LabelRef(e.l(prefix + "loop1")))
}

// alignForNT jumps to the non-temporal loops when dst is 64-byte aligned,
// to the plain ones when it is not even 4-byte aligned, and otherwise
// encodes one partial block that aligns dst and falls into the
// non-temporal loops.
func (e *encoder) alignForNT() {
	Comment("Align dst to 64 bytes for VMOVNTDQ, or use plain stores.")
	off := GP64()
	MOVQ(e.dst, off)
	ANDQ(U8(63), off)
	JZ(LabelRef(e.l("ntloop4")))
	TESTQ(U32(3), off)
	JNZ(LabelRef(e.l("loop4")))
	h, n := GP64(), GP64()
	MOVQ(U32(64), h)
	SUBQ(off, h) // characters to write: 4..60, a multiple of 4
	MOVQ(h, n)
	SHRQ(U8(2), n)
	LEAQ(Mem{Base: n, Index: n, Scale: 2}, n) // bytes to read: h/4*3
	hl, hs := K(), K()
	MOVQ(I32(-1), e.mask)
	BZHIQ(n, e.mask, e.mask)
	KMOVQ(e.mask, hl)
	MOVQ(I32(-1), e.mask)
	BZHIQ(h, e.mask, e.mask)
	KMOVQ(e.mask, hs)
	e.block(e.regs[0], Mem{Base: e.src}, Mem{Base: e.dst}, hl, hs, false)
	ADDQ(n, e.src)
	ADDQ(h, e.dst)
	SUBQ(n, e.srcLen)
	SUBQ(h, e.dstLen)
}

// consts holds the data symbols emitted so far: the kernels share them.
var consts = map[string]Mem{}

// constant emits the data symbol name with emit the first time it is asked
// for, and returns it.
func constant(name string, emit func() Mem) Mem {
	if m, ok := consts[name]; ok {
		return m
	}
	m := emit()
	consts[name] = m
	return m
}

// encodeShift is the VPMULTISHIFTQB control qword of the encoder.
func encodeShift() Mem {
	return constant("encodeShift", func() Mem { return ConstData("encodeShift", U64(0x3036242a1016040a)) })
}

// encodeShuffle is the VPERMB index vector of the encoder: lane i takes input
// bytes 3i+1, 3i, 3i+2, 3i+1.
func encodeShuffle() Mem {
	return constant("encodeShuffle", func() Mem {
		m := GLOBL("encodeShuffle", RODATA|NOPTR)
		for i := 0; i < 16; i++ {
			for j, off := range []int{1, 0, 2, 1} {
				DATA(4*i+j, U8(3*i+off))
			}
		}
		return m
	})
}

// decode emits decodeBase64AVX512VBMI, or with nt
// decodeBase64AVX512VBMINT, which writes with non-temporal stores.
//
// Per 64-character block, producing 48 bytes:
//
//	in  := load src[0:64]
//	// VPERMT2B looks up the low 7 bits of each byte in the 128-entry table
//	// lut (two zmm registers): the 6-bit value of an alphabet character,
//	// 0x80 for anything else
//	t   := VPERMT2B(lutLo, in, lutHi)
//	// a byte is bad when the lookup says so (bit 7 of t) or when it is not
//	// ASCII (bit 7 of in: the lookup ignored that bit)
//	if VPMOVB2M(in | t) != 0 { stop before this block }
//	// pairs of 6-bit values into 12 bits: c0*64 + c1, c2*64 + c3
//	w   := VPMADDUBSW(t, 0x01400140 in each dword)
//	// pairs of 12-bit values into 24 bits per dword: w0*4096 + w1
//	d   := VPMADDWD(w, 0x00011000 in each dword)
//	// the 3 useful bytes of each dword, big-endian, packed into 48 bytes
//	out := VPERMB(d, decodePack)
//	masked store of out[0:48] to dst[0:48]
//
// The main loop loads unroll (4) blocks and ORs their error bits together; a
// group with a bad block is redone one block at a time, which stops exactly
// before the first bad block. Nothing is stored for a bad block or after it.
// A good group skips the VPERMB pack: its 192 output bytes are built by three
// VPERMT2B, each taking bytes of two neighbouring blocks' dword vectors
// (decodeStore), and written by three full 64-byte stores instead of four
// masked 48-byte ones (about 10% faster on Zen 4).
//
// The nt variant writes those group stores with VMOVNTDQ when dst is 64-byte
// aligned (192-byte steps keep it so) and plain ones otherwise; the
// one-block loop always stores plainly. It ends with SFENCE.
//
// The pf variant prefetches prefetchAhead bytes ahead in its main loop.
func decode(name string, nt, pf bool) {
	d := &decoder{name: name, pf: pf}
	TEXT(name, NOSPLIT, "func(dst, src []byte, lut *[128]byte) int")
	Pragma("noescape")
	Doc(decodeDoc(name, nt, pf)...)
	d.dst = Load(Param("dst").Base(), GP64())
	d.dstLen = Load(Param("dst").Len(), GP64())
	d.src = Load(Param("src").Base(), GP64())
	d.srcLen = Load(Param("src").Len(), GP64())
	lut := Load(Param("lut"), GP64())
	start := GP64()
	MOVQ(d.src, start)
	CMPQ(d.srcLen, U8(64))
	JB(LabelRef(d.l("ret")))
	CMPQ(d.dstLen, U8(48))
	JB(LabelRef(d.l("ret")))
	d.setup(lut)

	if nt {
		Comment("VMOVNTDQ needs dst 64-byte aligned; the group stores keep it so.")
		TESTQ(U32(63), d.dst)
		JNZ(LabelRef(d.l("loop4")))
		d.group("nt", true)
	}
	d.group("", false)
	d.oneBlockLoop()

	Label(d.l("done"))
	if nt {
		SFENCE()
	}
	VZEROUPPER()
	Label(d.l("ret"))
	SUBQ(start, d.src)
	Store(d.src, ReturnIndex(0))
	RET()
}

// decodeDoc is the Go doc comment of the decode kernel name.
func decodeDoc(name string, nt, pf bool) []string {
	if pf {
		return pfDoc(name, "decodeBase64AVX512VBMI")
	}
	if nt {
		return []string{
			name + " is decodeBase64AVX512VBMI writing dst with",
			"non-temporal stores (past the caches) when dst is 64-byte aligned, for outputs",
			"much larger than the last-level cache; otherwise it uses plain stores. Its",
			"results and bounds are those of decodeBase64AVX512VBMI.",
		}
	}
	return []string{
		name + " decodes whole 64-character blocks of src into 48-byte",
		"blocks of dst with the reverse table lut (the value of each 7-bit character,",
		"0x80 for characters outside the alphabet), at most",
		"min(len(src)/64, len(dst)/48) blocks, and stops before the first block holding",
		"a character outside the alphabet or >= 0x80. It returns the src characters",
		"consumed, a multiple of 64; it wrote 3/4 of that to dst. It reads only the",
		"whole 64-character blocks of src and lut, writes only that prefix of dst, and",
		"needs AVX-512 F, BW and VBMI.",
	}
}

// decoder holds the registers of one decode kernel.
type decoder struct {
	name                     string
	pf                       bool // prefetch in the main loop
	dst, dstLen, src, srcLen Register
	lutLo, lutHi             VecVirtual // the 128-entry reverse table
	merge1, merge2, pack     VecVirtual
	merges                   [3]VecVirtual // decodeStore(0..2)
	store, bad               Op            // the 48-byte store mask; the bad-byte mask
	ins, ts                  [unroll]VecVirtual
	errs                     VecVirtual
}

// l is the kernel's label s.
func (d *decoder) l(s string) string { return d.name + "_" + s }

// setup loads the table from lut and the constants, makes the store mask
// and allocates the block registers.
func (d *decoder) setup(lut Register) {
	d.lutLo, d.lutHi = ZMM(), ZMM()
	VMOVDQU64(Mem{Base: lut}, d.lutLo)
	VMOVDQU64(Mem{Base: lut, Disp: 64}, d.lutHi)
	d.merge1, d.merge2 = ZMM(), ZMM()
	VPBROADCASTD(constant("decodeMerge1", func() Mem { return ConstData("decodeMerge1", U32(0x01400140)) }), d.merge1)
	VPBROADCASTD(constant("decodeMerge2", func() Mem { return ConstData("decodeMerge2", U32(0x00011000)) }), d.merge2)
	d.pack = ZMM()
	VMOVDQU64(decodePack(), d.pack)
	for k := range d.merges {
		d.merges[k] = ZMM()
		VMOVDQU64(decodeStore(k), d.merges[k])
	}
	store := K()
	mask := GP64()
	MOVQ(U64(1<<48-1), mask)
	KMOVQ(mask, store)
	d.store, d.bad = store, K()
	for u := range d.ins {
		d.ins[u], d.ts[u] = ZMM(), ZMM()
	}
	d.errs = ZMM()
}

// lookup loads the block at s into in and looks its bytes up into t.
func (d *decoder) lookup(in, t VecVirtual, s Mem) {
	VMOVDQU64(s, in)
	VMOVDQA64(d.lutLo, t)
	VPERMT2B(d.lutHi, in, t)
}

// finish packs the looked-up block t into 48 bytes and stores them at dst.
func (d *decoder) finish(t VecVirtual, dst Mem) {
	VPMADDUBSW(d.merge1, t, t)
	VPMADDWD(d.merge2, t, t)
	VPERMB(t, d.pack, t)
	VMOVDQU8(t, d.store, dst)
}

// group emits the main loop, unroll blocks per turn; it falls into the
// one-block loop at the end or at a group with a bad block.
func (d *decoder) group(prefix string, ntStore bool) {
	Label(d.l(prefix + "loop4"))
	CMPQ(d.srcLen, U32(64*unroll))
	JB(LabelRef(d.l("loop1")))
	CMPQ(d.dstLen, U32(48*unroll))
	JB(LabelRef(d.l("loop1")))
	if d.pf {
		prefetchLines(d.src, 64*unroll)
		prefetchLines(d.dst, 48*unroll)
	}
	for u := range d.ins {
		d.lookup(d.ins[u], d.ts[u], Mem{Base: d.src, Disp: 64 * u})
		if u == 0 {
			VPORD(d.ins[u], d.ts[u], d.errs)
		} else {
			VPTERNLOGD(U8(0xFE), d.ins[u], d.ts[u], d.errs) // errs |= in | t
		}
	}
	VPMOVB2M(d.errs, d.bad)
	KORTESTQ(d.bad, d.bad)
	JNZ(LabelRef(d.l("loop1")))
	// The group's 192 output bytes go out as three full 64-byte stores,
	// each permuted from two blocks' dwords (see decodeStore).
	for _, t := range d.ts {
		VPMADDUBSW(d.merge1, t, t)
		VPMADDWD(d.merge2, t, t)
	}
	for k, idx := range d.merges {
		VPERMT2B(d.ts[k+1], idx, d.ts[k]) // ts[k] = bytes of ts[k] || ts[k+1] at idx
		if ntStore {
			VMOVNTDQ(d.ts[k], Mem{Base: d.dst, Disp: 64 * k})
		} else {
			VMOVDQU64(d.ts[k], Mem{Base: d.dst, Disp: 64 * k})
		}
	}
	ADDQ(U32(64*unroll), d.src)
	ADDQ(U32(48*unroll), d.dst)
	SUBQ(U32(64*unroll), d.srcLen)
	SUBQ(U32(48*unroll), d.dstLen)
	JMP(LabelRef(d.l(prefix + "loop4")))
}

// oneBlockLoop emits the loop that decodes one block at a time and stops
// before a bad one.
func (d *decoder) oneBlockLoop() {
	Label(d.l("loop1"))
	CMPQ(d.srcLen, U8(64))
	JB(LabelRef(d.l("done")))
	CMPQ(d.dstLen, U8(48))
	JB(LabelRef(d.l("done")))
	d.lookup(d.ins[0], d.ts[0], Mem{Base: d.src})
	VPORD(d.ins[0], d.ts[0], d.errs)
	VPMOVB2M(d.errs, d.bad)
	KORTESTQ(d.bad, d.bad)
	JNZ(LabelRef(d.l("done")))
	d.finish(d.ts[0], Mem{Base: d.dst})
	ADDQ(U8(64), d.src)
	ADDQ(U8(48), d.dst)
	SUBQ(U8(64), d.srcLen)
	SUBQ(U8(48), d.dstLen)
	JMP(LabelRef(d.l("loop1")))
}

// decodeStore is the VPERMT2B index vector for the k-th (0..2) 64-byte store
// of a group of four blocks: the group's output stream is the 48 packed bytes
// of each block, b_u[x] = dword-vector u at byte packIndex(x), and store k
// holds stream bytes 64k..64k+63, which come from blocks k (table A, indices
// 0..63) and k+1 (table B, indices 64..127):
//
//	store 0 = b0[0:48] b1[0:16]
//	store 1 = b1[16:48] b2[0:32]
//	store 2 = b2[32:48] b3[0:48]
func decodeStore(k int) Mem {
	name := fmt.Sprintf("decodeStore%d", k)
	return constant(name, func() Mem {
		m := GLOBL(name, RODATA|NOPTR)
		first := 48 - 16*k // bytes taken from block k
		for j := 0; j < 64; j++ {
			if j < first {
				DATA(j, U8(packIndex(16*k+j)))
			} else {
				DATA(j, U8(64+packIndex(j-first)))
			}
		}
		return m
	})
}

// packIndex is the byte of a dword vector holding packed output byte x
// (0..47): bytes 2, 1, 0 of dword x/3.
func packIndex(x int) int { return 4*(x/3) + 2 - x%3 }

// decodePack is the VPERMB index vector that packs the 24-bit dword values
// into 48 bytes: output bytes 3i, 3i+1, 3i+2 are bytes 2, 1, 0 of dword i.
// The top 16 bytes are unused and left zero.
func decodePack() Mem {
	return constant("decodePack", func() Mem {
		m := GLOBL("decodePack", RODATA|NOPTR)
		for x := 0; x < 48; x++ {
			DATA(x, U8(packIndex(x)))
		}
		for i := 48; i < 64; i++ {
			DATA(i, U8(0))
		}
		return m
	})
}
