//go:build purego || !amd64

package asm

func encodeBase64(dst, src []byte, a *Alphabet) { encodeBase64Generic(dst, src, a) }

func decodeBase64(dst, src []byte, a *Alphabet) (nsrc, ndst int) {
	return decodeBase64Generic(dst, src, a)
}

func base64Tier() string { return "generic" }

func (a *Alphabet) tier() string { return "generic" }
