package scan

import (
	"encoding/json"
	"math/big"
	"testing"
)

// FuzzInteger: Integer accepts exactly the JSON numbers that are
// integers in [min, max], whatever their notation, and returns their value;
// nothing out of range wraps around into it.
func FuzzInteger(f *testing.F) {
	for _, s := range []string{"60", "6e1", "60.0", "-0", "9300000000", "1e18", "99999999999999999999", "1.5", `"60"`, "0x10", "1e", "-", "9223372036854775807", "-9223372036854775808"} {
		f.Add(s, int64(1), int64(86400))
	}
	f.Fuzz(func(t *testing.T, s string, lo, hi int64) {
		n, ok := Integer(json.RawMessage(s), lo, hi)
		var want big.Rat
		_, isNum := want.SetString(s)
		isNum = isNum && json.Valid([]byte(s)) && s != "" && (s[0] == '-' || '0' <= s[0] && s[0] <= '9')
		wantOK := isNum && want.IsInt() && want.Num().IsInt64() && want.Num().Int64() >= lo && want.Num().Int64() <= hi
		if ok != wantOK || (ok && n != want.Num().Int64()) {
			t.Fatalf("Integer(%q, %d, %d) = %d, %v; want %v, %v", s, lo, hi, n, ok, want.RatString(), wantOK)
		}
	})
}
