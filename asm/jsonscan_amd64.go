//go:build !purego

package asm

import "github.com/mcpblob/mcpblob/asm/internal/race"

// The switches of the JSON scanning kernels, registered as "jsonscan"/"avx512"
// and "jsonscan"/"avx2".
var (
	jsonScanAVX512 = useAVX512BW
	jsonScanAVX2   = useAVX2
)

func init() {
	Register("jsonscan", "avx512", &jsonScanAVX512)
	Register("jsonscan", "avx2", &jsonScanAVX2)
}

func jsonScanTier() string {
	switch {
	case jsonScanAVX512:
		return "avx512"
	case jsonScanAVX2:
		return "avx2"
	}
	return "generic"
}

func indexJSONSpecial(b []byte) int {
	switch {
	case jsonScanAVX512 && len(b) >= jsonScanMinAVX512:
		race.ReadSlice(b)
		return indexJSONSpecialAVX512(b)
	case jsonScanAVX2 && len(b) >= jsonScanMinAVX2:
		race.ReadSlice(b)
		return indexJSONSpecialAVX2(b)
	}
	return indexJSONSpecialGeneric(b)
}

// Below these lengths the generic code is as fast as a call into assembly
// (measured on Zen 4); the AVX2 kernel needs 16 bytes anyway.
const (
	jsonScanMinAVX512 = 8
	jsonScanMinAVX2   = 16
)
