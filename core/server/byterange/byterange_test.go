package byterange

import (
	"math"
	"testing"
)

// selectCases are Select's answers on a 100-byte representation unless
// size says otherwise; the cases at RFC 9110's edges (huge positions, case,
// signs, spaces) come first.
var selectCases = []struct {
	field   string
	size    int64
	outcome Outcome
	off, n  int64
}{
	{"bytes=0-99999999999999999999", 100, Partial, 0, 100},
	{"bytes=99999999999999999999-", 100, Unsatisfiable, 0, 0},
	{"BYTES=1-5", 100, Partial, 1, 5},
	{"Bytes=1-5", 100, Partial, 1, 5},
	{"bytes=+5-10", 100, Ignore, 0, 0},
	{"bytes=5-+10", 100, Ignore, 0, 0},
	{"bytes=-+5", 100, Ignore, 0, 0},
	{"bytes=0-9", 100, Partial, 0, 10},
	{"bytes=90-", 100, Partial, 90, 10},
	{"bytes=95-200", 100, Partial, 95, 5},
	{"bytes=-10", 100, Partial, 90, 10},
	{"bytes=-500", 100, Partial, 0, 100},
	{"bytes=-99999999999999999999", 100, Partial, 0, 100},
	{"bytes=-0", 100, Unsatisfiable, 0, 0},
	{"bytes=100-", 100, Unsatisfiable, 0, 0},
	{"bytes=100-200", 100, Unsatisfiable, 0, 0},
	{"bytes=0000000000000000000000005-6", 100, Partial, 5, 2},
	{" bytes=1-1 ", 100, Partial, 1, 1},
	{"bytes=5-4", 100, Ignore, 0, 0},
	{"bytes=99999999999999999999-99999999999999999998", 100, Ignore, 0, 0}, // last < first, beyond int64
	{"bytes=99999999999999999998-99999999999999999999", 100, Unsatisfiable, 0, 0},
	{"bytes=a-b", 100, Ignore, 0, 0},
	{"bytes=-", 100, Ignore, 0, 0},
	{"bytes=", 100, Ignore, 0, 0},
	{"bytes", 100, Ignore, 0, 0},
	{"", 100, Ignore, 0, 0},
	{"items=0-1", 100, Ignore, 0, 0},
	{"byteſ=0-1", 100, Ignore, 0, 0}, // U+017F folds to 's' in Unicode, not in ASCII
	{"bytes =0-1", 100, Ignore, 0, 0},
	{"bytes= 0-1", 100, Ignore, 0, 0},
	{"bytes=0 -1", 100, Ignore, 0, 0},
	{"bytes=0- 1", 100, Ignore, 0, 0},
	{"bytes=-1-2", 100, Ignore, 0, 0},
	{"bytes=0-1\r", 100, Ignore, 0, 0},
	{"bytes=0x10-20", 100, Ignore, 0, 0},
	{"bytes=١-٢", 100, Ignore, 0, 0}, // Arabic-Indic digits are not DIGIT
	// Lists: empty elements are skipped; OWS around commas.
	{"bytes=,0-4", 100, Partial, 0, 5},
	{"bytes=, ,\t0-4 ,", 100, Partial, 0, 5},
	{"bytes=,", 100, Ignore, 0, 0},
	{"bytes=0-4,x", 100, Ignore, 0, 0},
	// Several ranges: coalesced when they overlap or touch, else ignored.
	{"bytes=0-4, 5-9", 100, Partial, 0, 10},
	{"bytes=5-9,0-6", 100, Partial, 0, 10},
	{"bytes=0-0,5-6", 100, Ignore, 0, 0},
	{"bytes=-10,95-", 100, Partial, 90, 10},
	{"bytes=200-,0-1", 100, Partial, 0, 2},
	{"bytes=200-,300-", 100, Unsatisfiable, 0, 0},
	{"bytes=200-,-0", 100, Unsatisfiable, 0, 0},
	// An empty representation.
	{"bytes=0-", 0, Unsatisfiable, 0, 0},
	{"bytes=-5", 0, Ignore, 0, 0},
	{"bytes=-0", 0, Unsatisfiable, 0, 0},
	// The longest representation.
	{"bytes=9223372036854775806-", math.MaxInt64, Partial, math.MaxInt64 - 1, 1},
	{"bytes=9223372036854775807-", math.MaxInt64, Unsatisfiable, 0, 0},
	{"bytes=0-", math.MaxInt64, Partial, 0, math.MaxInt64},
}

func TestSelect(t *testing.T) {
	for _, tc := range selectCases {
		r, o := Select(tc.field, tc.size)
		want := Range{tc.off, tc.n}
		if o != tc.outcome || o == Partial && r != want {
			t.Errorf("Select(%q, %d) = %+v %v, want %+v %v", tc.field, tc.size, r, o, want, tc.outcome)
		}
	}
}

func TestParse(t *testing.T) {
	specs, ok := Parse("bytes=0-4, -7,10-,99999999999999999999-")
	want := []Spec{{First: 0, Last: 4}, {Suffix: true, Length: 7}, {First: 10, Last: -1}, {First: math.MaxInt64, Last: -1}}
	if !ok || len(specs) != len(want) {
		t.Fatalf("Parse: %+v %v", specs, ok)
	}
	for i := range want {
		if specs[i] != want[i] {
			t.Errorf("spec %d: %+v, want %+v", i, specs[i], want[i])
		}
	}
	if specs, ok := Parse("bytes=0-4,+1-2"); ok || len(specs) != 0 {
		t.Errorf("Parse of an invalid set: %+v %v", specs, ok)
	}
}
