package asm

import (
	"encoding/binary"
	"math/bits"
)

// IndexJSONSpecial returns the index of the first byte of b that is '"', '\\'
// or below 0x20 (the bytes a JSON string body must escape, or that end it),
// or -1 when there is none. It never reads outside b.
func IndexJSONSpecial(b []byte) int { return indexJSONSpecial(b) }

// JSONScanTier names the JSON scanning kernel tier in use: "avx512", "avx2"
// or "generic". It reflects [Select] and the start-up knobs (see [Features]).
func JSONScanTier() string { return jsonScanTier() }

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// indexJSONSpecialGeneric is the reference for every JSON scanning tier. It
// tests eight bytes at a time (SWAR): for a word x, (x - 0x20*ones) &^ x has
// the high bit of a byte set for bytes below 0x20, and the same on x^'"' and
// x^'\\' finds those bytes. A borrow can only mark bytes above (later than) a
// true match, so the lowest marked byte is the first match.
func indexJSONSpecialGeneric(b []byte) int {
	i := 0
	for ; len(b)-i >= 8; i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ '"'*swarOnes
		s := x ^ '\\'*swarOnes
		m := ((x - 0x20*swarOnes) &^ x) | ((q - swarOnes) &^ q) | ((s - swarOnes) &^ s)
		if m &= swarHigh; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return -1
}
