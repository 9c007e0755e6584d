package byterange

import (
	"slices"
	"strings"
)

// Parse parses a Range field value with the bytes unit into its
// range-specs, in the order given. ok is false for a field that is not a
// valid bytes ranges-specifier (RFC 9110 §14.1.1, §14.1.2): another unit,
// bad syntax, or an int-range whose last-pos is below its first-pos.
func Parse(field string) (specs []Spec, ok bool) {
	return appendSpecs(nil, field)
}

// appendSpecs is Parse appending to dst.
func appendSpecs(dst []Spec, field string) ([]Spec, bool) {
	field = strings.Trim(field, " \t") // field-value OWS (RFC 9110 §5.5)
	unit, set, found := strings.Cut(field, "=")
	if !found || !equalFoldASCII(unit, "bytes") {
		return dst, false
	}
	// 1#range-spec, read as RFC 9110 §5.6.1.2 asks of recipients:
	// *( "," OWS ) range-spec *( OWS "," [ OWS range-spec ] ). So no
	// whitespace right after "=", any around a comma, and empty elements
	// are skipped; at least one range-spec is required.
	if set == "" || set[0] == ' ' || set[0] == '\t' {
		return dst, false
	}
	n := len(dst)
	for part := range strings.SplitSeq(set, ",") {
		part = strings.Trim(part, " \t")
		if part == "" {
			continue
		}
		s, ok := parseSpec(part)
		if !ok {
			return dst[:n], false
		}
		dst = append(dst, s)
	}
	return dst, len(dst) > n
}

// parseSpec parses one int-range ("first-[last]") or suffix-range
// ("-length").
func parseSpec(s string) (Spec, bool) {
	first, last, ok := strings.Cut(s, "-")
	switch {
	case !ok || !isDigits(last) && last != "":
		return Spec{}, false
	case first == "":
		if last == "" {
			return Spec{}, false
		}
		return Spec{Suffix: true, Length: saturate(last)}, true
	case !isDigits(first):
		return Spec{}, false
	case last == "":
		return Spec{First: saturate(first), Last: -1}, true
	case compareDecimal(last, first) < 0:
		return Spec{}, false // "an int-range is invalid if the last-pos value is ... less than the first-pos"
	}
	return Spec{First: saturate(first), Last: saturate(last)}, true
}

// equalFoldASCII compares a token with a lower-case ASCII word, ignoring
// ASCII case only: strings.EqualFold would also take "byteſ" (U+017F
// folds to 's'), which is no token.
func equalFoldASCII(tok, lower string) bool {
	if len(tok) != len(lower) {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// isDigits reports whether s is 1*DIGIT.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// compareDecimal compares two runs of digits by value, at any length.
func compareDecimal(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// Select evaluates a Range field value against a representation of size
// bytes and says how to answer (see the package documentation): the whole
// representation, one range of it, or 416. An empty field is ignored.
func Select(field string, size int64) (Range, Outcome) {
	var specBuf [4]Spec
	specs, ok := appendSpecs(specBuf[:0], field)
	if !ok {
		return Range{}, Ignore
	}
	var buf [4]Range
	rs := buf[:0]
	whole := false
	for _, s := range specs {
		if r, ok := s.Resolve(size); ok {
			rs = append(rs, r)
		} else if s.Suffix && s.Length > 0 {
			whole = true // a suffix of an empty representation: all of it
		}
	}
	switch {
	case len(rs) == 0 && whole:
		return Range{}, Ignore
	case len(rs) == 0:
		return Range{}, Unsatisfiable
	}
	if r, one := coalesce(rs); one {
		return r, Partial
	}
	return Range{}, Ignore
}

// coalesce merges ranges that overlap or touch; one reports whether a
// single range remains, and r is it.
func coalesce(rs []Range) (r Range, one bool) {
	if len(rs) > 1 {
		slices.SortFunc(rs, func(a, b Range) int {
			switch {
			case a.Offset < b.Offset:
				return -1
			case a.Offset > b.Offset:
				return 1
			}
			return 0
		})
	}
	r = rs[0]
	for _, next := range rs[1:] {
		end := r.Offset + r.Length // no overflow: both ends are within size
		if next.Offset > end {
			return Range{}, false
		}
		r.Length = max(end, next.Offset+next.Length) - r.Offset
	}
	return r, true
}
