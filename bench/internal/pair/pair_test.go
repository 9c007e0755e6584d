package pair

import "testing"

func TestRunsRatioAndSpread(t *testing.T) {
	r := Runs{Ours: []float64{70, 90, 0}, Ref: []float64{100, 100, 100}, Want: 0.8}
	lo, med, hi, ok := r.Spread()
	if !ok || lo != 0.7 || hi != 0.9 || med != 0.8 {
		t.Fatalf("spread = %v %v %v %v, want 0.7 0.8 0.9", lo, med, hi, ok)
	}
	if !r.Met() {
		t.Error("median 0.8 should meet 0.8")
	}
	if r.EveryRun() {
		t.Error("a run at 0.7 (and a missing run) should fail EveryRun")
	}
}

func TestRunsLowerAndMax(t *testing.T) {
	cpu := Runs{Ours: []float64{90}, Ref: []float64{45}, Lower: true, Want: 0.5}
	if got := cpu.Ratio(0); got != 0.5 || !cpu.Met() {
		t.Fatalf("lower ratio = %v met=%v, want 0.5 met", got, cpu.Met())
	}
	page := Runs{Ours: []float64{5}, Ref: []float64{2}, Max: true, Want: 2}
	if page.Met() {
		t.Fatal("2.5× must break a ≤ 2× bound")
	}
}

func TestTargetMet(t *testing.T) {
	tg := Target{Pairs: []Runs{{Ours: []float64{1}, Ref: []float64{1}, Want: 1}}, Bounds: []Bound{{Value: 10, Limit: 128}}}
	if !tg.Met() {
		t.Fatal("want met")
	}
	tg.Bounds[0].Value = 200
	if tg.Met() {
		t.Fatal("a broken bound must miss")
	}
	tg.Bounds[0].Value = 1
	tg.Errors = []string{"x"}
	if tg.Met() {
		t.Fatal("errors must miss")
	}
}

func TestTargetBoundsOnly(t *testing.T) {
	tg := Target{Bounds: []Bound{{Value: 10, Limit: 32}}}
	if !tg.Met() {
		t.Fatal("a target of bounds alone, all held, must be met")
	}
	tg.Bounds[0].Value = 40
	if tg.Met() {
		t.Fatal("a broken bound must miss")
	}
	if (&Target{}).Met() {
		t.Fatal("a target with neither pairs nor bounds measured nothing: it cannot be met")
	}
}
