// Package byterange evaluates HTTP Range header fields (RFC 9110 §14) for
// the bytes range unit against a representation of known length.
//
// The grammar is applied exactly: the unit is matched case-insensitively
// ("BYTES=1-5" is valid); positions are 1*DIGIT with no sign, space or
// other character ("bytes=+5-10" is invalid); an int-range whose last-pos
// is below its first-pos is invalid; whitespace may surround the commas of
// the range-set but not the "=" or the parts of a range; empty list
// elements are skipped (RFC 9110 §5.6.1.2). Positions of any length are
// accepted and compared exactly; beyond 2^63-1 they saturate, which cannot
// change the answer, since no representation is that long.
//
// The answer follows RFC 9110 §14.2 and §15.5.17:
//   - a missing or invalid field, or another unit, is ignored ([Ignore]:
//     200 with the whole representation);
//   - a range-set that selects no byte is [Unsatisfiable] (416): every
//     int-range starts at or past the end, every suffix-range is "-0";
//   - otherwise the satisfiable ranges, clipped to the representation,
//     are coalesced where they overlap or touch (§14.2 allows it); when
//     that leaves one range it is served ([Partial], 206). Several
//     disjoint ranges are ignored (200), which §14.2 also allows: no
//     multipart/byteranges answers.
//
// A suffix-range of an empty representation selects "the entire
// representation" (§14.1.2), which a 206 cannot express: such a field is
// ignored.
package byterange

import "math"

// Range is a run of Length bytes starting at Offset.
type Range struct {
	Offset, Length int64
}

// Outcome is how a server answers a Range header field.
type Outcome uint8

// Outcomes of [Select].
const (
	// Ignore: send the whole representation (200).
	Ignore Outcome = iota
	// Partial: send the selected Range (206 with Content-Range).
	Partial
	// Unsatisfiable: send 416 with "Content-Range: bytes */<size>".
	Unsatisfiable
)

// String names the outcome.
func (o Outcome) String() string {
	switch o {
	case Partial:
		return "partial"
	case Unsatisfiable:
		return "unsatisfiable"
	}
	return "ignore"
}

// Spec is one range-spec of a bytes ranges-specifier: an int-range
// "First-Last" (Last is -1 when absent) or, with Suffix set, a
// suffix-range "-Length". Positions saturate at math.MaxInt64.
type Spec struct {
	First, Last int64
	Suffix      bool
	Length      int64
}

// Resolve clips s to a representation of size bytes. ok is false when s
// selects no byte of it.
func (s Spec) Resolve(size int64) (r Range, ok bool) {
	if s.Suffix {
		if s.Length == 0 || size == 0 {
			return Range{}, false
		}
		n := min(s.Length, size)
		return Range{Offset: size - n, Length: n}, true
	}
	if s.First >= size {
		return Range{}, false
	}
	last := size - 1
	if s.Last >= 0 && s.Last < last {
		last = s.Last
	}
	return Range{Offset: s.First, Length: last - s.First + 1}, true
}

// saturate is the value of a non-empty run of ASCII digits, or
// math.MaxInt64 when it is larger.
func saturate(digits string) int64 {
	var v int64
	for i := 0; i < len(digits); i++ {
		d := int64(digits[i] - '0')
		if v > (math.MaxInt64-d)/10 {
			return math.MaxInt64
		}
		v = v*10 + d
	}
	return v
}
