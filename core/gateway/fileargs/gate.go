package fileargs

import (
	"io"
	"sync"
)

// Gate is a tools/call body on its way to the upstream: each chunk read
// from the client's body is walked by a Checker before it is handed on,
// and a chunk in which a file is refused is not. With Deliver, the body is
// rewritten: the strings of files delivered by reference are withheld
// while they are stored, then replaced by their links. Safe for the
// transport's reads and the serving call's Stop.
type Gate struct {
	mu     sync.Mutex
	src    io.Reader
	check  *Checker
	lookup func(tool string) map[string]Spec
	read   int64 // bytes read from src
	// rewrite: chunks go through the Checker's Rewrite into pending
	// (pending[off:] not yet handed on); srcErr is src's error, handed on
	// once pending is.
	rewrite bool
	buf     []byte
	pending []byte
	off     int
	srcErr  error
	store   Store // Deliver's
	// splices are the data URIs of file URIs expanded (Expand), handed
	// on at their offsets of pending; failed is a failure reading one.
	splices []splice
	opener  Opener
	failed  *Refusal
	metrics Metrics
	counted bool // a refusal counted
}

// NewGate returns the gate of the tools/call body src; name and lookup
// are New's; m counts its refusal (at Stop) and the files it stores.
func NewGate(src io.Reader, name string, lookup func(tool string) map[string]Spec, m Metrics) *Gate {
	return &Gate{src: src, check: New(name, lookup), lookup: lookup, metrics: MetricsOf(m)}
}

// Read reads a chunk of the client's body and checks it before handing it
// on (rewritten, after Deliver).
func (g *Gate) Read(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ref := g.refused(); ref != nil { // what waits is not handed on
		return 0, ref
	}
	if n, ok, err := g.handOn(p); ok || err != nil {
		return n, err
	}
	if g.srcErr != nil {
		return 0, g.srcErr
	}
	if g.rewrite {
		return g.readRewritten(p)
	}
	n, err := g.src.Read(p)
	g.read += int64(n)
	if n > 0 {
		if ferr := g.check.Feed(p[:n]); ferr != nil {
			return 0, ferr
		}
	}
	return n, err
}

// readRewritten hands on the next bytes of the rewritten body: while a
// file delivered by reference is stored, nothing, until its link.
func (g *Gate) readRewritten(p []byte) (int, error) {
	for {
		if n, ok, err := g.handOn(p); ok || err != nil {
			return n, err
		}
		if g.srcErr != nil {
			return 0, g.srcErr
		}
		if err := g.fill(); err != nil {
			return 0, err
		}
	}
}

// handOn hands on the next bytes waiting in the gate, a splice's data URI
// at its offset (ok: some were); an error reading a splice's file is
// failed.
func (g *Gate) handOn(p []byte) (n int, ok bool, err error) {
	for len(g.splices) > 0 && g.splices[0].at == g.off {
		n, err := g.splices[0].r.Read(p)
		if err == io.EOF {
			g.splices[0].r.Close()
			g.splices = g.splices[1:]
			if n == 0 {
				continue
			}
			err = nil
		}
		if err != nil {
			g.failed, _ = err.(*Refusal)
			return 0, false, err
		}
		return n, true, nil
	}
	end := len(g.pending)
	if len(g.splices) > 0 {
		end = g.splices[0].at
	}
	if g.off < end {
		n = copy(p, g.pending[g.off:end])
		g.off += n
		return n, true, nil
	}
	return 0, false, nil
}

// refused is the refusal or failure that stopped the body, or nil.
func (g *Gate) refused() *Refusal {
	if ref := g.check.Refused(); ref != nil {
		return ref
	}
	return g.failed
}

// fill reads one chunk of src and appends its rewritten bytes to pending;
// an error is a refusal.
func (g *Gate) fill() error {
	if g.off == len(g.pending) && len(g.splices) == 0 {
		g.pending, g.off = g.pending[:0], 0
	}
	if g.buf == nil {
		g.buf = make([]byte, 32<<10)
	}
	n, err := g.src.Read(g.buf)
	g.read += int64(n)
	if err != nil {
		g.srcErr = err
	}
	if n > 0 {
		var ferr error
		g.pending, ferr = g.check.Rewrite(g.buf[:n], g.pending)
		g.splices = append(g.splices, g.check.takeSplices()...)
		if ferr != nil {
			return ferr
		}
	}
	if err != nil {
		g.pending = g.check.endRewrite(g.pending)
	}
	return nil
}

// Expand readies the gate to expand the file URIs given as inline file
// arguments into data URIs read through o (expand.go); call it before
// Deliver, which then reads the body on, within its limit, so that a file
// URI is refused, or opened, before anything goes upstream.
func (g *Gate) Expand(o Opener) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.opener = o
	g.check.Expand(o)
}

// Deliver readies the gate to deliver by reference, into store (nil:
// none), the files of the tool called that ask it, and to expand file
// URIs (Expand), and reports whether it will: the body then changes
// length. It reads the body, within limit bytes, as far as the tool's
// name (the bytes read wait in the gate); when the name is not found
// there, or the tool has no such argument, every file stays inline (but
// a file URI, with Expand, when the body goes on past limit before the
// name: it is then expanded, or refused, once met).
func (g *Gate) Deliver(store Store, limit int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if store != nil {
		g.check.Deliver(countedStore{store, g.metrics})
	}
	g.rewrite, g.store = true, store
	g.readOn(limit, func() bool { return g.check.Tool() == "" })
	var specs map[string]Spec
	if tool := g.check.Tool(); tool != "" {
		specs = g.lookup(tool)
	} else if g.opener != nil && g.srcErr == nil && g.check.Refused() == nil {
		return true // the name comes later: a file URI may still be expanded, the body cut if refused
	}
	byRef := false
	for _, spec := range specs {
		byRef = byRef || store != nil && spec.ByReference()
	}
	if g.opener != nil && len(specs) > 0 {
		g.readOn(limit, func() bool { return true })
		if byRef || len(g.splices) > 0 || g.srcErr == nil || g.refused() != nil {
			return true
		}
	} else if byRef {
		return true
	}
	g.check.InlineOnly()
	g.rewrite = false // what waits in the gate passed unchanged
	return false
}

// readOn fills the gate while more is wanted, within limit bytes read,
// until the body ends or is refused.
func (g *Gate) readOn(limit int64, more func() bool) {
	for more() && g.read < limit && g.srcErr == nil && g.check.Refused() == nil {
		if g.fill() != nil {
			break
		}
	}
}

// Stop ends a check left midway (the body will not be read further) and
// counts a refusal, once; nil-safe.
func (g *Gate) Stop() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.check.Stop()
	for _, sp := range g.splices {
		sp.r.Close()
	}
	g.splices = nil
	if ref := g.check.Refused(); ref != nil && !ref.Failed && !g.counted {
		g.counted = true
		g.metrics.FileRefused(SurfaceArgument)
	}
}

// Refused is the file the gate refused, or nil; nil-safe.
func (g *Gate) Refused() *Refusal {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused()
}

// Kept is the Store given to Deliver, or nil; nil-safe.
func (g *Gate) Kept() Store {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.store
}
