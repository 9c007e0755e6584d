package scan

import (
	"encoding/json"
	"math/big"
)

// Integer reads a JSON number that is an integer (in any notation: 60,
// 6e1, 60.0) within [min, max]; ok is false for anything else, however
// large (a number never wraps around into the range).
func Integer(raw json.RawMessage, min, max int64) (n int64, ok bool) {
	if len(raw) == 0 || !(raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9') || !json.Valid(raw) {
		return 0, false
	}
	f, _, err := big.ParseFloat(string(raw), 10, 256, big.ToNearestEven)
	if err != nil || !f.IsInt() || f.Cmp(new(big.Float).SetInt64(min)) < 0 || f.Cmp(new(big.Float).SetInt64(max)) > 0 {
		return 0, false
	}
	n, _ = f.Int64()
	return n, true
}
