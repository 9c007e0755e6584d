package pair

import (
	"fmt"
	"slices"
)

// Runs is one ratio measured side by side over several runs: Ours[i] and
// Ref[i] come from the same run i. Want is the ratio the target asks for.
// When Lower is set, smaller figures are better (ms per page, µs of CPU per
// request) and the ratio is Ref/Ours turned around so that a ratio ≥ Want
// still means met; see Ratio.
type Runs struct {
	Label   string    // e.g. "resources/read 256 MiB ÷ nginx sendfile"
	Unit    string    // unit of Ours and Ref: "MB/s", "µs/request", "ms/page"
	Ours    []float64 // mcpblob's figure per run
	Ref     []float64 // the reference's figure per run
	RefName string    // the reference system: "nginx", "SeaweedFS PUT", "single client"
	Want    float64   // the target ratio
	Lower   bool      // smaller figures are better
	// Max, when set, turns the target into an upper bound: the ratio
	// Ours/Ref must stay ≤ Want (for example "page from 100,000 ≤ 2× page
	// from 100"). Lower is ignored then.
	Max bool
}

// Ratio is run i's ratio: Ours/Ref, or Ref/Ours when Lower (so that bigger
// is better either way), or Ours/Ref for a Max bound. 0 when a figure is
// missing or zero.
func (r Runs) Ratio(i int) float64 {
	if i >= len(r.Ours) || i >= len(r.Ref) || r.Ours[i] <= 0 || r.Ref[i] <= 0 {
		return 0
	}
	if r.Lower && !r.Max {
		return r.Ref[i] / r.Ours[i]
	}
	return r.Ours[i] / r.Ref[i]
}

// Ratios are the per-run ratios (0 for a run with a missing figure).
func (r Runs) Ratios() []float64 {
	n := min(len(r.Ours), len(r.Ref))
	out := make([]float64, n)
	for i := range n {
		out[i] = r.Ratio(i)
	}
	return out
}

// Spread is the min, median and max of the runs' ratios, ignoring missing
// runs; ok is false when no run has both figures.
func (r Runs) Spread() (lo, med, hi float64, ok bool) {
	return Stats(nonZero(r.Ratios()))
}

// Met reports whether the median ratio meets Want (a Max bound: stays at or
// below it). EveryRun asks it of each run instead, as P3 does.
func (r Runs) Met() bool {
	_, med, _, ok := r.Spread()
	return ok && r.meets(med)
}

// EveryRun reports whether every run meets Want.
func (r Runs) EveryRun() bool {
	rs := r.Ratios()
	if len(rs) == 0 {
		return false
	}
	for _, x := range rs {
		if x == 0 || !r.meets(x) {
			return false
		}
	}
	return true
}

func (r Runs) meets(x float64) bool {
	if r.Max {
		return x <= r.Want
	}
	return x >= r.Want
}

// String is "0.72× (0.69–0.75×, 3 runs)" or "n/a".
func (r Runs) String() string {
	lo, med, hi, ok := r.Spread()
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f×, %d runs)", med, lo, hi, len(nonZero(r.Ratios())))
}

// Bound is a limit a target sets on one measured value, such as RSS growth
// ≤ 128 MiB or 0 errors.
type Bound struct {
	Label string  // "RSS growth, resources/read"
	Value float64 // measured (the worst run)
	Limit float64 // Value must be ≤ Limit
	Unit  string  // "MiB", "errors"
}

// Met reports whether Value ≤ Limit.
func (b Bound) Met() bool { return b.Value <= b.Limit }

// Target is one performance target's outcome.
type Target struct {
	ID, Title, Goal string // "P8", "256 concurrent readers", "≥ 0.8× single client; RSS ≤ 128 MiB"
	Pairs           []Runs
	EveryRun        []bool   // per pair: must every run meet Want (P3), not just the median
	Bounds          []Bound  // limits besides the ratios
	Errors          []string // failures during the runs (a target with errors is missed)
	NotRun          string   // why it did not run (budget, missing tool); empty when it ran
	Why             []string // generated: for each miss, why and what would close it
	Detail          string   // markdown with the workload's own tables, may be empty
}

// Met reports whether every pair and bound holds and no error happened. A
// target needs at least one pair or bound to be met (G3 has bounds only).
func (t *Target) Met() bool {
	if t.NotRun != "" || len(t.Errors) > 0 || len(t.Pairs)+len(t.Bounds) == 0 {
		return false
	}
	for i, p := range t.Pairs {
		ok := p.Met()
		if i < len(t.EveryRun) && t.EveryRun[i] {
			ok = p.EveryRun()
		}
		if !ok {
			return false
		}
	}
	for _, b := range t.Bounds {
		if !b.Met() {
			return false
		}
	}
	return true
}

// Stats returns the min, median and max of v; ok is false for an empty v.
func Stats(v []float64) (lo, med, hi float64, ok bool) {
	if len(v) == 0 {
		return 0, 0, 0, false
	}
	s := slices.Clone(v)
	slices.Sort(s)
	med = s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[0], med, s[len(s)-1], true
}

func nonZero(v []float64) []float64 {
	out := v[:0:0]
	for _, x := range v {
		if x != 0 {
			out = append(out, x)
		}
	}
	return out
}
