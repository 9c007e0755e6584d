// Command jsonscan generates the JSON string scanning kernels of package asm:
// ../../jsonscan_amd64.s and the stubs ../../jsonscan_stub_amd64.go.
//
// The Go reference function is indexJSONSpecialGeneric in ../../jsonscan.go;
// the tests in package asm compare every tier with it. The method is the
// usual vectorised byte-class test (as in simdjson's string scanning:
// Langdale and Lemire, "Parsing Gigabytes of JSON per Second", VLDB Journal
// 28(6), 2019): compare a whole vector with each special byte, OR the
// results, and take the index of the lowest set bit.
package main

//go:generate go run . -pkg asm -out ../../jsonscan_amd64.s -stubs ../../jsonscan_stub_amd64.go

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("!purego")
	avx512()
	avx2()
	Generate()
}

// avx512 emits indexJSONSpecialAVX512.
//
// Each compare runs under the mask of the one before, so the three of them
// give the mask of the ordinary bytes with no mask-register ORs; a block has
// a special byte when that mask is not all ones (KORTESTQ clears CF).
//
//	ordinary(v) := VPCMPUB.NLT(v, 0x20) & VPCMPB.NE(v, '"') & VPCMPB.NE(v, '\\')
//	for i+128 <= len(b) {                       // two 64-byte blocks per turn
//		k0, k1 := ordinary(b[i:i+64]), ordinary(b[i+64:i+128])
//		if k0&k1 != all ones { return i + TZCNT(^(k0 != all ones ? k0 : k1)) (+64) }
//		i += 128
//	}
//	if i+64 <= len(b) { one block at i; i += 64 }
//	if i == len(b) { return -1 }
//	if len(b) >= 64 {
//		// the last 64 bytes; the part already scanned holds no match
//		one block at len(b)-64
//	} else {
//		// a masked load w = (1<<len(b))-1 reads only b[0:len(b)] and never
//		// faults past it; the compares run under w too
//		special := ordinary(masked load) ^ w
//		if special != 0 { return TZCNT(special) }
//	}
//	return -1
func avx512() {
	TEXT("indexJSONSpecialAVX512", NOSPLIT, "func(b []byte) int")
	Pragma("noescape")
	Doc(
		"indexJSONSpecialAVX512 returns the index of the first byte of b that is '\"',",
		"'\\\\' or below 0x20, or -1 when there is none. It reads only b (any length,",
		"including 0) and needs AVX-512 F and BW.",
	)
	s := &avx512Scan{scanArgs: loadScanArgs()}
	TESTQ(s.n, s.n)
	JZ(LabelRef("avx512_ret"))
	s.broadcast()
	s.v0, s.v1 = ZMM(), ZMM()
	s.k0, s.k1 = K(), K()
	s.mask = GP64()
	s.blocks()
	s.tail()
	s.found()
}

// avx512Scan holds the registers of indexJSONSpecialAVX512.
// scanArgs are the registers both kernels start from: b's base and
// length, the index i = 0 and the answer ret = -1.
type scanArgs struct{ base, n, i, ret Register }

// loadScanArgs loads b and sets i and ret.
func loadScanArgs() scanArgs {
	a := scanArgs{base: Load(Param("b").Base(), GP64()), n: Load(Param("b").Len(), GP64()), i: GP64()}
	XORQ(a.i, a.i)
	a.ret = GP64()
	MOVQ(I32(-1), a.ret)
	return a
}

type avx512Scan struct {
	scanArgs
	quote, bslash, space VecVirtual // the special bytes, broadcast
	v0, v1               VecVirtual
	k0, k1               OpmaskVirtual
	mask                 Register
}

// broadcast fills quote, bslash and space with their byte.
func (s *avx512Scan) broadcast() {
	s.quote, s.bslash, s.space = ZMM(), ZMM(), ZMM()
	c := GP32()
	MOVL(U32('"'), c)
	VPBROADCASTB(c, s.quote)
	MOVL(U32('\\'), c)
	VPBROADCASTB(c, s.bslash)
	MOVL(U32(0x20), c)
	VPBROADCASTB(c, s.space)
}

// block sets k to the ordinary bytes of the 64 bytes at m, loading them
// into v (under the zeroing mask w when w is not nil): each compare runs
// under the mask of the one before, so k = c >= 0x20 && c != '"' &&
// c != '\\' with no mask-register ORs. All ones means no special byte;
// KORTESTQ sets CF exactly then.
func (s *avx512Scan) block(m Mem, v VecVirtual, k OpmaskVirtual, w Op) {
	if w == nil {
		VMOVDQU64(m, v)
		VPCMPUB(U8(5), s.space, v, k) // v >= 0x20 (not less than), unsigned
	} else {
		VMOVDQU8_Z(m, w, v)
		VPCMPUB(U8(5), s.space, v, w, k)
	}
	VPCMPB(U8(4), s.quote, v, k, k)  // and v != '"'
	VPCMPB(U8(4), s.bslash, v, k, k) // and v != '\\'
}

