package exhaust

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// Bystander is a second principal that keeps using the node while one
// principal exhausts it: 2026-07-28 tools/list and resources/read of a
// small blob, alternately, from a few clients on kept-alive connections,
// each pausing between requests. Every request must succeed; each is
// timed and charged to the phase running when it started.
type Bystander struct {
	Addr, Key string
	URI       string        // a small blob of the bystander's, for resources/read
	Clients   int           // clients sending at once
	Pause     time.Duration // between one client's requests
	t         Target        // builds the requests

	mu      sync.Mutex
	label   string
	byLabel map[string]*Latencies
}

// Latencies are a phase's bystander requests: their durations, and the
// ones that failed.
type Latencies struct {
	Samples      []time.Duration
	Failed       int
	FirstFailure string
}

// Phase charges later requests to label.
func (b *Bystander) Phase(label string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.label = label
}

// Get returns a copy of label's latencies.
func (b *Bystander) Get(label string) Latencies {
	b.mu.Lock()
	defer b.mu.Unlock()
	if l := b.byLabel[label]; l != nil {
		return Latencies{Samples: slices.Clone(l.Samples), Failed: l.Failed, FirstFailure: l.FirstFailure}
	}
	return Latencies{}
}

// Run sends until ctx ends.
func (b *Bystander) Run(ctx context.Context) {
	b.t.Addr = b.Addr
	var wg sync.WaitGroup
	for c := range max(b.Clients, 1) {
		wg.Go(func() { b.client(ctx, c) })
	}
	wg.Wait()
}

func (b *Bystander) client(ctx context.Context, c int) {
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, DisableCompression: true,
		MaxIdleConnsPerHost: 1, DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext}}
	for i := c; ctx.Err() == nil; i++ {
		req := b.t.modern(context.WithoutCancel(ctx), b.Key, "tools/list", map[string]any{})
		if i%2 == 1 {
			req = b.t.modern(context.WithoutCancel(ctx), b.Key, "resources/read", map[string]any{"uri": b.URI})
		}
		b.mu.Lock()
		label := b.label
		b.mu.Unlock()
		start := time.Now()
		a := wire.Do(hc, req)
		b.record(label, time.Since(start), answerProblem(a))
		select {
		case <-ctx.Done():
		case <-time.After(b.Pause):
		}
	}
}

// answerProblem is what is wrong with a bystander's answer, "" when it is
// a JSON-RPC result.
func answerProblem(a *wire.Answer) string {
	o, ok := wire.Outcome(a)
	if a.Status == http.StatusOK && ok && o.Result != nil && o.Error == nil {
		return ""
	}
	return a.String()
}

func (b *Bystander) record(label string, d time.Duration, problem string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byLabel == nil {
		b.byLabel = map[string]*Latencies{}
	}
	l := b.byLabel[label]
	if l == nil {
		l = &Latencies{}
		b.byLabel[label] = l
	}
	l.Samples = append(l.Samples, d)
	if problem != "" {
		l.Failed++
		if l.FirstFailure == "" {
			l.FirstFailure = problem
		}
	}
}

// Quantile is the q-quantile of the samples (nearest rank), 0 without any.
func (l Latencies) Quantile(q float64) time.Duration {
	if len(l.Samples) == 0 {
		return 0
	}
	s := slices.Clone(l.Samples)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// String is "N requests, p50 …, p99 …, max …".
func (l Latencies) String() string {
	if len(l.Samples) == 0 {
		return "no requests"
	}
	r := func(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
	s := fmt.Sprintf("%d requests, p50 %s, p99 %s, max %s", len(l.Samples), r(l.Quantile(0.5)), r(l.Quantile(0.99)), r(l.Quantile(1)))
	if l.Failed > 0 {
		s += fmt.Sprintf(", %d failed (first: %s)", l.Failed, wire.Clip(l.FirstFailure, 200))
	}
	return s
}
