package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// Sentinel errors. Problems a client caused are [*Error] values wrapping one
// of them; test with errors.Is.
var (
	ErrTooLarge     = errors.New("ingest: file too large")
	ErrEmpty        = errors.New("ingest: file is empty")
	ErrNotAccepted  = errors.New("ingest: media type not accepted")
	ErrTypeMismatch = errors.New("ingest: content does not match the declared media type")
)

// Error is a problem with an upload that its sender caused. Err is one of
// the sentinels; Detail is the user-facing phrase, such as
// `file is larger than maxSize 1000 bytes` or
// `content is image/gif, not the declared media type "image/png"`.
type Error struct {
	Err    error
	Detail string
}

func (e *Error) Error() string { return "ingest: " + e.Detail }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Spec says what an upload must satisfy. The zero value (with a Key) stores
// any non-empty content of any size as application/octet-stream.
type Spec struct {
	Key string
	// MediaType is the declared media type, which may carry
	// "; charset=..."; "" means storage.DefaultMediaType.
	MediaType string
	Filename  string
	// Size is the exact size when known (> 0), else 0 (storage.CreateOptions
	// semantics): more bytes fail Write, fewer fail Close, both with an
	// error wrapping storage.ErrSizeMismatch.
	Size int64
	// MaxSize bounds the upload; 0 means no limit. More bytes fail Write
	// with an error wrapping ErrTooLarge.
	MaxSize int64
	// Accept lists media ranges (codec.MatchAccept) and dot-extensions
	// matched against Filename; nil accepts any type. The declared type is
	// checked by Begin, before any byte; the sniffed type by Close.
	Accept      []string
	IfNotExists bool
	// Expires is the blob's expiry (storage.CreateOptions.Expires, from
	// a client's ttlSeconds); zero: none.
	Expires time.Time

	// AllowEmpty stores an empty upload instead of failing Close with
	// ErrEmpty (the control API's PUT, whose callers may store empty blobs).
	AllowEmpty bool
	// NoSniff skips the content checks of Close (ErrTypeMismatch and the
	// sniffed type against Accept) and keeps the declared type as given:
	// for callers that are servers storing bytes they know (the control
	// API's PUT).
	NoSniff bool
}

// state is where an Upload is in its life.
type state uint8

const (
	writing state = iota
	closed
	committed
	aborted
)

// Upload is one upload in progress, from [Begin] to Commit or Abort. It is
// meant for one goroutine; to stop a Write blocked on a stalled store from
// another goroutine, cancel the context given to Begin.
type Upload struct {
	spec      Spec // normalized: MediaType set
	base      string
	ext       string // the listed extension that admitted a declared octet-stream (acceptDeclared)
	w         storage.Writer
	aw        *AsyncWriter
	n         int64
	head      []byte
	err       error // sticky failure of Write or Close
	mediaType string
	st        state
}

// Begin checks spec and creates the storage.Writer for it under ctx, which
// bounds the whole write (storage.Backend.Create). Errors come before any
// byte is read: options no backend accepts, a declared type outside
// Accept (an [*Error] wrapping ErrNotAccepted), or the backend's Create
// error (storage.ErrInvalidKey, storage.ErrTooLarge for a Size above
// MaxSize, ...) wrapped.
func Begin(ctx context.Context, be storage.Backend, spec Spec) (*Upload, error) {
	u, opts, err := prepare(spec)
	if err != nil {
		return nil, err
	}
	w, err := be.Create(ctx, spec.Key, opts)
	if err != nil {
		return nil, fmt.Errorf("ingest: begin %q: %w", spec.Key, err)
	}
	u.w, u.aw, u.head = w, NewAsyncWriter(w), make([]byte, 0, SniffLen)
	return u, nil
}

// prepare applies Begin's checks to spec, before anything is stored, and
// returns the upload without its writer and the options to create it.
func prepare(spec Spec) (*Upload, storage.CreateOptions, error) {
	opts, err := storage.CreateOptions{MediaType: spec.MediaType, Filename: spec.Filename, Size: spec.Size,
		MaxSize: spec.MaxSize, IfNotExists: spec.IfNotExists, Expires: spec.Expires}.Normalize()
	if err != nil {
		return nil, opts, fmt.Errorf("ingest: begin %q: %w", spec.Key, err)
	}
	spec.MediaType = opts.MediaType
	base, _, _ := strings.Cut(spec.MediaType, ";")
	base = strings.TrimSpace(base)
	ok, ext := acceptDeclared(spec.Accept, base, spec.Filename)
	if !ok {
		return nil, opts, &Error{Err: ErrNotAccepted, Detail: acceptDetail(base, spec.Accept)}
	}
	return &Upload{spec: spec, base: base, ext: ext, mediaType: spec.MediaType}, opts, nil
}