// blocks emits the loop over two 64-byte blocks per turn, then one block.
func (s *avx512Scan) blocks() {
	Label("avx512_loop2")
	MOVQ(s.n, s.mask)
	SUBQ(s.i, s.mask)
	CMPQ(s.mask, U32(128))
	JB(LabelRef("avx512_one"))
	s.block(Mem{Base: s.base, Index: s.i, Scale: 1}, s.v0, s.k0, nil)
	s.block(Mem{Base: s.base, Index: s.i, Scale: 1, Disp: 64}, s.v1, s.k1, nil)
	both := K()
	KANDQ(s.k0, s.k1, both)
	KORTESTQ(both, both)
	JCC(LabelRef("avx512_found2"))
	ADDQ(U32(128), s.i)
	JMP(LabelRef("avx512_loop2"))

	Label("avx512_one")
	CMPQ(s.mask, U8(64))
	JB(LabelRef("avx512_tail"))
	s.block(Mem{Base: s.base, Index: s.i, Scale: 1}, s.v0, s.k0, nil)
	KORTESTQ(s.k0, s.k0)
	JCC(LabelRef("avx512_found"))
	ADDQ(U8(64), s.i)
}

// tail emits the last 64 bytes, or the masked load of a b shorter than 64.
func (s *avx512Scan) tail() {
	Label("avx512_tail")
	CMPQ(s.i, s.n)
	JE(LabelRef("avx512_done"))
	CMPQ(s.n, U8(64))
	JB(LabelRef("avx512_short"))
	MOVQ(s.n, s.i)
	SUBQ(U8(64), s.i)
	s.block(Mem{Base: s.base, Index: s.i, Scale: 1}, s.v0, s.k0, nil)
	KORTESTQ(s.k0, s.k0)
	JCC(LabelRef("avx512_found"))
	JMP(LabelRef("avx512_done"))

	Label("avx512_short")
	Comment("0 < len(b) < 64: load only b[0:len(b)]")
	w := K()
	MOVQ(I32(-1), s.mask)
	BZHIQ(s.n, s.mask, s.mask)
	KMOVQ(s.mask, w)
	s.block(Mem{Base: s.base}, s.v0, s.k0, w)
	KXORQ(s.k0, w, s.k0) // the special bytes of b: k0 holds the ordinary ones of w
	KORTESTQ(s.k0, s.k0)
	JZ(LabelRef("avx512_done"))
	KMOVQ(s.k0, s.ret)
	TZCNTQ(s.ret, s.ret)
	JMP(LabelRef("avx512_done"))
}

// found emits the index of the first special byte and the return.
func (s *avx512Scan) found() {
	Label("avx512_found2")
	KORTESTQ(s.k0, s.k0)
	JCC(LabelRef("avx512_found"))
	ADDQ(U8(64), s.i)
	KMOVQ(s.k1, s.ret)
	JMP(LabelRef("avx512_index"))

	Label("avx512_found")
	KMOVQ(s.k0, s.ret)
	Label("avx512_index")
	NOTQ(s.ret)
	TZCNTQ(s.ret, s.ret)
	ADDQ(s.i, s.ret)

	Label("avx512_done")
	VZEROUPPER()
	Label("avx512_ret")
	Store(s.ret, ReturnIndex(0))
	RET()
}

// avx2 emits indexJSONSpecialAVX2.
//
// The compare for c < 0x20 uses min(c, 0x1F) == c (AVX2 has no unsigned
// compare); VPMOVMSKB gathers one bit per byte.
//
//	for i+64 <= len(b) {                        // two 32-byte blocks per turn
//		m := movemask(b[i:i+32]) | movemask(b[i+32:i+64])<<32
//		if m != 0 { return i + TZCNT(m) }
//		i += 64
//	}
//	if i+32 <= len(b) { one block at i; i += 32 }
//	if i == len(b) { return -1 }
//	if len(b) >= 32 {
//		one block at len(b)-32               // the overlap holds no match
//	} else {                                 // 16 <= len(b) < 32
//		16-byte blocks at 0 and at len(b)-16
//	}
//	return -1
func avx2() {
	TEXT("indexJSONSpecialAVX2", NOSPLIT, "func(b []byte) int")
	Pragma("noescape")
	Doc(
		"indexJSONSpecialAVX2 returns the index of the first byte of b that is '\"',",
		"'\\\\' or below 0x20, or -1 when there is none. len(b) must be at least 16.",
		"It reads only b and needs AVX2.",
	)
	s := &avx2Scan{scanArgs: loadScanArgs()}
	s.broadcast()
	s.m0, s.m1, s.rest = GP64(), GP64(), GP64()
	s.blocks()
	s.tail()
}

