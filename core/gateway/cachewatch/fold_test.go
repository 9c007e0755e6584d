package cachewatch

import "testing"

// containsFold finds a key in any case, at the start, the end or after
// near misses, and nothing that is only a prefix of it.
func TestContainsFold(t *testing.T) {
	for _, tc := range []struct {
		b, lower string
		want     bool
	}{
		{`{"LastModified":1}`, "lastmodified", true},
		{`xx lastmodifie lASTMODIFIED`, "lastmodified", true},
		{`lastmodifie`, "lastmodified", false},
		{`llllastmodified`, "lastmodified", true},
		{`{"_META":{}}`, "_meta", true},
		{`_met _mEtA`, "_meta", true},
		{`_met`, "_meta", false},
		{``, "_meta", false},
	} {
		if got := containsFold([]byte(tc.b), tc.lower); got != tc.want {
			t.Errorf("containsFold(%q, %q) = %v, want %v", tc.b, tc.lower, got, tc.want)
		}
	}
}