// admit counts k more bytes against MaxSize and Size; on a breach it makes
// the upload fail for good and returns the error.
func (u *Upload) admit(k int) error {
	switch {
	case u.spec.MaxSize > 0 && u.n+int64(k) > u.spec.MaxSize:
		u.fail(&Error{Err: ErrTooLarge, Detail: fmt.Sprintf("file is larger than maxSize %d bytes", u.spec.MaxSize)})
	case u.spec.Size > 0 && u.n+int64(k) > u.spec.Size:
		u.fail(fmt.Errorf("ingest: write %q: more than the declared %d bytes: %w", u.spec.Key, u.spec.Size, storage.ErrSizeMismatch))
	default:
		return nil
	}
	return u.err
}

// fail records err as the upload's sticky failure and stops the writes to
// storage.
func (u *Upload) fail(err error) {
	if u.err == nil {
		u.err = err
	}
	u.aw.stop(u.err)
}

// sticky returns why Write can take no more bytes, or nil.
func (u *Upload) sticky() error {
	if u.err != nil {
		return u.err
	}
	if u.st != writing {
		return fmt.Errorf("ingest: write %q after Close: %w", u.spec.Key, storage.ErrClosed)
	}
	if err := u.aw.failed(); err != nil {
		u.err = fmt.Errorf("ingest: write %q: %w", u.spec.Key, err)
		return u.err
	}
	return nil
}

// keep records p as written: counted, and its start kept for sniffing.
func (u *Upload) keep(p []byte) {
	if len(u.head) < SniffLen {
		u.head = append(u.head, p[:min(len(p), SniffLen-len(u.head))]...)
	}
	u.n += int64(len(p))
}

// Write takes the next bytes of the upload. It fails, and the upload with
// it, once more than MaxSize bytes (an [*Error] wrapping ErrTooLarge) or
// more than Size bytes arrived, or when storage failed; the chunks are
// written by another goroutine, so a storage error surfaces on a later
// Write or on Close.
func (u *Upload) Write(p []byte) (int, error) {
	if err := u.sticky(); err != nil {
		return 0, err
	}
	if err := u.admit(len(p)); err != nil {
		return 0, err
	}
	u.keep(p)
	if _, err := u.aw.Write(p); err != nil {
		return 0, u.sticky()
	}
	return len(p), nil
}

// ReadFrom reads r to its end straight into the chunks handed to storage
// (io.Copy uses it), with the checks of Write. It returns the bytes taken
// and the first error of r, of the checks or of storage.
func (u *Upload) ReadFrom(r io.Reader) (int64, error) {
	if err := u.sticky(); err != nil {
		return 0, err
	}
	n, err := u.aw.ReadFrom(&admitReader{r: r, u: u})
	switch {
	case u.err != nil: // a check failed
		return n, u.err
	case err != nil && errors.Is(err, u.aw.failed()): // storage failed
		return n, u.sticky()
	}
	return n, err // nil, or r's error
}

// admitReader applies Write's checks to what ReadFrom reads.
type admitReader struct {
	r io.Reader
	u *Upload
}

func (a *admitReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		if aerr := a.u.admit(n); aerr != nil {
			return 0, aerr
		}
		a.u.keep(p[:n])
	}
	return n, err
}

// Written returns the number of bytes taken so far.
func (u *Upload) Written() int64 { return u.n }

// Head returns the first bytes taken (up to [SniffLen]); the caller must
// not modify them.
func (u *Upload) Head() []byte { return u.head }

// Close flushes what is buffered, waits until storage has written it, and
// checks the upload: the first failure of Write or storage; fewer bytes
// than Size (storage.ErrSizeMismatch); then, as [*Error] values, an empty
// upload (ErrEmpty, unless AllowEmpty), content contradicting the declared
// type where sniffing is reliable (ErrTypeMismatch) and a sniffed type
// outside Accept (ErrNotAccepted), both unless NoSniff. After a successful
// Close, MediaType returns the type to store. After a failed one, call
// Abort. Close does not make anything visible; later calls return the same.
func (u *Upload) Close() error {
	if u.st != writing {
		if u.err == nil && u.st == aborted {
			return fmt.Errorf("ingest: close %q after Abort: %w", u.spec.Key, storage.ErrClosed)
		}
		return u.err
	}
	u.st = closed
	if err := u.aw.Close(); err != nil && u.err == nil {
		u.err = fmt.Errorf("ingest: write %q: %w", u.spec.Key, err)
	}
	if u.err == nil {
		u.err = u.check()
	}
	return u.err
}

