package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway/fileargs"
	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// File inputs (docs/gateway.md, "File inputs"). A tools/call body streams
// to the upstream through a fileGate: each chunk is checked by package
// fileargs before it is forwarded, the string of every argument the
// upstream's tools/list marks x-mcp-file decoded as a data URI while it
// passes, only to count its bytes and sniff its type. A file over
// maxSize, or not matching accept, stops the body there: the chunk that
// showed it, and everything after, never reach the upstream, whose request
// is cut, and the client gets -32602 naming the argument. Good bytes pass
// unchanged.
//
// Which arguments are files comes from the upstream's own tools/list,
// fetched by the gateway when a call names a tool it has no fresh entry
// for (FileSpecTTL), in the caller's session and era. So every node
// behind a load balancer checks the same arguments whatever it relayed
// before, at the cost of one tools/list per tool and TTL per node.

// Bounds of the tool table.
const (
	maxToolPages   = 16   // tools/list pages fetched at most
	maxToolEntries = 4096 // tools remembered (the table restarts beyond)
)

// toolFiles is the table of the upstream tools' file arguments, by tool
// name: nil specs for a tool known to have none (or not listed).
type toolFiles struct {
	mu sync.Mutex
	m  map[string]toolEntry
	// flight is the tools/list running, which calls for tools not in the
	// table wait for instead of each listing again.
	flight *listFlight
}

// listFlight is one tools/list of the upstream, shared by the calls that
// wait for it.
type listFlight struct {
	done  chan struct{}
	tools map[string]map[string]fileargs.Spec
	err   error
}

type toolEntry struct {
	specs   map[string]fileargs.Spec
	expires time.Time
}

func (t *toolFiles) get(tool string, now time.Time) (map[string]fileargs.Spec, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[tool]
	if !ok || now.After(e.expires) {
		return nil, false
	}
	return e.specs, true
}

// put records the tools listed, and asked as a tool not listed (nil).
func (t *toolFiles) put(tools map[string]map[string]fileargs.Spec, expires time.Time, asked string) {
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

// listQuery is what the gateway's own tools/list needs of the call that
// caused it: its session, era and principal.
type listQuery struct {
	session, version, principal string
	modern                      bool
}

// fileSpecsFor returns the file arguments of tool, from the table or a
// tools/list of the upstream (one at a time: a call that finds one
// running waits for it, and lists on its own only when it failed). When
// the upstream cannot list its tools, nil: the call passes unchecked (the
// upstream still checks).
func (g *Gateway) fileSpecsFor(ctx context.Context, q listQuery, tool string) map[string]fileargs.Spec {
	if specs, ok := g.files.get(tool, time.Now()); ok {
		return specs
	}
	f, lead := g.files.join()
	if !lead {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil
		}
		if f.err == nil {
			return f.tools[tool]
		}
		f = &listFlight{done: make(chan struct{})} // the shared one failed: list on our own
	}
	f.tools, f.err = g.listToolFiles(ctx, q)
	if f.err == nil {
		g.files.put(f.tools, time.Now().Add(g.opts.FileSpecTTL), tool)
	} else if !errors.Is(f.err, context.Canceled) {
		g.log.Warn("gateway: upstream tools/list failed; file arguments pass unchecked", "problem", f.err.Error(),
			"upstream", g.Upstream())
	}
	g.files.land(f)
	return f.tools[tool]
}

// join returns the tools/list running, or a new one that the caller
// leads (lead) and must land.
func (t *toolFiles) join() (f *listFlight, lead bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.flight != nil {
		return t.flight, false
	}
	t.flight = &listFlight{done: make(chan struct{})}
	return t.flight, true
}

// land ends f, waking the calls that wait for it.
func (t *toolFiles) land(f *listFlight) {
	t.mu.Lock()
	if t.flight == f {
		t.flight = nil
	}
	t.mu.Unlock()
	close(f.done)
}

// fileGate is the tools/call body on its way upstream: each chunk the
// transport reads is fed to a fileargs.Checker before it is handed on.
// Safe for the transport's reads and the serving call's stop.
type fileGate struct {
	mu     sync.Mutex
	src    io.Reader
	check  *fileargs.Checker
	lookup func(tool string) map[string]fileargs.Spec
	read   int64 // bytes read from src
	// With by-reference delivery (fileargs_ref.go), rewrite: chunks go
	// through the Checker's Rewrite into pending (pending[off:] not yet
	// handed on); srcErr is src's error, handed on once pending is;
	// kept is the call's store.
	rewrite bool
	buf     []byte
	pending []byte
	off     int
	srcErr  error
	kept    *refStore
}

