package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"
)

// Sentinel errors. Backends wrap them with the operation and key
// (fmt.Errorf("localfs: open %q: %w", key, ErrNotFound)); callers test with errors.Is.
var (
	ErrNotFound      = errors.New("storage: object not found")
	ErrInvalidKey    = errors.New("storage: invalid key")
	ErrTooLarge      = errors.New("storage: object too large")
	ErrExists        = errors.New("storage: object already exists")
	ErrInvalidRange  = errors.New("storage: range not satisfiable")
	ErrClosed        = errors.New("storage: writer already committed or aborted")
	ErrInvalidCursor = errors.New("storage: invalid list cursor")
	// ErrPathConflict reports a key that would be both an object and a
	// folder of objects ("a" and "a/b"); see PathConflictError.
	ErrPathConflict = errors.New("storage: key conflicts with another key's path")
	// ErrInvalidFilename reports a filename that breaks the filename rules
	// (ValidateFilename).
	ErrInvalidFilename = errors.New("storage: invalid filename")
	// ErrInvalidMediaType reports a media type over MaxMediaTypeLen bytes
	// or with control characters.
	ErrInvalidMediaType = errors.New("storage: invalid media type")
	// ErrSizeMismatch reports that the bytes written differ from
	// CreateOptions.Size; nothing is stored.
	ErrSizeMismatch = errors.New("storage: size does not match the declared size")
	// ErrInsufficientStorage reports a store out of space or quota (the
	// local store's ENOSPC and EDQUOT, MinIO's XMinioStorageFull, HTTP
	// 507): the server's failure, not the caller's; nothing is stored.
	// The operating system's error stays in the chain.
	ErrInsufficientStorage = errors.New("storage: insufficient storage")
)

// Info describes a stored object.
type Info struct {
	Key       string    // the object's key, see ValidateKey
	Size      int64     // bytes
	MediaType string    // e.g. "application/pdf"; "application/octet-stream" when unknown
	Filename  string    // original filename, may be empty
	SHA256    string    // lower-case hex digest of the whole object
	ETag      string    // strong validator, quoted as in HTTP ("\"...\"")
	ModTime   time.Time // time of the commit that made this version visible
	// Expires is when the object stops existing for readers (its
	// ttlSeconds, see storage/lifecycle); zero: never. Backends store it
	// with the object; they do not act on it themselves.
	Expires time.Time
}

// Range selects bytes [Offset, Offset+Length) of an object. Length < 0 means
// "to the end"; Length == 0 selects nothing. A negative Offset, or one at or
// past the end of a non-empty object, gives ErrInvalidRange; a range that runs
// past the end is clipped. Every range of an empty object selects nothing and
// is not an error.
type Range struct {
	Offset int64
	Length int64
}

// Clip resolves r against an object of size bytes and returns the offset and
// length to read, following the rules on Range. Errors wrap ErrInvalidRange.
func (r Range) Clip(size int64) (offset, length int64, err error) {
	switch {
	case r.Offset < 0:
		return 0, 0, fmt.Errorf("%w: offset %d is negative", ErrInvalidRange, r.Offset)
	case size == 0:
		return 0, 0, nil
	case r.Offset >= size:
		return 0, 0, fmt.Errorf("%w: offset %d is not below size %d", ErrInvalidRange, r.Offset, size)
	}
	length = size - r.Offset
	if r.Length >= 0 && r.Length < length {
		length = r.Length
	}
	return r.Offset, length, nil
}

// MaxMediaTypeLen bounds a stored media type, parameters included (S3
// refuses long Content-Type headers with a server error).
const MaxMediaTypeLen = 255

// DefaultMediaType is the media type of objects created without one.
const DefaultMediaType = "application/octet-stream"

// CreateOptions are the optional parameters of Backend.Create. The zero value
// stores an object of unknown size with media type application/octet-stream.
type CreateOptions struct {
	MediaType   string // default DefaultMediaType
	Filename    string // original filename, kept in Info (see ValidateFilename)
	Size        int64  // exact size when known (> 0), else 0 = unknown; other sizes fail with ErrSizeMismatch
	MaxSize     int64  // Write fails with ErrTooLarge once more bytes arrive; 0 = no limit
	IfNotExists bool   // Commit fails with ErrExists when the key already exists
	// Expires is stored with the object and comes back as Info.Expires
	// (to the millisecond); zero: no expiry. Backends keep it, storage/lifecycle
	// acts on it.
	Expires time.Time
}

