package cachewatch

import "testing"

// mayHoldVersion finds a key lastModified or _meta in any case (as
// encoding/json matches keys, Unicode folding included), or any escape;
// not a string that only holds the name, nor a prefix of it.
func TestMayHoldVersion(t *testing.T) {
	for _, tc := range []struct {
		b    string
		want bool
	}{
		{`{"LastModified":1}`, true},
		{`{"a":"xx","lASTMODIFIED":"x"}`, true},
		{`{"lastmodifie":1}`, false},
		{`{"blob":"lastmodified lastModified"}`, false},
		{`{"laſtModified":1}`, true},
		{`{"_META":{}}`, true},
		{`{"_met":{},"x":"_meta_"}`, false},
		{`{"x":"a\"_meta\""}`, true},
		{`{"unterminated`, false},
		{``, false},
	} {
		if got := mayHoldVersion([]byte(tc.b)); got != tc.want {
			t.Errorf("mayHoldVersion(%q) = %v, want %v", tc.b, got, tc.want)
		}
	}
}