// avx2Scan holds the registers of indexJSONSpecialAVX2.
type avx2Scan struct {
	scanArgs
	quote, bslash, low VecVirtual // '"', '\\' and 0x1F, broadcast
	m0, m1, rest       GPVirtual
}

// broadcast fills quote, bslash and low with their byte.
func (s *avx2Scan) broadcast() {
	s.quote, s.bslash, s.low = YMM(), YMM(), YMM()
	c := GP32()
	MOVL(U32('"'), c)
	MOVD(c, s.quote.AsX())
	VPBROADCASTB(s.quote.AsX(), s.quote)
	MOVL(U32('\\'), c)
	MOVD(c, s.bslash.AsX())
	VPBROADCASTB(s.bslash.AsX(), s.bslash)
	MOVL(U32(0x1F), c)
	MOVD(c, s.low.AsX())
	VPBROADCASTB(s.low.AsX(), s.low)
}

// block sets the 32-bit (16-bit for xmm) mask r of the special bytes at m.
func (s *avx2Scan) block(m Mem, r GPVirtual, xmm bool) {
	v, t1, t2 := YMM(), YMM(), YMM()
	q, b, l := Op(s.quote), Op(s.bslash), Op(s.low)
	var vv, tt1, tt2 Op = v, t1, t2
	if xmm {
		q, b, l = s.quote.AsX(), s.bslash.AsX(), s.low.AsX()
		vv, tt1, tt2 = v.AsX(), t1.AsX(), t2.AsX()
	}
	VMOVDQU(m, vv)
	VPCMPEQB(vv, q, tt1)
	VPCMPEQB(vv, b, tt2)
	VPOR(tt1, tt2, tt1)
	VPMINUB(vv, l, tt2)
	VPCMPEQB(vv, tt2, tt2) // c <= 0x1F
	VPOR(tt1, tt2, tt1)
	VPMOVMSKB(tt1, r.As32())
}

// blocks emits the loop over two 32-byte blocks per turn, then one block.
func (s *avx2Scan) blocks() {
	Label("avx2_loop2")
	MOVQ(s.n, s.rest)
	SUBQ(s.i, s.rest)
	CMPQ(s.rest, U8(64))
	JB(LabelRef("avx2_one"))
	s.block(Mem{Base: s.base, Index: s.i, Scale: 1}, s.m0, false)
	s.block(Mem{Base: s.base, Index: s.i, Scale: 1, Disp: 32}, s.m1, false)
	SHLQ(U8(32), s.m1)
	ORQ(s.m1, s.m0)
	JNZ(LabelRef("avx2_found"))
	ADDQ(U8(64), s.i)
	JMP(LabelRef("avx2_loop2"))

	Label("avx2_one")
	CMPQ(s.rest, U8(32))
	JB(LabelRef("avx2_tail"))
	s.block(Mem{Base: s.base, Index: s.i, Scale: 1}, s.m0, false)
	TESTQ(s.m0, s.m0)
	JNZ(LabelRef("avx2_found"))
	ADDQ(U8(32), s.i)
}

// tail emits the last 32 bytes, or two 16-byte blocks for a b shorter
// than 32, then the index of the first special byte and the return.
func (s *avx2Scan) tail() {
	Label("avx2_tail")
	CMPQ(s.i, s.n)
	JE(LabelRef("avx2_done"))
	CMPQ(s.n, U8(32))
	JB(LabelRef("avx2_short"))
	MOVQ(s.n, s.i)
	SUBQ(U8(32), s.i)
	s.block(Mem{Base: s.base, Index: s.i, Scale: 1}, s.m0, false)
	TESTQ(s.m0, s.m0)
	JNZ(LabelRef("avx2_found"))
	JMP(LabelRef("avx2_done"))

	Label("avx2_short")
	Comment("16 <= len(b) < 32: b[0:16] and b[len(b)-16:]")
	s.block(Mem{Base: s.base}, s.m0, true)
	TESTQ(s.m0, s.m0)
	JNZ(LabelRef("avx2_found"))
	MOVQ(s.n, s.i)
	SUBQ(U8(16), s.i)
	s.block(Mem{Base: s.base, Index: s.i, Scale: 1}, s.m0, true)
	TESTQ(s.m0, s.m0)
	JZ(LabelRef("avx2_done"))

	Label("avx2_found")
	TZCNTQ(s.m0, s.ret)
	ADDQ(s.i, s.ret)

	Label("avx2_done")
	VZEROUPPER()
	Store(s.ret, ReturnIndex(0))
	RET()
}
