package offload

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/mcpblob/mcpblob/core/gateway/blobdecode"
)

// DefaultOver is the CLI's --offload-over: blobs over 1 MiB decoded
// leave the answer. An answer in flight holds at most about three times
// the threshold while Rewrite decides (blobdecode.RewriteOptions), so 1 MiB
// keeps the gateway's memory flat under many concurrent answers while the
// small images and icons a model looks at stay inline.
const DefaultOver = 1 << 20

// URIPrefix is the URI prefix of offloaded blobs: the gateway answers
// resources/read and resources/stream of these URIs itself.
const URIPrefix = "mcpblob:///offload/"

// Options configure offloading; the zero value is off.
type Options struct {
	// Over is the decoded size above which an embedded blob is offloaded;
	// 0: no offloading (the CLI's default is DefaultOver).
	Over int64
	// Store keeps the offloaded blobs. Required with Over.
	Store Store
}

// Store keeps offloaded blobs, each readable only by the principal whose
// call stored it (core/server's: the server's storage backend through
// storage/ingest, in the principal's namespace).
type Store interface {
	// Create begins principal's blob id; mediaType is "" when the upstream
	// has not given it yet. Nothing is visible before Commit.
	Create(ctx context.Context, principal, id, mediaType string) (Writer, error)
	// Open returns principal's blob id and its facts, or an error wrapping
	// ErrNotFound.
	Open(ctx context.Context, principal, id string) (io.ReadCloser, Info, error)
	// Link returns a short-lived URL of principal's blob id's raw bytes
	// (Range requests, possibly a redirect to the store), or an error
	// wrapping ErrNotFound.
	Link(ctx context.Context, principal, id string) (string, Info, error)
	// Delete removes principal's blob id.
	Delete(ctx context.Context, principal, id string) error
}

// Writer is one offloaded blob being stored.
type Writer interface {
	io.Writer
	// Commit makes the blob visible.
	Commit(ctx context.Context) (Info, error)
	// Abort discards it (safe after Commit: it does nothing then).
	Abort()
}

// Info describes a stored offloaded blob.
type Info struct {
	Size      int64
	MediaType string
}

// ErrNotFound means the caller has no offloaded blob of that id.
var ErrNotFound = errors.New("gateway: no such offloaded blob")

// Metrics is implemented by a gateway Metrics that counts offloads
// (core/metrics does).
type Metrics interface {
	// Offloaded records one blob of n decoded bytes moved to the store.
	Offloaded(n int64)
}

// Offloader is the gateway's offloading state.
type Offloader struct {
	opts    Options
	metrics Metrics
}

// New checks o and returns its Offloader, nil when offloading is off;
// metrics may be nil.
func New(o Options, metrics Metrics) (*Offloader, error) {
	if o.Over <= 0 {
		return nil, nil
	}
	if o.Store == nil {
		return nil, errors.New("gateway: Options.Offload.Store is required with Offload.Over")
	}
	if metrics == nil {
		metrics = noMetrics{}
	}
	return &Offloader{opts: o, metrics: metrics}, nil
}

type noMetrics struct{}

func (noMetrics) Offloaded(int64) {}

// Store returns the store of the offloaded blobs.
func (o *Offloader) Store() Store { return o.opts.Store }

// ID reads the id of an offloaded blob's URI; ok is false for any other
// URI.
func ID(uri string) (id string, ok bool) {
	id, ok = strings.CutPrefix(uri, URIPrefix)
	if !ok || len(id) != 32 {
		return "", false
	}
	if _, err := hex.DecodeString(id); err != nil {
		return "", false
	}
	return id, true
}

// Rewrite returns blobdecode's options for one answer of principal, and
// the record of the blobs it stored.
func (o *Offloader) Rewrite(ctx context.Context, principal string) (blobdecode.RewriteOptions, *Stored) {
	stored := &Stored{store: o.opts.Store, principal: principal}
	return blobdecode.RewriteOptions{Threshold: o.opts.Over, Open: func(v blobdecode.Value) (blobdecode.Sink, error) {
		var b [16]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		w, err := o.opts.Store.Create(ctx, principal, id, v.MimeType)
		if err != nil {
			return nil, err
		}
		return &sink{o: o, ctx: ctx, id: id, w: w, stored: stored}, nil
	}}, stored
}

// Stored records the blobs one answer stored, so that an answer that
// fails after some were committed leaves none behind.
type Stored struct {
	store     Store
	principal string
	mu        sync.Mutex
	ids       []string
}

func (s *Stored) add(id string) {
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
}

// Remove deletes the blobs stored so far.
func (s *Stored) Remove() {
	s.mu.Lock()
	ids := s.ids
	s.ids = nil
	s.mu.Unlock()
	for _, id := range ids {
		_ = s.store.Delete(context.Background(), s.principal, id)
	}
}

// sink stores one offloaded blob.
type sink struct {
	o      *Offloader
	ctx    context.Context
	id     string
	w      Writer
	stored *Stored
}

func (s *sink) Write(p []byte) (int, error) { return s.w.Write(p) }

// Commit makes the blob visible and answers the resource_link's fields.
func (s *sink) Commit(v blobdecode.Offloaded) (blobdecode.Link, error) {
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
	uri := URIPrefix + s.id
	return blobdecode.Link{URI: uri, Name: linkName(v, uri), MimeType: mt, Size: info.Size,
		Description: "Stored by the mcpblob gateway: read it with resources/read or resources/stream"}, nil
}

func (s *sink) Abort() { s.w.Abort() }

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
	return kind + "-" + strings.TrimPrefix(uri, URIPrefix)[:8]
}

// ReadAnswer is the resources/read answer, for the request id, of the
// offloaded blob uri described by info: prefix, then the blob as base64
// (blobdecode.Encode), then suffix, size bytes in all. modern adds the
// 2026-07-28 era's resultType.
func ReadAnswer(id json.RawMessage, uri string, info Info, modern bool) (prefix, suffix []byte, size int64) {
	content, _ := json.Marshal(map[string]string{"uri": uri, "mimeType": info.MediaType})
	prefix = append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	prefix = append(prefix, `,"result":{`...)
	if modern {
		prefix = append(prefix, `"resultType":"complete",`...)
	}
	prefix = append(prefix, `"contents":[`...)
	prefix = append(prefix, content[:len(content)-1]...)
	prefix = append(prefix, `,"blob":"`...)
	suffix = []byte(`"}]}}`)
	return prefix, suffix, int64(len(prefix)) + (info.Size+2)/3*4 + int64(len(suffix))
}
