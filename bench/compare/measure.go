package main

import (
	"context"
	"time"

	"github.com/mcpblob/mcpblob/bench/compare/measure"
)

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
	w := measure.WatchPeak(s.pid())
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
	smp.peak = w.End()
	if smp.err == nil {
		smp.mbps = measure.MBps(size*n, el)
	}
	return smp
}
