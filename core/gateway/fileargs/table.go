package fileargs

import (
	"context"
	"sync"
	"time"
)

// maxToolEntries bounds the tools a Table remembers (it restarts beyond).
const maxToolEntries = 4096

// Table is the upstream tools' file arguments, by tool name, each entry
// trusted for a while; the listing that fills it runs one at a time: a
// lookup that finds one running waits for it, and lists on its own only
// when it failed. Safe for concurrent use; the zero value is empty.
type Table struct {
	mu     sync.Mutex
	m      map[string]toolEntry
	flight *listFlight
}

// listFlight is one listing of the upstream's tools, shared by the
// lookups that wait for it.
type listFlight struct {
	done  chan struct{}
	tools map[string]map[string]Spec
	err   error
}

type toolEntry struct {
	specs   map[string]Spec
	expires time.Time
}

// Specs returns the file arguments of tool (nil: none, or unknown), from
// the table or from list, whose answer is kept for ttl. list's error is
// returned (with nil specs: the call passes unchecked); a ctx that ends
// while waiting for another's listing returns nil, nil.
func (t *Table) Specs(ctx context.Context, tool string, ttl time.Duration,
	list func() (map[string]map[string]Spec, error)) (map[string]Spec, error) {
	if specs, ok := t.get(tool, time.Now()); ok {
		return specs, nil
	}
	f, lead := t.join()
	if !lead {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, nil
		}
		if f.err == nil {
			return f.tools[tool], nil
		}
		f = &listFlight{done: make(chan struct{})} // the shared one failed: list on our own
	}
	f.tools, f.err = list()
	if f.err == nil {
		t.put(f.tools, time.Now().Add(ttl), tool)
	}
	t.land(f)
	return f.tools[tool], f.err
}

func (t *Table) get(tool string, now time.Time) (map[string]Spec, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[tool]
	if !ok || now.After(e.expires) {
		return nil, false
	}
	return e.specs, true
}

// put records the tools listed, and asked as a tool not listed (nil).
func (t *Table) put(tools map[string]map[string]Spec, expires time.Time, asked string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil || len(t.m)+len(tools)+1 > maxToolEntries {
		t.m = map[string]toolEntry{}
	}
	for name, specs := range tools {
		t.m[name] = toolEntry{specs: specs, expires: expires}
	}
	if _, ok := tools[asked]; !ok {
		t.m[asked] = toolEntry{expires: expires}
	}
}

// join returns the listing running, or a new one that the caller leads
// (lead) and must land.
func (t *Table) join() (f *listFlight, lead bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.flight != nil {
		return t.flight, false
	}
	t.flight = &listFlight{done: make(chan struct{})}
	return t.flight, true
}

// land ends f, waking the lookups that wait for it.
func (t *Table) land(f *listFlight) {
	t.mu.Lock()
	if t.flight == f {
		t.flight = nil
	}
	t.mu.Unlock()
	close(f.done)
}