// newFileGate returns the gate of a tools/call body src, the upstream
// call's context ctx.
func (g *Gateway) newFileGate(ctx context.Context, r *Request, src io.Reader) *fileGate {
	q := listQuery{session: r.Header.Get(headers.SessionID), version: r.Header.Get(headers.ProtocolVersion),
		principal: r.Principal, modern: r.Header.Get(headers.Method) != ""}
	name, _ := headers.Decode(r.Header.Get(headers.Name))
	lookup := func(tool string) map[string]fileargs.Spec { return g.fileSpecsFor(ctx, q, tool) }
	return &fileGate{src: src, check: fileargs.New(name, lookup), lookup: lookup}
}

// Read reads a chunk of the client's body and checks it before handing it
// on: a chunk in which a file is refused is not.
func (fg *fileGate) Read(p []byte) (int, error) {
	fg.mu.Lock()
	defer fg.mu.Unlock()
	if fg.off < len(fg.pending) {
		n := copy(p, fg.pending[fg.off:])
		fg.off += n
		return n, nil
	}
	if ref := fg.check.Refused(); ref != nil {
		return 0, ref
	}
	if fg.srcErr != nil {
		return 0, fg.srcErr
	}
	if fg.rewrite {
		return fg.readRewritten(p)
	}
	n, err := fg.src.Read(p)
	fg.read += int64(n)
	if n > 0 {
		if ferr := fg.check.Feed(p[:n]); ferr != nil {
			return 0, ferr
		}
	}
	return n, err
}

// readRewritten hands on the next bytes of the rewritten body: while a
// file delivered by reference is stored, nothing, until its link.
func (fg *fileGate) readRewritten(p []byte) (int, error) {
	for fg.off == len(fg.pending) {
		if fg.srcErr != nil {
			return 0, fg.srcErr
		}
		if err := fg.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, fg.pending[fg.off:])
	fg.off += n
	return n, nil
}

// fill reads one chunk of src and appends its rewritten bytes to
// pending; an error is a refusal.
func (fg *fileGate) fill() error {
	if fg.off == len(fg.pending) {
		fg.pending, fg.off = fg.pending[:0], 0
	}
	if fg.buf == nil {
		fg.buf = make([]byte, 32<<10)
	}
	n, err := fg.src.Read(fg.buf)
	fg.read += int64(n)
	if err != nil {
		fg.srcErr = err
	}
	if n > 0 {
		var ferr error
		if fg.pending, ferr = fg.check.Rewrite(fg.buf[:n], fg.pending); ferr != nil {
			return ferr
		}
	}
	return nil
}

// discardKept deletes the files the call stored for by-reference delivery
// (it failed before the upstream took it); nil-safe.
func (fg *fileGate) discardKept() {
	if fg == nil {
		return
	}
	fg.mu.Lock()
	kept := fg.kept
	fg.mu.Unlock()
	kept.discard()
}

// stop ends a check left midway; nil-safe.
func (fg *fileGate) stop() {
	if fg == nil {
		return
	}
	fg.mu.Lock()
	defer fg.mu.Unlock()
	fg.check.Stop()
}

// refusal is the file the gate refused, or nil.
func (fg *fileGate) refusal() *fileargs.Refusal {
	if fg == nil {
		return nil
	}
	fg.mu.Lock()
	defer fg.mu.Unlock()
	return fg.check.Refused()
}

// refuseFile answers the client the file refusal (-32602 naming the
// argument; HTTP 200, so an SDK client reports its message); the
// upstream's answer to a request it never got whole, if any, is dropped.
func refuseFile(w ResponseWriter, c call, ref *fileargs.Refusal, resp *http.Response, cancel context.CancelFunc) {
	if resp != nil {
		drainClose(resp.Body)
	}
	cancel()
	data := map[string]any{"argument": ref.Arg}
	if ref.Failed {
		writeRPCError(w, c.id, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: "+ref.Error(), data).
			WithStatus(http.StatusInternalServerError))
		return
	}
	if ref.Limit > 0 {
		data["maxSize"] = ref.Limit
	}
	writeRPCError(w, c.id, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+ref.Error(), data))
}
