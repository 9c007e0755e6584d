package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The AVX2 kernels (Muła and Lemire, section 3: the AVX2 encoder and
// decoder) work on 24 bytes <-> 32 characters per step. They read their
// alphabet from an 80-byte table built in Go by NewAlphabet (avx2Table in
// ../../base64.go), at these offsets:
const (
	avx2EncodeShift = 0  // encoder: 16 offsets added to the 6-bit values
	avx2DecodeLo    = 16 // decoder: class bits by low nibble
	avx2DecodeHi    = 32 // decoder: class bits by high nibble
	avx2DecodeRoll  = 48 // decoder: offsets by high nibble (slots 8..15: the fix character)
	avx2DecodeFix   = 64 // decoder: the fix character
)

// unrollAVX2 is the number of 32-character blocks per iteration of the AVX2
// kernels' main loops: twice the AVX-512 ones' count of 64-byte blocks, so
// that the loop's own instructions stay as rare per byte.
const unrollAVX2 = 8

// encodeAVX2 emits encodeBase64AVX2.
//
// Per 24-byte input block, producing 32 characters:
//
//	in  := src[0:16] in the low lane, src[8:24] in the high lane (two loads
//	       that never read past the block)
//	// each 32-bit lane gets bytes (1, 0, 2, 1) of its 3-byte group
//	in  = VPSHUFB(in, encodeShuffleAVX2)
//	// the four 6-bit fields of each group, one per byte, in output order:
//	// two fields by a multiply-high, two by a multiply-low of masked words
//	idx := MULHUW(in & 0x0fc0fc00, 0x04000040) | MULLW(in & 0x003f03f0, 0x01000010)
//	// a class per field: 0 for 0..25, 1 for 26..51, 2..11 for the digits,
//	// 12 and 13 for the last two characters, whose offsets come from the table
//	cls := SUBUSB(idx, 51) - (idx > 25)
//	out := idx + VPSHUFB(shiftTable, cls)
//
// The main loop does unrollAVX2 blocks per iteration, then one block at a time.
//
// The nt variant, encodeBase64AVX2NT, writes the loops' blocks with
// VMOVNTDQ, for outputs far larger than the last-level cache; the caller
// aligns dst to 32 bytes. The pf variant, encodeBase64AVX2PF, prefetches
// prefetchAhead bytes ahead in the unrolled loop.
func encodeAVX2(nt, pf bool) {
	name := "encodeBase64AVX2"
	switch {
	case nt:
		name += "NT"
	case pf:
		name += "PF"
	}
	TEXT(name, NOSPLIT, "func(dst, src []byte, lut *[80]byte) int")
	Pragma("noescape")
	Doc(encodeAVX2Doc(name, nt, pf)...)
	e := &encoder{name: name}
	e.dst = Load(Param("dst").Base(), GP64())
	e.dstLen = Load(Param("dst").Len(), GP64())
	e.src = Load(Param("src").Base(), GP64())
	e.srcLen = Load(Param("src").Len(), GP64())
	lut := Load(Param("lut"), GP64())
	start := GP64()
	MOVQ(e.src, start)
	CMPQ(e.srcLen, U8(24))
	JB(LabelRef(e.l("ret")))
	CMPQ(e.dstLen, U8(32))
	JB(LabelRef(e.l("ret")))

	k := &avx2EncodeConsts{shift: YMM(), shuffle: YMM(), c51: YMM(), c25: YMM(),
		mask1: YMM(), mul1: YMM(), mask2: YMM(), mul2: YMM()}
	VBROADCASTI128(Mem{Base: lut, Disp: avx2EncodeShift}, k.shift)
	VMOVDQU(encodeShuffleAVX2(0), k.shuffle)
	VPBROADCASTB(constant("encodeC51", func() Mem { return ConstData("encodeC51", U8(51)) }), k.c51)
	VPBROADCASTB(constant("encodeC25", func() Mem { return ConstData("encodeC25", U8(25)) }), k.c25)
	VPBROADCASTD(constant("encodeMask1", func() Mem { return ConstData("encodeMask1", U32(0x0fc0fc00)) }), k.mask1)
	VPBROADCASTD(constant("encodeMul1", func() Mem { return ConstData("encodeMul1", U32(0x04000040)) }), k.mul1)
	VPBROADCASTD(constant("encodeMask2", func() Mem { return ConstData("encodeMask2", U32(0x003f03f0)) }), k.mask2)
	VPBROADCASTD(constant("encodeMul2", func() Mem { return ConstData("encodeMul2", U32(0x01000010)) }), k.mul2)

	// The first block loads its two halves; the loops then load 32 bytes
	// from 4 before the block, which the previous block read, while 4 bytes
	// past it remain; the last block, if that leaves one, loads halves again.
	k.block(Mem{Base: e.src}, Mem{Base: e.dst}, false, false)
	advance(e.src, e.dst, e.srcLen, e.dstLen, 24, 32)

	loopAVX2(e.l("group"), e.l("loop1"), e.srcLen, e.dstLen, 24*unrollAVX2+4, 32*unrollAVX2)
	if pf {
		prefetchLines(e.src, 24*unrollAVX2)
		prefetchLines(e.dst, 32*unrollAVX2)
	}
	for u := 0; u < unrollAVX2; u++ {
		k.block(Mem{Base: e.src, Disp: 24 * u}, Mem{Base: e.dst, Disp: 32 * u}, true, nt)
	}
	advance(e.src, e.dst, e.srcLen, e.dstLen, 24*unrollAVX2, 32*unrollAVX2)
	JMP(LabelRef(e.l("group")))

	loopAVX2(e.l("loop1"), e.l("last"), e.srcLen, e.dstLen, 24+4, 32)
	k.block(Mem{Base: e.src}, Mem{Base: e.dst}, true, nt)
	advance(e.src, e.dst, e.srcLen, e.dstLen, 24, 32)
	JMP(LabelRef(e.l("loop1")))

	loopAVX2(e.l("last"), e.l("done"), e.srcLen, e.dstLen, 24, 32)
	k.block(Mem{Base: e.src}, Mem{Base: e.dst}, false, false)
	advance(e.src, e.dst, e.srcLen, e.dstLen, 24, 32)

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

// encodeAVX2Doc is the Go doc comment of the AVX2 encode kernel name.
func encodeAVX2Doc(name string, nt, pf bool) []string {
	if pf {
		return pfDoc(name, "encodeBase64AVX2")
	}
	if nt {
		return []string{
			name + " is encodeBase64AVX2 writing most of dst with",
			"non-temporal stores (past the caches), for outputs much larger than the",
			"last-level cache; dst must be 32-byte aligned.",
		}
	}
	return []string{
		name + " encodes whole 24-byte blocks of src into 32-character",
		"blocks of dst with the AVX2 table lut of an alphabet whose first 62 characters",
		"are A-Z, a-z, 0-9, n = min(len(src)/24, len(dst)/32) blocks, and returns n*24,",
		"the src bytes consumed; it wrote n*32 bytes of dst. It reads only src[:n*24]",
		"and lut, writes only dst[:n*32], and needs AVX2.",
	}
}

// avx2EncodeConsts holds the encoder's constants, in registers.
type avx2EncodeConsts struct {
	shift, shuffle, c51, c25 VecVirtual
	mask1, mul1, mask2, mul2 VecVirtual
}

// block encodes the 24 bytes at s into the 32 characters at d, with a
// non-temporal store when ntStore. With back, it loads s[-4:28] (which must
// be readable) instead of s[0:16] and s[8:24].
func (k *avx2EncodeConsts) block(s, d Mem, back, ntStore bool) {
	in, t, idx := YMM(), YMM(), YMM()
	if back {
		VMOVDQU(s.Offset(-4), in)
		VPSHUFB(k.shuffle, in, in)
	} else {
		VMOVDQU(s, in.AsX())
		VINSERTI128(U8(1), s.Offset(8), in, in)
		VPSHUFB(encodeShuffleAVX2(4), in, in)
	}
	VPAND(k.mask1, in, t)
	VPMULHUW(k.mul1, t, t)
	VPAND(k.mask2, in, idx)
	VPMULLW(k.mul2, idx, idx)
	VPOR(t, idx, idx)
	VPSUBUSB(k.c51, idx, t)  // t = idx - 51, saturated at 0
	VPCMPGTB(k.c25, idx, in) // in = idx > 25 ? -1 : 0
	VPSUBB(in, t, t)
	VPSHUFB(t, k.shift, t)
	VPADDB(t, idx, idx)
	if ntStore {
		VMOVNTDQ(idx, d)
	} else {
		VMOVDQU(idx, d)
	}
}

// encodeShuffleAVX2 is the VPSHUFB control of the encoder for a block whose
// first 12 bytes start at byte 4-high of the low lane and the next 12 at
// byte high of the high lane: dword i of a lane takes its bytes 3i+1, 3i,
// 3i+2, 3i+1 from there. high is 0 for a load of s[-4:28], 4 for s[0:16]
// and s[8:24].
func encodeShuffleAVX2(high int) Mem {
	name := fmt.Sprintf("encodeShuffleAVX2_%d", high)
	return constant(name, func() Mem {
		m := GLOBL(name, RODATA|NOPTR)
		for lane, base := range []int{4 - high, high} {
			for i := 0; i < 4; i++ {
				for j, off := range []int{1, 0, 2, 1} {
					DATA(16*lane+4*i+j, U8(base+3*i+off))
				}
			}
		}
		return m
	})
}

// loopAVX2 emits the head of a loop at label: it goes to exit unless
// srcLen >= s and dstLen >= d.
func loopAVX2(label, exit string, srcLen, dstLen Register, s, d int) {
	Label(label)
	CMPQ(srcLen, U32(s))
	JB(LabelRef(exit))
	CMPQ(dstLen, U32(d))
	JB(LabelRef(exit))
}

// advance moves src and dst on by s and d bytes.
func advance(src, dst, srcLen, dstLen Register, s, d int) {
	ADDQ(U32(s), src)
	ADDQ(U32(d), dst)
	SUBQ(U32(s), srcLen)
	SUBQ(U32(d), dstLen)
}

// decodeAVX2 emits decodeBase64AVX2.
//
// Per 32-character block, producing 24 bytes:
//
//	in   := load src[0:32]
//	hi   := in>>4 & 0x0f; lo := in & 0x0f
//	// a character is outside the alphabet when its two nibbles' class bits
//	// meet (the tables partition the 16x16 byte grid by rows)
//	if VPSHUFB(loTable, lo) & VPSHUFB(hiTable, hi) != 0 { stop } // one VPTEST
//	// offset to add by row; the fix character, which shares a row with
//	// characters of another offset, looks up slot hi+8 (rows 8..15 hold no
//	// alphabet characters)
//	v    := in + VPSHUFB(rollTable, hi + (in == fix) & 8)
//	// pairs of 6-bit values into 12 bits, pairs of those into 24
//	d    := VPMADDWD(VPMADDUBSW(v, 0x01400140), 0x00011000)
//	// the 3 useful bytes of each dword, big-endian, packed into bytes 0..11
//	// of each lane
//	p    := VPSHUFB(d, decodePackAVX2)
//
// Blocks go in pairs (64 characters, 48 bytes), each block checked by its
// own VPTEST and branch (one instruction fewer per pair than an AND per
// block and an OR and a VPTEST per pair), both before anything is stored. Block A's two lanes go out as they are, two 16-byte stores 12
// bytes apart (the second one's 4 zero bytes land on B's first bytes, which
// B's stores write afterwards); one VPERMD puts block B's bytes 0..15 in its
// lower lane and 8..23 in its upper one, two 16-byte stores 8 bytes apart.
// No permute for A and none of the blend of two 32-byte permutes: it is
// 7% faster at 64 KiB than one 32-byte and one 16-byte store. A pair
// holding a bad character falls into the one-block loop, which stops before
// the bad block and stores 24 bytes at a time (16 + 8). Nothing is written
// past the last good block.
//
// The nt variant, decodeBase64AVX2NT, writes the pairs' 48 bytes as three
// 16-byte VMOVNTDQ after two VPERMD and a VPBLENDD (A's 24 bytes and B's
// first 8 in one register), for outputs far larger than the last-level
// cache; the caller aligns dst to 16 bytes. The pf variant,
// decodeBase64AVX2PF, prefetches prefetchAhead bytes ahead in the unrolled
// loop.
//
// The prev variants (decodeBase64AVX2Prev, decodeBase64AVX2PrevNT,
// decodeBase64AVX2PrevPF) look the
// fix character up in slot hi-1 instead, hi + (in == fix), one instruction
// fewer, for alphabets where that slot is free (the standard one: '/' takes
// the slot of row 1, which holds no alphabet character).
func decodeAVX2(nt, prev, pf bool) {
	name := "decodeBase64AVX2"
	if prev {
		name += "Prev"
	}
	switch {
	case nt:
		name += "NT"
	case pf:
		name += "PF"
	}
	d := &decoder{name: name}
	TEXT(name, NOSPLIT, "func(dst, src []byte, lut *[80]byte) int")
	Pragma("noescape")
	Doc(decodeAVX2Doc(name, nt, prev, pf)...)
	d.dst = Load(Param("dst").Base(), GP64())
	d.dstLen = Load(Param("dst").Len(), GP64())
	d.src = Load(Param("src").Base(), GP64())
	d.srcLen = Load(Param("src").Len(), GP64())
	lut := Load(Param("lut"), GP64())
	start := GP64()
	MOVQ(d.src, start)
	CMPQ(d.srcLen, U8(32))
	JB(LabelRef(d.l("ret")))
	CMPQ(d.dstLen, U8(24))
	JB(LabelRef(d.l("ret")))

	k := &avx2DecodeConsts{lo: YMM(), hi: YMM(), roll: YMM(), nib: YMM(), fix: YMM(), permA: YMM(), permB: YMM(),
		merge1: YMM(), merge2: YMM(), prev: prev}
	VBROADCASTI128(Mem{Base: lut, Disp: avx2DecodeLo}, k.lo)
	VBROADCASTI128(Mem{Base: lut, Disp: avx2DecodeHi}, k.hi)
	VBROADCASTI128(Mem{Base: lut, Disp: avx2DecodeRoll}, k.roll)
	VPBROADCASTB(constant("decodeNibble", func() Mem { return ConstData("decodeNibble", U8(0x0f)) }), k.nib)
	VMOVDQU(dwordConst("decodePermA", []uint32{0, 1, 2, 4, 5, 6, 7, 7}), k.permA)
	if nt {
		VMOVDQU(dwordConst("decodePermB", []uint32{2, 4, 5, 6, 0, 0, 0, 1}), k.permB)
	} else {
		VMOVDQU(dwordConst("decodePermSplit", []uint32{0, 1, 2, 4, 2, 4, 5, 6}), k.permB)
	}
	VPBROADCASTB(Mem{Base: lut, Disp: avx2DecodeFix}, k.fix)
	if !prev {
		k.eight = YMM()
		VPBROADCASTB(constant("decodeEight", func() Mem { return ConstData("decodeEight", U8(8)) }), k.eight)
	}
	VPBROADCASTD(constant("decodeMerge1", func() Mem { return ConstData("decodeMerge1", U32(0x01400140)) }), k.merge1)
	VPBROADCASTD(constant("decodeMerge2", func() Mem { return ConstData("decodeMerge2", U32(0x00011000)) }), k.merge2)
	k.pack = decodePackAVX2()

	loopAVX2(d.l("group"), d.l("loop1"), d.srcLen, d.dstLen, 32*unrollAVX2, 24*unrollAVX2)
	if pf {
		prefetchLines(d.src, 32*unrollAVX2)
		prefetchLines(d.dst, 24*unrollAVX2)
	}
	for p := 0; p < unrollAVX2/2; p++ {
		k.pair(Mem{Base: d.src, Disp: 64 * p}, Mem{Base: d.dst, Disp: 48 * p}, d.l("loop1"), nt)
	}
	advance(d.src, d.dst, d.srcLen, d.dstLen, 32*unrollAVX2, 24*unrollAVX2)
	JMP(LabelRef(d.l("group")))

	// A pair that fails jumps here with src and dst at the group's start:
	// the pairs before it are redone, which is harmless.
	loopAVX2(d.l("loop1"), d.l("done"), d.srcLen, d.dstLen, 32, 24)
	v := k.block(Mem{Base: d.src}, d.l("done"))
	VPERMD(v, k.permA, v)
	VMOVDQU(v.AsX(), Mem{Base: d.dst})
	VEXTRACTI128(U8(1), v, v.AsX())
	VMOVQ(v.AsX(), Mem{Base: d.dst, Disp: 16})
	advance(d.src, d.dst, d.srcLen, d.dstLen, 32, 24)
	JMP(LabelRef(d.l("loop1")))

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

// decodeAVX2Doc is the Go doc comment of the AVX2 decode kernel name.
func decodeAVX2Doc(name string, nt, prev, pf bool) []string {
	base := "decodeBase64AVX2"
	if prev {
		base += "Prev"
	}
	if pf {
		return pfDoc(name, base)
	}
	if nt {
		return []string{
			name + " is " + base + " writing most of dst with",
			"non-temporal stores (past the caches), for outputs much larger than the",
			"last-level cache; dst must be 16-byte aligned.",
		}
	}
	if prev {
		return []string{
			name + " is decodeBase64AVX2 for tables whose fix",
			"character is looked up in the slot of the row before its own.",
		}
	}
	return []string{
		name + " decodes whole 32-character blocks of src into 24-byte",
		"blocks of dst with the AVX2 table lut of an alphabet, at most",
		"min(len(src)/32, len(dst)/24) blocks, and stops before the first block holding",
		"a character outside the alphabet. It returns the src characters consumed, a",
		"multiple of 32; it wrote 3/4 of that to dst. It reads only the whole",
		"32-character blocks of src and lut, writes only that prefix of dst, and needs",
		"AVX2.",
	}
}

// avx2DecodeConsts holds the decoder's constants: registers, and a memory
// operand for the pack control (a register for it measured no faster).
type avx2DecodeConsts struct {
	lo, hi, roll, nib, fix, permA, permB VecVirtual
	eight, merge1, merge2                VecVirtual // eight: not with prev
	pack                                 Mem
	prev                                 bool // the fix slot is hi-1, not hi+8
}

// block decodes the 32 characters at s into v: bytes 0..11 of each lane
// hold its 12 output bytes. It jumps to fail when a character is outside
// the alphabet (a VPTEST of the two class lookups, no AND and OR of them).
func (k *avx2DecodeConsts) block(s Mem, fail string) (v VecVirtual) {
	in, hi, lo, cls := YMM(), YMM(), YMM(), YMM()
	VMOVDQU(s, in)
	VPSRLD(U8(4), in, hi)
	VPAND(k.nib, hi, hi)
	VPAND(k.nib, in, lo)
	VPSHUFB(lo, k.lo, lo)
	VPSHUFB(hi, k.hi, cls)
	VPTEST(lo, cls)
	JNZ(LabelRef(fail))
	VPCMPEQB(k.fix, in, lo)
	if !k.prev {
		VPAND(k.eight, lo, lo)
	}
	VPADDB(lo, hi, hi)
	VPSHUFB(hi, k.roll, hi)
	VPADDB(hi, in, in)
	VPMADDUBSW(k.merge1, in, in)
	VPMADDWD(k.merge2, in, in)
	VPSHUFB(k.pack, in, in)
	return in
}

// pair decodes the two blocks at s into the 48 bytes at d, or jumps to
// fail, having stored nothing, when either holds a bad character. With
// ntStore it writes three 16-byte non-temporal stores.
func (k *avx2DecodeConsts) pair(s, d Mem, fail string, ntStore bool) {
	a := k.block(s, fail)
	b := k.block(s.Offset(32), fail)
	if !ntStore {
		// Block A's lanes go out as two 16-byte stores, 12 bytes apart;
		// the second one's 4 bytes of zeros past A land on B's first
		// bytes, which B's stores write afterwards. B's 24 bytes need
		// exact stores: bytes 0..15 from its lower lane and 8..23 from its
		// upper one, after one VPERMD (decodePermSplit).
		VMOVDQU(a.AsX(), d)
		VEXTRACTI128(U8(1), a, d.Offset(12))
		VPERMD(b, k.permB, b)
		VMOVDQU(b.AsX(), d.Offset(24))
		VEXTRACTI128(U8(1), b, d.Offset(32))
		return
	}
	VPERMD(a, k.permA, a)
	VPERMD(b, k.permB, b)
	VPBLENDD(U8(0xC0), b, a, a) // dwords 6, 7 from b
	VMOVNTDQ(a.AsX(), d)
	VEXTRACTI128(U8(1), a, a.AsX())
	VMOVNTDQ(a.AsX(), d.Offset(16))
	VMOVNTDQ(b.AsX(), d.Offset(32))
}

// decodePackAVX2 is the VPSHUFB control that packs the 24-bit dword values
// of each lane into its bytes 0..11 (bytes 2, 1, 0 of each dword); bytes
// 12..15 of each lane are zeroed.
func decodePackAVX2() Mem {
	return constant("decodePackAVX2", func() Mem {
		m := GLOBL("decodePackAVX2", RODATA|NOPTR)
		for lane := 0; lane < 2; lane++ {
			for x := 0; x < 16; x++ {
				v := 0x80
				if x < 12 {
					v = packIndex(x)
				}
				DATA(16*lane+x, U8(v))
			}
		}
		return m
	})
}

// dwordConst is a data symbol holding the dwords v.
func dwordConst(name string, v []uint32) Mem {
	return constant(name, func() Mem {
		m := GLOBL(name, RODATA|NOPTR)
		for i, x := range v {
			DATA(4*i, U32(x))
		}
		return m
	})
}
