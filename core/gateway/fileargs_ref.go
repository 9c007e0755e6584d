package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/core/gateway/fileargs"
)

// By-reference delivery (docs/gateway.md, "By-reference delivery"). A
// file argument whose x-mcp-file says "delivery":"reference" does not
// reach the upstream as its data URI: while the tools/call body streams
// through the gate, the data URI is decoded into the FileStore under the
// caller's principal (checked as any file argument, its size and sha256
// counted), the rest of the body waiting; then the upstream gets, in the
// string's place, a signed, expiring link to the stored bytes (Range
// capable), with the file's name, media type, size and sha256 in its
// query. Such a body changes length, so it goes to the upstream chunked:
// the gate first reads, within PeekBytes, as far as the tool's name, and
// only a call of a tool with such an argument is rewritten.

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
}

// FileStore keeps the files of arguments delivered by reference, each in
// its principal's namespace (core/server's: the server's backend through
// storage/ingest; links are /d links).
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

// refStore is the fileargs.Store of one tools/call: files kept for its
// principal, remembered so that a call that fails leaves none.
type refStore struct {
	g         *Gateway
	ctx       context.Context
	principal string
	mu        sync.Mutex
	ids       []string
}

func (s *refStore) Keep(arg, name, mediaType string) (fileargs.File, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	w, err := s.g.opts.Files.Store.Create(s.ctx, s.principal, id, mediaType)
	if err != nil {
		s.g.log.Warn("gateway: storing a file argument failed", "argument", arg, "problem", err.Error())
		return nil, err
	}
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
	return &refFile{s: s, id: id, name: fileName(name, arg), w: w, sum: sha256.New()}, nil
}

// fileName is the name a file delivered by reference goes by: the data
// URI's name parameter, its last path segment, when it is a plausible file
// name (valid UTF-8, no control characters, at most 255 bytes), else the
// argument's name.
func fileName(name, arg string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	ok := name != "" && name != "." && name != ".." && len(name) <= 255 && utf8.ValidString(name) &&
		strings.IndexFunc(name, unicode.IsControl) < 0
	if !ok {
		return arg
	}
	return name
}

// discard deletes the files kept so far (the call failed).
func (s *refStore) discard() {
	if s == nil {
		return
	}
	s.mu.Lock()
	ids := s.ids
	s.ids = nil
	s.mu.Unlock()
	for _, id := range ids {
		_ = s.g.opts.Files.Store.Delete(context.Background(), s.principal, id)
	}
}

// refFile is one file being stored: its size and sha256 counted as it
// is written.
type refFile struct {
	s    *refStore
	id   string
	name string
	w    OffloadWriter
	sum  hash.Hash
	n    int64
}

func (f *refFile) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	f.sum.Write(p[:n])
	f.n += int64(n)
	return n, err
}

// Commit stores the file and returns its link, the file's facts in the
// query: name, type, size, sha256.
func (f *refFile) Commit() (string, error) {
	info, err := f.w.Commit(f.s.ctx)
	if err != nil {
		f.s.g.log.Warn("gateway: storing a file argument failed", "problem", err.Error())
		return "", err
	}
	if info.Size != f.n {
		return "", errors.New("gateway: the store kept another size than written")
	}
	link, err := f.s.g.opts.Files.Store.Link(f.s.ctx, f.s.principal, f.id, f.name, f.s.g.opts.Files.LinkTTL)
	if err != nil {
		f.s.g.log.Warn("gateway: linking a stored file argument failed", "problem", err.Error())
		return "", err
	}
	q := url.Values{"name": {f.name}, "type": {info.MediaType}, "size": {strconv.FormatInt(f.n, 10)},
		"sha256": {hex.EncodeToString(f.sum.Sum(nil))}}
	sep := "?"
	if strings.Contains(link, "?") {
		sep = "&"
	}
	return link + sep + q.Encode(), nil
}

func (f *refFile) Abort() { f.w.Abort() }

// deliverByReference readies fg to rewrite the call's body when a file
// argument of the tool called is delivered by reference, and reports
// whether it will (the body then goes to the upstream chunked). It reads
// the body, within PeekBytes, as far as the tool's name; the bytes read
// wait in fg, rewritten.
func (g *Gateway) deliverByReference(ctx context.Context, fg *fileGate, principal string) bool {
	if g.opts.Files.Store == nil {
		return false
	}
	fg.mu.Lock()
	defer fg.mu.Unlock()
	fg.kept = &refStore{g: g, ctx: ctx, principal: principal}
	fg.check.Deliver(fg.kept)
	fg.rewrite = true
	for fg.check.Tool() == "" && fg.read < int64(g.opts.PeekBytes) && fg.srcErr == nil && fg.check.Refused() == nil {
		fg.fill()
	}
	if tool := fg.check.Tool(); tool != "" {
		for _, spec := range fg.lookup(tool) {
			if spec.ByReference() {
				return true
			}
		}
	}
	fg.check.InlineOnly()
	fg.rewrite = false // what waits in fg passed unchanged
	return false
}
