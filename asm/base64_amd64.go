//go:build !purego

package asm

import (
	"unsafe"

	"github.com/klauspost/cpuid/v2"

	"github.com/mcpblob/mcpblob/asm/internal/race"
)

// base64AVX512VBMI switches the AVX-512 VBMI encode and decode kernels
// (registered as "base64"/"avx512vbmi"), base64AVX2 the AVX2 ones
// ("base64"/"avx2"), which serve the alphabets NewAlphabet made an AVX2
// table for.
var (
	base64AVX512VBMI = useAVX512VBMI
	base64AVX2       = useAVX2
)

func init() {
	Register("base64", "avx512vbmi", &base64AVX512VBMI)
	Register("base64", "avx2", &base64AVX2)
}

// nonTemporalMin is the smallest working set (len(src)+len(dst) of one call)
// for which the kernels write dst with non-temporal stores: three quarters
// of the last-level cache (glibc's memcpy rule), 24 MiB when cpuid does not
// know its size. Such a call evicts its own output from the cache anyway, and
// skipping the read-for-ownership of dst makes it about 1.2x faster from RAM.
// The AVX2 kernels follow the same rule.
// Tests lower it to run the non-temporal kernels on small inputs.
var nonTemporalMin = nonTemporalThreshold()

// prefetchMin is the smallest working set for which the kernels run their
// pf variants, which prefetch src and dst 2 KiB ahead: the L2 size (1 MiB
// when cpuid does not know it). Beyond L2 the lines come from L3 or memory
// and prefetching was about 1.1x faster (AVX-512 at 1 MiB; AVX2 1.2-1.3x at
// 64 MiB); within L2 it cost 3-6%. Tests lower it to run the pf kernels.
var prefetchMin = prefetchThreshold()

func prefetchThreshold() int {
	if l2 := cpuid.CPU.Cache.L2; l2 > 0 {
		return l2
	}
	return 1 << 20
}

// The kernel variants, chosen by the working set of a call (kernelFor).
const (
	plainKernel    = iota // plain stores, no prefetching
	prefetchKernel        // the pf kernels: prefetchMin <= working set
	ntKernel              // the non-temporal kernels: nonTemporalMin <= working set
)

// kernelFor picks the kernel variant for a call whose working set is
// len(src)+len(dst) = ws bytes: non-temporal from nonTemporalMin on (it
// wins over prefetching when both thresholds are met), prefetching from
// prefetchMin on, plain below both.
func kernelFor(ws int) int {
	switch {
	case ws >= nonTemporalMin:
		return ntKernel
	case ws >= prefetchMin:
		return prefetchKernel
	}
	return plainKernel
}

func nonTemporalThreshold() int {
	if l3 := cpuid.CPU.Cache.L3; l3 > 0 {
		return l3 / 4 * 3
	}
	return 24 << 20
}

func base64Tier() string {
	switch {
	case base64AVX512VBMI:
		return "avx512vbmi"
	case base64AVX2:
		return "avx2"
	}
	return "generic"
}

func (a *Alphabet) tier() string {
	if t := base64Tier(); t != "avx2" || a.avx2OK {
		return t
	}
	return "generic"
}

// encodeBase64 requires len(src)%3 == 0 and len(dst) == len(src)/3*4.
func encodeBase64(dst, src []byte, a *Alphabet) {
	if base64AVX512VBMI && len(src) >= 48 {
		// The kernels may read all of src and write all of dst (the
		// non-temporal one aligns dst with a partial block first).
		race.ReadSlice(src)
		race.WriteSlice(dst)
		var n int
		switch kernelFor(len(src) + len(dst)) {
		case ntKernel:
			n = encodeBase64AVX512VBMINT(dst, src, &a.Encode)
		case prefetchKernel:
			n = encodeBase64AVX512VBMIPF(dst, src, &a.Encode)
		default:
			n = encodeBase64AVX512VBMI(dst, src, &a.Encode)
		}
		src, dst = src[n:], dst[n/3*4:]
	} else if base64AVX2 && a.avx2OK && len(src) >= 24 {
		race.ReadSlice(src)
		race.WriteSlice(dst)
		n := encodeAVX2(dst, src, a)
		src, dst = src[n:], dst[n/3*4:]
	}
	encodeBase64Generic(dst, src, a)
}