// Normalize returns o with its defaults applied, or an error for options
// that no backend accepts: a negative Size or MaxSize, a Size above MaxSize
// (wrapping ErrTooLarge), a MediaType over MaxMediaTypeLen bytes or with
// control characters (wrapping ErrInvalidMediaType), or a
// Filename that breaks the filename rules (a *FilenameError), or an
// Expires before 1970 (a set one is cut to the millisecond). Backends
// call it in Create; servers may call it first to fail before reading a body.
func (o CreateOptions) Normalize() (CreateOptions, error) {
	switch {
	case o.Size < 0 || o.MaxSize < 0:
		return o, errors.New("storage: negative size or size limit")
	case o.MaxSize > 0 && o.Size > o.MaxSize:
		return o, fmt.Errorf("%w: declared size %d is above the limit %d", ErrTooLarge, o.Size, o.MaxSize)
	case len(o.MediaType) > MaxMediaTypeLen:
		return o, fmt.Errorf("%w: longer than %d bytes", ErrInvalidMediaType, MaxMediaTypeLen)
	case strings.ContainsFunc(o.MediaType, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return o, fmt.Errorf("%w: %q has control characters", ErrInvalidMediaType, o.MediaType)
	case !o.Expires.IsZero() && o.Expires.Unix() <= 0:
		return o, errors.New("storage: expiry before 1970")
	}
	if err := ValidateFilename(o.Filename); err != nil {
		return o, err
	}
	if o.MediaType == "" {
		o.MediaType = DefaultMediaType
	}
	if !o.Expires.IsZero() {
		o.Expires = time.UnixMilli(o.Expires.UnixMilli())
	}
	return o, nil
}

// Writer streams a new object. Nothing is visible under the key until Commit
// succeeds; Abort (or a failed Commit) leaves the store as it was. After
// Commit or Abort every method returns ErrClosed; Abort after Commit is a no-op
// that returns ErrClosed, so `defer w.Abort(ctx)` is always safe.
//
// A failed Write (ErrTooLarge, ErrSizeMismatch, an I/O error, the Create
// context ending) discards what was written: later Writes and Commit return
// that error, and Abort releases what is left. A Writer is meant for one
// goroutine, but Abort may be called from another to stop a blocked Write.
type Writer interface {
	io.Writer
	// Written reports the number of bytes accepted so far.
	Written() int64
	// Commit makes the object visible and returns its final Info.
	Commit(ctx context.Context) (Info, error)
	// Abort discards everything written.
	Abort(ctx context.Context) error
}

// Page is one page of a List result. NextCursor is empty on the last page.
type Page struct {
	Items      []Info
	NextCursor string
}

// Backend is a blob store. Every method takes a context first and validates
// the key with ValidateKey before touching storage.
type Backend interface {
	// Stat returns the Info of key, or ErrNotFound.
	Stat(ctx context.Context, key string) (Info, error)
	// Open returns the object's bytes (all of them when rng is nil) and its
	// Info. Local backends return an *os.File when rng is nil and a
	// *LimitedFile for a range, so servers can use sendfile.
	Open(ctx context.Context, key string, rng *Range) (io.ReadCloser, Info, error)
	// Create starts a streaming write of key. ctx bounds the whole write:
	// once it is done, Write and Commit fail and nothing is stored. Keys
	// are paths: while an object "a" exists no key "a/…" can be created,
	// and the reverse; Create (or Commit, when the conflict appears
	// meanwhile) fails with a *PathConflictError.
	Create(ctx context.Context, key string, opts CreateOptions) (Writer, error)
	// Delete removes key; a missing key gives ErrNotFound.
	Delete(ctx context.Context, key string) error
	// List returns up to limit objects whose keys start with prefix, in key
	// order, starting after cursor (an opaque string from a previous Page, or "").
	// A limit <= 0 selects the backend's default page size.
	List(ctx context.Context, prefix, cursor string, limit int) (Page, error)
	// Close releases the backend's resources.
	Close() error
}

// PresignOptions shape a presigned URL's response.
type PresignOptions struct {
	ContentType        string // response Content-Type override (GET)
	ContentDisposition string // response Content-Disposition override (GET)
}

// Presigner is implemented by backends that can mint self-authenticating URLs
// (storage/s3). Callers discover it with a type assertion.
type Presigner interface {
	PresignGet(ctx context.Context, key string, ttl time.Duration, opts PresignOptions) (*url.URL, error)
	PresignPut(ctx context.Context, key string, ttl time.Duration, opts PresignOptions) (*url.URL, error)
}

// LimitedFile is what local backends return from a ranged Open: File is
// positioned at the range start and reads stop after N bytes. Servers hand
// &LimitedReader to fasthttp, which recognises an *io.LimitedReader over an
// *os.File and uses sendfile.
type LimitedFile struct {
	io.LimitedReader // R is File
	File             *os.File
}

// NewLimitedFile returns a LimitedFile reading n bytes of f from its current offset.
func NewLimitedFile(f *os.File, n int64) *LimitedFile {
	return &LimitedFile{LimitedReader: io.LimitedReader{R: f, N: n}, File: f}
}

// Close closes the underlying file.
func (f *LimitedFile) Close() error { return f.File.Close() }

// StaleRemover is a store that removes what crashed writers left behind
// (S3: incomplete multipart uploads), called by the lifecycle sweeper on
// the rounds it sweeps; it reports how many things it removed.
type StaleRemover interface {
	RemoveStale(ctx context.Context) int
}
