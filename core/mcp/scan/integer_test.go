package scan

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// FuzzInteger: Integer accepts exactly the JSON numbers that are
// integers in [min, max], whatever their notation, and returns their value;
// nothing out of range wraps around into it.
func FuzzInteger(f *testing.F) {
	for _, s := range []string{"60", "6e1", "60.0", "-0", "9300000000", "1e18", "99999999999999999999", "1.5", `"60"`, "0x10", "1e", "-", "9223372036854775807", "-9223372036854775808", "10e-10000001", "0e99999999"} {
		f.Add(s, int64(1), int64(86400))
	}
	f.Fuzz(func(t *testing.T, s string, lo, hi int64) {
		n, ok := Integer(json.RawMessage(s), lo, hi)
		if hugeExponent(s) {
			// big.Rat would build 10^|e| (10e-10000001 takes minutes);
			// only a zero mantissa can make such a number an int64.
			if ok && n != 0 {
				t.Fatalf("Integer(%q) = %d", s, n)
			}
			return
		}
		var want big.Rat
		_, isNum := want.SetString(s)
		isNum = isNum && json.Valid([]byte(s)) && s != "" && (s[0] == '-' || '0' <= s[0] && s[0] <= '9')
		wantOK := isNum && want.IsInt() && want.Num().IsInt64() && want.Num().Int64() >= lo && want.Num().Int64() <= hi
		if ok != wantOK || (ok && n != want.Num().Int64()) {
			t.Fatalf("Integer(%q, %d, %d) = %d, %v; want %v, %v", s, lo, hi, n, ok, want.RatString(), wantOK)
		}
	})
}

// hugeExponent reports whether the number s has an exponent beyond ±10000.
func hugeExponent(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 || !json.Valid([]byte(s)) || s[0] == '"' {
		return false
	}
	e, err := strconv.Atoi(strings.TrimLeft(s[i+1:], "+"))
	return err != nil || e > 10000 || e < -10000
}