// check applies Close's rules to the complete upload.
func (u *Upload) check() error {
	if u.spec.Size > 0 && u.n != u.spec.Size {
		return fmt.Errorf("ingest: close %q: wrote %d of the %d bytes declared: %w", u.spec.Key, u.n, u.spec.Size, storage.ErrSizeMismatch)
	}
	if u.n == 0 {
		if u.spec.AllowEmpty {
			return nil
		}
		return &Error{Err: ErrEmpty, Detail: "file is empty"}
	}
	if u.spec.NoSniff {
		return nil
	}
	detail, storeAs := ContentProblem(u.base, u.n, u.head)
	if detail != "" {
		return &Error{Err: ErrTypeMismatch, Detail: detail}
	}
	if u.ext != "" {
		if detail := markupProblem(u.spec.Accept, u.ext, u.head); detail != "" {
			return &Error{Err: ErrNotAccepted, Detail: detail}
		}
	}
	if got := Sniff(u.head); got != "" && got != canonical(u.base) && !sniffedAccepted(u.spec.Accept, got, u.spec.Filename) {
		return &Error{Err: ErrNotAccepted, Detail: acceptDetail(got, u.spec.Accept)}
	}
	if storeAs != u.base {
		u.mediaType = storeAs
	}
	return nil
}

// MediaType returns the media type the upload should be stored as: the
// declared one (normalized, parameters kept), or after a successful Close
// the sniffed type when application/octet-stream was declared. Commit
// stores the type given to Begin (a backend fixes an object's type at
// Create), so callers that want the upgraded type create the object after
// Close from a spool, or with ContentProblem ahead of Begin.
func (u *Upload) MediaType() string { return u.mediaType }

// Commit makes the upload visible after a successful Close and returns its
// Info. Its errors (storage.ErrExists with IfNotExists, ...) are wrapped;
// after a failed Commit nothing is visible and the upload is over.
func (u *Upload) Commit(ctx context.Context) (storage.Info, error) {
	switch {
	case u.st == writing:
		return storage.Info{}, fmt.Errorf("ingest: commit %q before Close: %w", u.spec.Key, storage.ErrClosed)
	case u.st != closed:
		return storage.Info{}, fmt.Errorf("ingest: commit %q after Commit or Abort: %w", u.spec.Key, storage.ErrClosed)
	case u.err != nil:
		return storage.Info{}, u.err
	}
	info, err := u.w.Commit(ctx)
	if err != nil {
		_ = u.w.Abort(context.WithoutCancel(ctx))
		u.st = aborted
		return storage.Info{}, fmt.Errorf("ingest: commit %q: %w", u.spec.Key, err)
	}
	u.st = committed
	return info, nil
}

// Abort discards the upload: nothing becomes visible. It is always safe:
// after Commit, or a second time, it does nothing.
func (u *Upload) Abort() {
	if u.st == committed || u.st == aborted {
		return
	}
	if u.err == nil {
		u.err = fmt.Errorf("ingest: upload %q aborted: %w", u.spec.Key, storage.ErrClosed)
	}
	u.aw.stop(u.err)
	// Abort first: it stops a storage Write the goroutine may be blocked in.
	_ = u.w.Abort(context.Background())
	_ = u.aw.Close()
	u.st = aborted
}

// Store stores src under spec.Key: Begin, copy, Close and Commit, aborting
// on any failure, so that nothing is visible unless it returns nil. Errors
// are those of the four steps, or src's own read error.
func Store(ctx context.Context, be storage.Backend, spec Spec, src io.Reader) (storage.Info, error) {
	u, err := Begin(ctx, be, spec)
	if err != nil {
		return storage.Info{}, err
	}
	defer u.Abort()
	if _, err := io.Copy(u, src); err != nil {
		return storage.Info{}, err
	}
	if err := u.Close(); err != nil {
		return storage.Info{}, err
	}
	return u.Commit(ctx)
}
