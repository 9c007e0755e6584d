package asm

import "strings"

// The AVX2 kernels handle the alphabets made of A-Z, a-z, 0-9 (in that
// order, values 0..61) and two more ASCII characters, as RFC 4648's standard
// and URL alphabets are: their encoder adds an offset per range of values
// and their decoder classifies characters by nibbles, which a free-form
// alphabet does not allow. avx2Table builds their 80-byte table, laid out as
// asm/_gen/base64/avx2.go reads it:
//
//	[0:16]  encoder: the offset added to a 6-bit value, by class: 0 for
//	        0..25, 1 for 26..51, 2..11 for 52..61, 12 for 62, 13 for 63
//	[16:32] decoder: class bits by low nibble
//	[32:48] decoder: class bits by high nibble; a character is outside the
//	        alphabet when its two nibbles' bits meet
//	[48:64] decoder: the offset added to a character, by high nibble; slot
//	        its high nibble - 1 (prev) or + 8 for the fix character
//	[64]    decoder: the fix character
const avx2Prefix = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// avx2Table fills t for chars and reports whether the AVX2 kernels can use
// it (false leaves t partly filled, and unused), and whether the fix
// character's slot is the one of the row before its own (prev: the
// decodeBase64AVX2Prev kernels) rather than 8 rows after.
func avx2Table(t *[80]byte, chars string) (ok, prev bool) {
	c62, c63 := chars[62], chars[63]
	if chars[:62] != avx2Prefix || c62 >= 0x80 || c63 >= 0x80 || c62 == c63 ||
		strings.IndexByte(avx2Prefix, c62) >= 0 || strings.IndexByte(avx2Prefix, c63) >= 0 {
		return false, false
	}
	t[0] = 'A'
	t[1] = 'a' - 26
	for i := 2; i < 12; i++ {
		t[i] = '0' - 52 + 256
	}
	t[12] = c62 - 62
	t[13] = c63 - 63
	if !avx2Classes(t[16:32], t[32:48], chars) {
		return false, false
	}
	for _, prev := range []bool{true, false} {
		for _, fix := range []byte{c63, c62} {
			if avx2Roll(t[48:64], chars, fix, prev) {
				t[64] = fix
				return true, prev
			}
		}
	}
	return false, false
}

// avx2Classes fills the decoder's nibble tables: rows (high nibbles) with
// the same set of valid low nibbles share a class bit, set in hi for those
// rows and in lo for the low nibbles outside the set. There are at most six
// such sets: the empty rows, 0-9, A-O/a-o, P-Z/p-z, and two rows changed by
// the extra characters; it reports false if there were more than 8.
func avx2Classes(lo, hi []byte, chars string) bool {
	var rows [16]uint16 // valid low nibbles of each row
	for i := 0; i < 64; i++ {
		rows[chars[i]>>4] |= 1 << (chars[i] & 15)
	}
	var sets []uint16
	for r, set := range rows {
		k := 0
		for k < len(sets) && sets[k] != set {
			k++
		}
		if k == len(sets) {
			if k == 8 {
				return false
			}
			sets = append(sets, set)
		}
		hi[r] = 1 << k
		for n := 0; n < 16; n++ {
			if set&(1<<n) == 0 {
				lo[n] |= 1 << k
			}
		}
	}
	return true
}

// avx2Roll fills the decoder's offsets by row, with the character fix looked
// up in the slot of the row before its own (prev) or 8 rows after, and
// reports whether the characters sharing a slot have the same offset.
func avx2Roll(roll []byte, chars string, fix byte, prev bool) bool {
	var set [16]bool
	for i := 0; i < 64; i++ {
		c := chars[i]
		slot := c >> 4
		switch {
		case c == fix && prev:
			slot = (slot - 1) & 15
		case c == fix:
			slot += 8
		}
		off := byte(i) - c
		if set[slot] && roll[slot] != off {
			return false
		}
		roll[slot], set[slot] = off, true
	}
	return true
}
