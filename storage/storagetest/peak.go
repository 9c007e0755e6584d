package storagetest

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Peak samples a quantity (heap bytes, RSS) from a goroutine until Stop,
// to find its peak growth over the baseline taken at the start: what the
// memory tests of every package measure.
type Peak struct {
	read       func() int64
	base, peak atomic.Int64
	stop       chan struct{}
	wg         sync.WaitGroup
}

// WatchPeak collects garbage, takes read's baseline and samples it every
// interval until Stop.
func WatchPeak(every time.Duration, read func() int64) *Peak {
	runtime.GC()
	p := &Peak{read: read, stop: make(chan struct{})}
	p.base.Store(read())
	p.peak.Store(p.base.Load())
	p.wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				p.observe()
			}
		}
	})
	return p
}

// observe takes one sample; a sampler and Stop's last sample may race, and
// the larger value wins.
func (p *Peak) observe() {
	v := p.read()
	for old := p.peak.Load(); v > old && !p.peak.CompareAndSwap(old, v); old = p.peak.Load() {
	}
}

// Stop ends sampling and returns the peak growth over the baseline.
func (p *Peak) Stop() int64 {
	close(p.stop)
	p.wg.Wait()
	return p.peak.Load() - p.base.Load()
}

// Base is the baseline taken at the start.
func (p *Peak) Base() int64 { return p.base.Load() }

// HeapInuse is runtime.MemStats.HeapInuse: the heap's spans in use.
func HeapInuse() int64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}
