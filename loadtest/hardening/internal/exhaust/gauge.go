package exhaust

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// gauge reads one metric from the node's admin listener (Target.Admin):
// the value of the line whose name (labels included) is name; ok is
// false when it cannot be read.
func (t *Target) gauge(ctx context.Context, name string) (v float64, ok bool) {
	if t.Admin == "" {
		return 0, false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+t.Admin+"/metrics", nil)
	if err != nil {
		return 0, false
	}
	resp, err := t.client().Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if rest, found := strings.CutPrefix(sc.Text(), name+" "); found && resp.StatusCode == http.StatusOK {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// peakGauge samples a gauge every 50 ms until stop is called, which
// returns the highest value seen (ok false when it was never read).
func (t *Target) peakGauge(ctx context.Context, name string) (stop func() (peak float64, ok bool)) {
	var mu sync.Mutex
	var peak float64
	var seen bool
	sample := func() {
		if v, ok := t.gauge(context.WithoutCancel(ctx), name); ok {
			mu.Lock()
			peak, seen = max(peak, v), true
			mu.Unlock()
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				sample()
			}
		}
	})
	return func() (float64, bool) {
		close(done)
		wg.Wait()
		sample()
		mu.Lock()
		defer mu.Unlock()
		return peak, seen
	}
}

// sessionsGauge is the node's count of 2025-11-25 sessions.
const sessionsGauge = "mcpblob_sessions_active"
