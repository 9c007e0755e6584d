package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/mcpblob/mcpblob/core/gateway/blobdecode"
)

// Offloading (--offload-over): an embedded base64 blob over a threshold in
// an upstream's tools/call or resources/read answer is decoded into the
// store as it arrives (blobdecode.Rewrite, storage/ingest) and its content
// item replaced by a resource_link to OffloadURIPrefix + id, which the
// gateway itself answers (offload_read.go).

// DefaultOffloadOver is the CLI's --offload-over: blobs over 1 MiB decoded
// leave the answer. An answer in flight holds at most about three times
// the threshold while Rewrite decides (blobdecode.RewriteOptions), so 1 MiB
// keeps the gateway's memory flat under many concurrent answers while the
// small images and icons a model looks at stay inline.
const DefaultOffloadOver = 1 << 20

// OffloadURIPrefix is the URI prefix of offloaded blobs: the gateway
// answers resources/read and resources/stream of these URIs itself.
const OffloadURIPrefix = "mcpblob:///offload/"

// OffloadOptions configure offloading; the zero value is off.
type OffloadOptions struct {
	// Over is the decoded size above which an embedded blob is offloaded;
	// 0: no offloading (the CLI's default is DefaultOffloadOver).
	Over int64
	// Store keeps the offloaded blobs. Required with Over.
	Store OffloadStore
}

// OffloadStore keeps offloaded blobs, each readable only by the principal
// whose call stored it (core/server's: the server's storage backend
// through storage/ingest, in the principal's namespace).
type OffloadStore interface {
	// Create begins principal's blob id; mediaType is "" when the upstream
	// has not given it yet. Nothing is visible before Commit.
	Create(ctx context.Context, principal, id, mediaType string) (OffloadWriter, error)
	// Open returns principal's blob id and its facts, or an error wrapping
	// ErrOffloadNotFound.
	Open(ctx context.Context, principal, id string) (io.ReadCloser, OffloadInfo, error)
	// Link returns a short-lived URL of principal's blob id's raw bytes
	// (Range requests, possibly a redirect to the store), or an error
	// wrapping ErrOffloadNotFound.
	Link(ctx context.Context, principal, id string) (string, OffloadInfo, error)
	// Delete removes principal's blob id.
	Delete(ctx context.Context, principal, id string) error
}

// OffloadWriter is one offloaded blob being stored.
type OffloadWriter interface {
	io.Writer
	// Commit makes the blob visible.
	Commit(ctx context.Context) (OffloadInfo, error)
	// Abort discards it (safe after Commit: it does nothing then).
	Abort()
}

// OffloadInfo describes a stored offloaded blob.
type OffloadInfo struct {
	Size      int64
	MediaType string
}

// ErrOffloadNotFound means the caller has no offloaded blob of that id.
var ErrOffloadNotFound = errors.New("gateway: no such offloaded blob")

// OffloadMetrics is implemented by a Metrics that counts offloads
// (core/metrics does).
type OffloadMetrics interface {
	// Offloaded records one blob of n decoded bytes moved to the store.
	Offloaded(n int64)
}

// offloader is the gateway's offloading state.
type offloader struct {
	opts    OffloadOptions
	metrics OffloadMetrics
}

// initOffload checks and fills in Options.Offload; g.off stays nil when
// offloading is off.
func (g *Gateway) initOffload() error {
	o := g.opts.Offload
	if o.Over <= 0 {
		return nil
	}
	if o.Store == nil {
		return errors.New("gateway: Options.Offload.Store is required with Offload.Over")
	}
	m, _ := g.metrics.(OffloadMetrics)
	if m == nil {
		m = noOffloadMetrics{}
	}
	g.off = &offloader{opts: o, metrics: m}
	return nil
}

type noOffloadMetrics struct{}

func (noOffloadMetrics) Offloaded(int64) {}

// offloads reports whether the gateway rewrites the answers to method:
// tools/call only. A resources/read entry must stay text or blob contents
// (a resource_link there is not a ReadResourceResult); a client that wants
// such a blob raw asks resources/stream, which the gateway adds.
func (g *Gateway) offloads(method string) bool {
	return g.off != nil && method == methodToolsCall
}

const methodToolsCall = "tools/call"

// offloadID reads the id of an offloaded blob's URI; ok is false for any
// other URI.
func offloadID(uri string) (id string, ok bool) {
	id, ok = strings.CutPrefix(uri, OffloadURIPrefix)
	if !ok || len(id) != 32 {
		return "", false
	}
	if _, err := hex.DecodeString(id); err != nil {
		return "", false
	}
	return id, true
}

// rewriteOptions are blobdecode's options for one answer of principal,
// and the record of the blobs it stored.
func (o *offloader) rewriteOptions(ctx context.Context, principal string) (blobdecode.RewriteOptions, *offloaded) {
	stored := &offloaded{store: o.opts.Store, principal: principal}
	return blobdecode.RewriteOptions{Threshold: o.opts.Over, Open: func(v blobdecode.Value) (blobdecode.Sink, error) {
		var b [16]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		w, err := o.opts.Store.Create(ctx, principal, id, v.MimeType)
		if err != nil {
			return nil, err
		}
		return &offloadSink{o: o, ctx: ctx, id: id, w: w, value: v, stored: stored}, nil
	}}, stored
}

// offloaded records the blobs one answer stored, so that an answer that
// fails after some were committed leaves none behind.
type offloaded struct {
	store     OffloadStore
	principal string
	mu        sync.Mutex
	ids       []string
}

func (s *offloaded) add(id string) {
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
}

// remove deletes the blobs stored so far.
func (s *offloaded) remove() {
	s.mu.Lock()
	ids := s.ids
	s.ids = nil
	s.mu.Unlock()
	for _, id := range ids {
		_ = s.store.Delete(context.Background(), s.principal, id)
	}
}

// offloadSink stores one offloaded blob.
type offloadSink struct {
	o      *offloader
	ctx    context.Context
	id     string
	w      OffloadWriter
	value  blobdecode.Value
	stored *offloaded
}

func (s *offloadSink) Write(p []byte) (int, error) { return s.w.Write(p) }

// Commit makes the blob visible and answers the resource_link's fields.
func (s *offloadSink) Commit(v blobdecode.Offloaded) (blobdecode.Link, error) {
	info, err := s.w.Commit(s.ctx)
	if err != nil {
		return blobdecode.Link{}, err
	}
	s.stored.add(s.id)
	s.o.metrics.Offloaded(info.Size)
	mt := v.MimeType
	if mt == "" {
		mt = info.MediaType
	}
	uri := OffloadURIPrefix + s.id
	return blobdecode.Link{URI: uri, Name: linkName(v, uri), MimeType: mt, Size: info.Size,
		Description: "Stored by the mcpblob gateway: read it with resources/read or resources/stream"}, nil
}

func (s *offloadSink) Abort() { s.w.Abort() }

// linkName is the resource_link's name: the embedded resource's last path
// segment, else the content type and the id.
func linkName(v blobdecode.Offloaded, uri string) string {
	if v.URI != "" {
		if base := path.Base(v.URI); base != "." && base != "/" && len(base) <= 255 {
			return base
		}
	}
	kind := v.Type
	if kind == "" {
		kind = "blob"
	}
	return kind + "-" + strings.TrimPrefix(uri, OffloadURIPrefix)[:8]
}
