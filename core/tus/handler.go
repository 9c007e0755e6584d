package tus

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// Version is the protocol version served, the only one.
const Version = "1.0.0"

// Extensions lists the extensions served, as Tus-Extension names them.
const Extensions = "creation,creation-with-upload,creation-defer-length,termination,expiration,checksum,concatenation"

// Defaults of Config.
const (
	DefaultSegmentSize = 8 << 20
	DefaultTTL         = 24 * time.Hour
)

// Config configures a Handler.
type Config struct {
	// Records holds the uploads' state and bytes (required).
	Records storage.Recorder
	// Base is the path of the creation endpoint, ending in '/'; an upload's
	// URL is Base + id (e.g. "/v1/tus/").
	Base string
	// MaxSize is Tus-Max-Size, the largest upload in bytes (required).
	MaxSize int64
	// SegmentSize is the size of the records that hold the bytes: the
	// memory one PATCH holds, and the most a cut connection loses.
	SegmentSize int
	// TTL is how long an upload lives after its last change.
	TTL time.Duration
	// Prefix names the records ("tus" by default).
	Prefix string
	// Admit checks a new upload's metadata and length (the surface's
	// naming and limits); a non-nil Error refuses the creation.
	Admit func(u *Upload) *Error
	// Stager holds the bytes of uploads that name their object when
	// created, where the object will live (storage.Stager); nil keeps
	// every upload's bytes in records. Its SegmentSize is at least the
	// store's part minimum.
	Stager storage.Stager
	// Begin starts the staged write of a new upload's object (in the
	// caller's view of the store) and returns its id, for Stager's other
	// methods; a non-nil Error refuses the creation. Called when Stager
	// is set, for an upload that is not a partial one of a concatenation.
	Begin func(ctx context.Context, u *Upload) (string, *Error)
	// Complete stores a complete upload's bytes (through storage/ingest)
	// and returns what Upload.Result keeps (the stored key); a non-nil
	// Error refuses the upload, which is then removed.
	Complete func(ctx context.Context, u *Upload, data Data) (string, *Error)
	// Now is the clock (time.Now by default).
	Now func() time.Time
}

// Handler serves the tus protocol on Config's records. It keeps no state
// another node needs: every node sharing the records serves every upload
// (its copies of records, recentUploads, only save reads).
type Handler struct {
	Config
	rec    storage.Recorder
	prefix string
	recent recentUploads
}

// New returns a Handler; zero fields of cfg take their defaults.
func New(cfg Config) *Handler {
	if cfg.SegmentSize <= 0 {
		cfg.SegmentSize = DefaultSegmentSize
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "tus"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Stager != nil {
		cfg.SegmentSize = max(cfg.SegmentSize, cfg.Stager.StagedPartMin())
	}
	return &Handler{Config: cfg, rec: cfg.Records, prefix: cfg.Prefix}
}

// Request is one tus request, whatever the transport.
type Request struct {
	Method string
	// ID is the upload's id (the path after Base); "" for Base itself.
	ID string
	// Header returns a request header's value ("" when absent).
	Header func(name string) string
	// Body is the request body (PATCH, creation-with-upload).
	Body io.Reader
	// ContentLength is the declared body length, -1 when unknown.
	ContentLength int64
	// Principal is the authenticated caller, who owns what it creates.
	Principal string
}

// Response is the answer: a status, headers, and for a refusal an error
// code and message for the surface's JSON error body.
type Response struct {
	Status int
	Header [][2]string
	*Error
}

// Error is a refusal in the protocol's terms.
type Error struct {
	Status  int
	Code    string
	Message string
	// Err is an internal cause, for the log only.
	Err error
}

func (e *Error) Error() string { return e.Message }

func refuse(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg}
}

func internal(err error) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error", Err: err}
}

func (r *Response) set(name, value string) { r.Header = append(r.Header, [2]string{name, value}) }

