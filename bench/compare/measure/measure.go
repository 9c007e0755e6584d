// Package measure holds the measurement primitives that bench/compare's
// targets share: peak RSS watches, throughput, medians, draining an answer,
// uploads, a file's page-cache residency (read, warmed, dropped) and the
// harness's log line.
package measure

import (
	"slices"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// PeakWatch tracks the peak resident memory of pid while a run lasts:
// VmHWM reset before the run and read after it, and VmRSS sampled every
// 5 ms as a fallback where the reset is not permitted.
type PeakWatch struct {
	pid   int
	reset bool
	mu    sync.Mutex
	max   int64
	stop  chan struct{}
	done  chan struct{}
}

// WatchPeak starts watching pid (0: nothing to watch).
func WatchPeak(pid int) *PeakWatch {
	w := &PeakWatch{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
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

// End stops the watch and returns the peak (0 when there is no process).
func (w *PeakWatch) End() int64 {
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

// MBps is bytes moved in d, in MB/s (10^6 bytes); 0 when d is not positive.
func MBps(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) / d.Seconds() / 1e6
}

// Median is the median of v (0 when empty).
func Median(v []float64) float64 {
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

// MedianDur is the median of v.
func MedianDur(v []time.Duration) time.Duration {
	f := make([]float64, len(v))
	for i, d := range v {
		f[i] = float64(d)
	}
	return time.Duration(Median(f))
}
