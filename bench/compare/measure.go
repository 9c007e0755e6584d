package main

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// peakWatch tracks the peak resident memory of pid while a run lasts:
// VmHWM reset before the run and read after it, and VmRSS sampled every
// 5 ms as a fallback where the reset is not permitted.
type peakWatch struct {
	pid   int
	reset bool
	mu    sync.Mutex
	max   int64
	stop  chan struct{}
	done  chan struct{}
}

func watchPeak(pid int) *peakWatch {
	w := &peakWatch{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	if pid == 0 {
		close(w.done)
		return w
	}
	w.reset = sysinfo.ResetPeak(pid)
	go func() {
		defer close(w.done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if m, err := sysinfo.ReadMem(pid); err == nil {
				w.mu.Lock()
				w.max = max(w.max, m.RSS)
				w.mu.Unlock()
			}
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// end stops the watch and returns the peak (0 when there is no process).
func (w *peakWatch) end() int64 {
	if w.pid == 0 {
		return 0
	}
	close(w.stop)
	<-w.done
	peak := w.max
	if m, err := sysinfo.ReadMem(w.pid); err == nil {
		peak = max(peak, m.RSS)
		if w.reset {
			peak = max(peak, m.HWM)
		}
	}
	return peak
}

// sample is one timed run of one system on one workload.
type sample struct {
	mbps float64       // raw blob bytes per second, 10^6
	ttfb time.Duration // first body byte of the first transfer
	peak int64         // peak RSS of the serving process during the run
	err  error
}

// readRun transfers key (size raw bytes) from s, repeating until at least
// minTime has passed (once for large blobs), and returns throughput in raw
// bytes and the peak RSS.
func readRun(ctx context.Context, s *system, key string, size int64, minTime time.Duration, buf []byte) sample {
	w := watchPeak(s.pid())
	var smp sample
	start := time.Now()
	var n int64
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		_, ttfb, err := s.fetch(rctx, key, size, buf)
		cancel()
		if err != nil {
			smp.err = err
			break
		}
		if n == 0 {
			smp.ttfb = ttfb
		}
		n++
		if time.Since(start) >= minTime {
			break
		}
	}
	el := time.Since(start)
	smp.peak = w.end()
	if smp.err == nil {
		smp.mbps = mbps(size*n, el)
	}
	return smp
}

// mbps is bytes moved in d, in MB/s (10^6 bytes); 0 when d is not positive.
func mbps(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) / d.Seconds() / 1e6
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianDur(v []time.Duration) time.Duration {
	f := make([]float64, len(v))
	for i, d := range v {
		f[i] = float64(d)
	}
	return time.Duration(median(f))
}
