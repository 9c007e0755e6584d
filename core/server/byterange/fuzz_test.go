package byterange

import (
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fieldRE is RFC 9110's ranges-specifier for the bytes unit, with the
// recipient's list rule of §5.6.1.2 and the field value's surrounding OWS:
// an oracle written independently of Parse.
var fieldRE = regexp.MustCompile(`^[ \t]*[bB][yY][tT][eE][sS]=(?:,[ \t]*)*(` + specRE + `)(?:[ \t]*,(?:[ \t]*(?:` + specRE + `))?)*[ \t]*$`)

const specRE = `[0-9]+-[0-9]*|-[0-9]+`

var specOnlyRE = regexp.MustCompile(specRE)

// oracle answers like Select, with arbitrary-precision positions; valid
// reports whether Parse must accept the field.
func oracle(field string, size int64) (r Range, o Outcome, valid bool) {
	if !fieldRE.MatchString(field) {
		return Range{}, Ignore, false
	}
	_, set, _ := strings.Cut(field, "=")
	n := new(big.Int).SetInt64(size)
	type span struct{ lo, hi *big.Int } // [lo, hi)
	var spans []span
	whole := false
	for _, spec := range specOnlyRE.FindAllString(set, -1) {
		first, last, _ := strings.Cut(spec, "-")
		if first == "" {
			l, _ := new(big.Int).SetString(last, 10)
			switch {
			case l.Sign() > 0 && size == 0:
				whole = true
			case l.Sign() > 0:
				lo := new(big.Int).Sub(n, l)
				if lo.Sign() < 0 {
					lo.SetInt64(0)
				}
				spans = append(spans, span{lo, n})
			}
			continue
		}
		f, _ := new(big.Int).SetString(first, 10)
		hi := new(big.Int).Set(n)
		if last != "" {
			l, _ := new(big.Int).SetString(last, 10)
			if l.Cmp(f) < 0 {
				return Range{}, Ignore, false // an invalid int-range invalidates the field
			}
			if l.Cmp(n) < 0 {
				hi = l.Add(l, big.NewInt(1))
			}
		}
		if f.Cmp(n) < 0 {
			spans = append(spans, span{f, hi})
		}
	}
	if len(spans) == 0 {
		if whole {
			return Range{}, Ignore, true
		}
		return Range{}, Unsatisfiable, true
	}
	slices.SortFunc(spans, func(a, b span) int { return a.lo.Cmp(b.lo) })
	cur := spans[0]
	for _, s := range spans[1:] {
		if s.lo.Cmp(cur.hi) > 0 {
			return Range{}, Ignore, true
		}
		if s.hi.Cmp(cur.hi) > 0 {
			cur.hi = s.hi
		}
	}
	return Range{cur.lo.Int64(), new(big.Int).Sub(cur.hi, cur.lo).Int64()}, Partial, true
}

// FuzzSelect compares Select with the oracle and checks that a partial
// answer lies within the representation and that Parse's specs format
// back to a field that parses the same. Seeds: the table of TestSelect and
// testdata/fuzz/FuzzSelect.
func FuzzSelect(f *testing.F) {
	for _, tc := range selectCases {
		f.Add(tc.field, tc.size)
	}
	f.Fuzz(func(t *testing.T, field string, size int64) {
		if size < 0 {
			size = -(size + 1)
		}
		r, o := Select(field, size)
		wr, wo, valid := oracle(field, size)
		if o != wo || o == Partial && r != wr {
			t.Fatalf("Select(%q, %d) = %+v %v; oracle %+v %v", field, size, r, o, wr, wo)
		}
		if o == Partial && (r.Offset < 0 || r.Length < 1 || r.Length > size-r.Offset) {
			t.Fatalf("Select(%q, %d) = %+v: outside the representation", field, size, r)
		}
		specs, ok := Parse(field)
		if ok != valid {
			t.Fatalf("Parse(%q) ok = %v", field, ok)
		}
		if !ok {
			return
		}
		again, ok := Parse("bytes=" + format(specs))
		if !ok || !slices.Equal(again, specs) {
			t.Fatalf("Parse(%q) = %+v, formatted and parsed again %+v", field, specs, again)
		}
	})
}

// format writes specs as a range-set.
func format(specs []Spec) string {
	parts := make([]string, len(specs))
	for i, s := range specs {
		switch {
		case s.Suffix:
			parts[i] = "-" + strconv.FormatInt(s.Length, 10)
		case s.Last < 0:
			parts[i] = strconv.FormatInt(s.First, 10) + "-"
		default:
			parts[i] = strconv.FormatInt(s.First, 10) + "-" + strconv.FormatInt(s.Last, 10)
		}
	}
	return strings.Join(parts, ",")
}