// Serve answers one request. Tus-Resumable is set on every answer.
func (h *Handler) Serve(ctx context.Context, req Request) Response {
	resp := Response{}
	resp.set("Tus-Resumable", Version)
	if req.Method == http.MethodOptions {
		h.options(&resp)
		return resp
	}
	if v := req.Header("Tus-Resumable"); v != Version {
		resp.set("Tus-Version", Version)
		resp.Error = refuse(http.StatusPreconditionFailed, "unsupported_version",
			"Tus-Resumable must be 1.0.0, the version this server speaks")
		resp.Status = resp.Error.Status
		return resp
	}
	var err *Error
	switch {
	case req.ID == "" && req.Method == http.MethodPost:
		err = h.create(ctx, req, &resp)
	case req.ID == "":
		err = methodNotAllowed(&resp, "POST, OPTIONS")
	case !ValidID(req.ID):
		err = refuse(http.StatusNotFound, "not_found", "no such upload")
	case req.Method == http.MethodHead:
		err = h.head(ctx, req, &resp)
	case req.Method == http.MethodPatch:
		err = h.patch(ctx, req, &resp)
	case req.Method == http.MethodDelete:
		err = h.terminate(ctx, req, &resp)
	default:
		err = methodNotAllowed(&resp, "HEAD, PATCH, DELETE, OPTIONS")
	}
	if err != nil {
		resp.Error, resp.Status = err, err.Status
	}
	return resp
}

func methodNotAllowed(resp *Response, allow string) *Error {
	resp.set("Allow", allow)
	return refuse(http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed; use "+allow)
}

func (h *Handler) options(resp *Response) {
	resp.Status = http.StatusNoContent
	resp.set("Tus-Version", Version)
	resp.set("Tus-Extension", Extensions)
	resp.set("Tus-Max-Size", strconv.FormatInt(h.MaxSize, 10))
	resp.set("Tus-Checksum-Algorithm", strings.Join(Algorithms, ","))
}

// lookup loads the caller's upload: someone else's answers 404 as a
// missing one does, an expired one 410 (and is removed).
func (h *Handler) lookup(ctx context.Context, req Request) (*Upload, *Error) {
	u, err := h.load(ctx, req.ID)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, refuse(http.StatusNotFound, "not_found", "no such upload")
	case err != nil:
		return nil, internal(err)
	case u.Owner != req.Principal:
		return nil, refuse(http.StatusNotFound, "not_found", "no such upload")
	case u.Expired || !h.Now().Before(u.Expires):
		_, _ = h.sweepOne(context.WithoutCancel(ctx), u.ID)
		return nil, refuse(http.StatusGone, "expired", "the upload expired")
	}
	return u, nil
}

// describe sets the headers that tell an upload's state.
func (h *Handler) describe(u *Upload, resp *Response) {
	resp.set("Upload-Offset", strconv.FormatInt(u.Offset, 10))
	if u.Length >= 0 {
		resp.set("Upload-Length", strconv.FormatInt(u.Length, 10))
	} else {
		resp.set("Upload-Defer-Length", "1")
	}
	if !u.Done {
		resp.set("Upload-Expires", u.Expires.UTC().Format(http.TimeFormat))
	}
}

func (h *Handler) head(ctx context.Context, req Request, resp *Response) *Error {
	u, err := h.lookup(ctx, req)
	if err != nil {
		return err
	}
	if u.complete() && !u.Done && !u.Partial {
		if err := h.finish(ctx, u); err != nil {
			return err
		}
	}
	h.remember(u)
	h.describe(u, resp)
	resp.set("Cache-Control", "no-store")
	if u.RawMetadata != "" {
		resp.set("Upload-Metadata", u.RawMetadata)
	}
	if c := h.concatHeader(u); c != "" {
		resp.set("Upload-Concat", c)
	}
	resp.Status = http.StatusOK
	return nil
}

func (h *Handler) concatHeader(u *Upload) string {
	switch {
	case u.Partial:
		return "partial"
	case u.Final():
		urls := make([]string, len(u.Parts))
		for i, p := range u.Parts {
			urls[i] = h.Base + p
		}
		return "final;" + strings.Join(urls, " ")
	}
	return ""
}

func (h *Handler) terminate(ctx context.Context, req Request, resp *Response) *Error {
	u, err := h.lookup(ctx, req)
	if err != nil {
		return err
	}
	h.recent.drop(u.ID)
	if err := h.remove(context.WithoutCancel(ctx), u); err != nil {
		return internal(err)
	}
	resp.Status = http.StatusNoContent
	return nil
}