// decodeBase64 requires len(src)%4 == 0 and len(dst) == len(src)/4*3.
func decodeBase64(dst, src []byte, a *Alphabet) (nsrc, ndst int) {
	if base64AVX512VBMI && len(src) >= 64 {
		race.ReadSlice(src)
		race.WriteSlice(dst)
		switch kernelFor(len(src) + len(dst)) {
		case ntKernel:
			nsrc = decodeBase64AVX512VBMINT(dst, src, &a.decodeLUT)
		case prefetchKernel:
			nsrc = decodeBase64AVX512VBMIPF(dst, src, &a.decodeLUT)
		default:
			nsrc = decodeBase64AVX512VBMI(dst, src, &a.decodeLUT)
		}
		ndst = nsrc / 4 * 3
	} else if base64AVX2 && a.avx2OK && len(src) >= 32 {
		race.ReadSlice(src)
		race.WriteSlice(dst)
		nsrc = decodeAVX2(dst, src, a)
		ndst = nsrc / 4 * 3
	}
	s, d := decodeBase64Generic(dst[ndst:], src[nsrc:], a)
	return nsrc + s, ndst + d
}

// encodeAVX2 runs the AVX2 encoder variant kernelFor picks and returns the
// src bytes consumed. The non-temporal one needs dst 4-byte aligned (the
// prefetching one runs otherwise): it encodes up to 7 groups in Go to align
// dst to 32 bytes first.
func encodeAVX2(dst, src []byte, a *Alphabet) int {
	addr := uintptr(unsafe.Pointer(&dst[0]))
	kind := kernelFor(len(src) + len(dst))
	if kind == ntKernel && addr%4 != 0 {
		kind = prefetchKernel
	}
	switch kind {
	case plainKernel:
		return encodeBase64AVX2(dst, src, &a.avx2)
	case prefetchKernel:
		return encodeBase64AVX2PF(dst, src, &a.avx2)
	}
	g := min(int(-addr%32/4), len(src)/3) // groups that align dst
	encodeBase64Generic(dst[:g*4], src[:g*3], a)
	return g*3 + encodeBase64AVX2NT(dst[g*4:], src[g*3:], &a.avx2)
}

// decodeAVX2 runs the AVX2 decoder variant kernelFor picks and returns the
// src characters consumed. Before the non-temporal one it decodes up to 15
// quanta in Go to align dst to 16 bytes.
func decodeAVX2(dst, src []byte, a *Alphabet) int {
	kernel, kernelPF, kernelNT := decodeBase64AVX2, decodeBase64AVX2PF, decodeBase64AVX2NT
	if a.avx2Prev {
		kernel, kernelPF, kernelNT = decodeBase64AVX2Prev, decodeBase64AVX2PrevPF, decodeBase64AVX2PrevNT
	}
	switch kernelFor(len(src) + len(dst)) {
	case plainKernel:
		return kernel(dst, src, &a.avx2)
	case prefetchKernel:
		return kernelPF(dst, src, &a.avx2)
	}
	// 3q ≡ -addr (mod 16); 11 is the inverse of 3 mod 16.
	q := min(int(-uintptr(unsafe.Pointer(&dst[0]))%16*11%16), len(src)/4)
	if s, _ := decodeBase64Generic(dst[:q*3], src[:q*4], a); s < q*4 {
		return s // a bad quantum: the caller's generic code stops there too
	}
	return q*4 + kernelNT(dst[q*3:], src[q*4:], &a.avx2)
}
