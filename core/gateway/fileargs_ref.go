package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway/fileargs"
)

// By-reference delivery (docs/gateway.md, "By-reference delivery"): a
// file argument whose x-mcp-file says "delivery":"reference" reaches the
// upstream as a signed, expiring link to the file, which the gate
// (fileargs.Gate) decoded into the FileStore under the caller's principal
// as the body streamed through; such a body goes to the upstream chunked.

// DefaultFileLinkTTL is the lifetime of the link an upstream gets for a
// file delivered by reference: long enough for a tool that queues its
// work for minutes, short enough that a leaked link soon stops working.
const DefaultFileLinkTTL = 15 * time.Minute

// FileOptions configure by-reference delivery of file arguments.
type FileOptions struct {
	// Store keeps the files delivered by reference; nil: every file
	// argument is forwarded inline (checked), whatever the upstream asks.
	Store FileStore
	// LinkTTL is the lifetime of the link the upstream gets. Default
	// DefaultFileLinkTTL.
	LinkTTL time.Duration
	// Opener opens the files callers uploaded to the gateway, whose
	// mcp-file:// URIs are expanded into data URIs for the upstream
	// (fileargs_expand.go); nil: such URIs are forwarded as they are.
	Opener FileOpener
}

// FileStore keeps the files of arguments delivered by reference, each in
// its principal's namespace (core/server's: the server's backend through
// storage/ingest; its links are /d links).
type FileStore interface {
	// Create begins principal's file id of mediaType.
	Create(ctx context.Context, principal, id, mediaType string) (OffloadWriter, error)
	// Link returns a signed link to principal's file id, valid for ttl,
	// served (GET, HEAD, Range) with name in Content-Disposition and the
	// file's type, length and sha256 (x-mcp-sha256) in its headers.
	Link(ctx context.Context, principal, id, name string, ttl time.Duration) (string, error)
	// Delete removes principal's file id.
	Delete(ctx context.Context, principal, id string) error
}

// deliverByReference readies gate to deliver the call's files by
// reference where the upstream asks it, and to expand file URIs
// (fileargs_expand.go), and reports whether it will (fileargs.Gate's
// Deliver, within PeekBytes).
func (g *Gateway) deliverByReference(ctx context.Context, gate *fileargs.Gate, principal string) bool {
	g.expandFiles(ctx, gate, principal)
	var store fileargs.Store
	if g.opts.Files.Store != nil {
		store = &refStore{g: g, ctx: ctx, principal: principal}
	} else if g.opts.Files.Opener == nil {
		return false
	}
	return gate.Deliver(store, int64(g.opts.PeekBytes))
}

// discardKept deletes the files gate stored, the call having failed
// before the upstream took it (ref: the refusal, logged when the store
// failed).
func (g *Gateway) discardKept(gate *fileargs.Gate, ref *fileargs.Refusal) {
	if ref != nil && ref.Failed {
		g.log.Warn("gateway: storing or reading a file argument failed", "argument", ref.Arg, "problem", ref.Cause.Error())
	}
	s, ok := gate.Kept().(*refStore)
	if !ok {
		return
	}
	s.mu.Lock()
	ids := s.ids
	s.ids = nil
	s.mu.Unlock()
	for _, id := range ids {
		_ = g.opts.Files.Store.Delete(context.Background(), s.principal, id)
	}
}

// refStore is the fileargs.Store of one tools/call: files kept for its
// principal, remembered so that a call that fails leaves none.
type refStore struct {
	g         *Gateway
	ctx       context.Context
	principal string
	mu        sync.Mutex
	ids       []string
}

func (s *refStore) Keep(_, mediaType string) (fileargs.File, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	w, err := s.g.opts.Files.Store.Create(s.ctx, s.principal, id, mediaType)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
	return &refFile{s: s, id: id, OffloadWriter: w}, nil
}

// refFile is one file being stored.
type refFile struct {
	OffloadWriter
	s  *refStore
	id string
}

// Commit stores the file and returns its link.
func (f *refFile) Commit(facts fileargs.Facts) (string, error) {
	info, err := f.OffloadWriter.Commit(f.s.ctx)
	if err == nil && info.Size != facts.Size {
		err = errors.New("the store kept another size than written")
	}
	if err != nil {
		return "", err
	}
	return f.s.g.opts.Files.Store.Link(f.s.ctx, f.s.principal, f.id, facts.Name, f.s.g.opts.Files.LinkTTL)
}
