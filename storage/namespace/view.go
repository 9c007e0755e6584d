package namespace

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// View returns b confined to principal's namespace (see the package
// documentation). The result implements storage.Presigner exactly when b
// does, and no other optional interface. Closing it does not close b. An
// empty principal panics, as in Name.
func View(b storage.Backend, principal string) storage.Backend {
	v := &view{b: b, prefix: Join(Name(principal), "")}
	if p, ok := b.(storage.Presigner); ok {
		return presignView{v, p}
	}
	return v
}

// view is a Backend confined to the raw keys starting with prefix.
type view struct {
	b      storage.Backend
	prefix string // Prefix + name + "/"
}

// presignView is a view of a backend that presigns.
type presignView struct {
	*view
	p storage.Presigner
}

// maxPages bounds the backend pages one List reads past pages whose items
// were all left out.
const maxPages = 8

// raw validates the caller's key and returns its raw key.
func (v *view) raw(key string) (string, error) {
	if err := storage.ValidateKey(key); err != nil {
		return "", err
	}
	if len(v.prefix)+len(key) > storage.MaxKeyLen {
		limit := storage.MaxKeyLen - len(v.prefix)
		return "", &storage.KeyError{Key: key, Reason: fmt.Sprintf("longer than %d bytes, the limit in this namespace", limit)}
	}
	return v.prefix + key, nil
}

// info returns info with its key in the caller's terms.
func (v *view) info(info storage.Info) storage.Info {
	info.Key = strings.TrimPrefix(info.Key, v.prefix)
	return info
}

// Stat returns the Info of key.
func (v *view) Stat(ctx context.Context, key string) (storage.Info, error) {
	raw, err := v.raw(key)
	if err != nil {
		return storage.Info{}, err
	}
	info, err := v.b.Stat(ctx, raw)
	if err != nil {
		return storage.Info{}, v.fix(err, key)
	}
	return v.info(info), nil
}

// Open returns the object's bytes and Info.
func (v *view) Open(ctx context.Context, key string, rng *storage.Range) (io.ReadCloser, storage.Info, error) {
	raw, err := v.raw(key)
	if err != nil {
		return nil, storage.Info{}, err
	}
	rc, info, err := v.b.Open(ctx, raw, rng)
	if err != nil {
		return nil, storage.Info{}, v.fix(err, key)
	}
	return rc, v.info(info), nil
}

// Create starts a streaming write of key.
func (v *view) Create(ctx context.Context, key string, opts storage.CreateOptions) (storage.Writer, error) {
	raw, err := v.raw(key)
	if err != nil {
		return nil, err
	}
	w, err := v.b.Create(ctx, raw, opts)
	if err != nil {
		return nil, v.fix(err, key)
	}
	return &writer{w: w, v: v, key: key}, nil
}

// Delete removes key.
func (v *view) Delete(ctx context.Context, key string) error {
	raw, err := v.raw(key)
	if err != nil {
		return err
	}
	return v.fix(v.b.Delete(ctx, raw), key)
}

// List lists the namespace's objects whose keys start with prefix. Cursors
// pass through (see the package documentation).
func (v *view) List(ctx context.Context, prefix, cursor string, limit int) (storage.Page, error) {
	raw := v.prefix + prefix
	for range maxPages {
		page, err := v.b.List(ctx, raw, cursor, limit)
		if err != nil {
			return storage.Page{}, v.fix(err, prefix)
		}
		page.Items = v.visible(page.Items)
		if len(page.Items) > 0 || page.NextCursor == "" {
			return page, nil
		}
		cursor = page.NextCursor
	}
	return storage.Page{NextCursor: cursor}, nil
}

// visible rewrites items in place to the caller's keys, leaving out those
// the caller cannot address.
func (v *view) visible(items []storage.Info) []storage.Info {
	out := items[:0]
	for _, info := range items {
		key, ok := strings.CutPrefix(info.Key, v.prefix)
		if ok && storage.ValidateKey(key) == nil {
			info.Key = key
			out = append(out, info)
		}
	}
	return out
}

// Close does nothing: the backend is shared and stays open.
func (v *view) Close() error { return nil }

// PresignGet returns a URL that GETs key's raw key.
func (p presignView) PresignGet(ctx context.Context, key string, ttl time.Duration, opts storage.PresignOptions) (*url.URL, error) {
	raw, err := p.raw(key)
	if err != nil {
		return nil, err
	}
	u, err := p.p.PresignGet(ctx, raw, ttl, opts)
	return u, p.fix(err, key)
}

// PresignPut returns a URL that PUTs key's raw key.
func (p presignView) PresignPut(ctx context.Context, key string, ttl time.Duration, opts storage.PresignOptions) (*url.URL, error) {
	raw, err := p.raw(key)
	if err != nil {
		return nil, err
	}
	u, err := p.p.PresignPut(ctx, raw, ttl, opts)
	return u, p.fix(err, key)
}

// writer is a backend Writer whose errors and Info speak in the caller's key.
type writer struct {
	w   storage.Writer
	v   *view
	key string // the caller's key
}

func (w *writer) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		err = w.v.fix(err, w.key)
	}
	return n, err
}

func (w *writer) Written() int64 { return w.w.Written() }

func (w *writer) Commit(ctx context.Context) (storage.Info, error) {
	info, err := w.w.Commit(ctx)
	if err != nil {
		return storage.Info{}, w.v.fix(err, w.key)
	}
	return w.v.info(info), nil
}

func (w *writer) Abort(ctx context.Context) error {
	return w.v.fix(w.w.Abort(ctx), w.key)
}
