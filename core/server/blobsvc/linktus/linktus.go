package linktus

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/server/blobsvc/resumable"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/core/tus"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/ingest"
)

// Env is what the endpoints work with, given by package blobsvc, whose
// whole-body upload endpoint shares the checks and the signal.
type Env struct {
	Backend   storage.Backend // the whole store: objects under the token's key, records for the uploads
	Gate      *gate.Gate
	MaxUpload int64 // bounds a token's maxSize
	Logger    *slog.Logger
	// Claims verifies tok and checks the caller against it (its
	// principal, the upload page's sign-in); on refusal it answers and
	// reports false.
	Claims func(ctx *fasthttp.RequestCtx, tok string) (token.Claims, bool)
	// Reserve takes the token's upload id, once for good; on refusal it
	// answers and reports false. Release gives it back.
	Reserve func(ctx *fasthttp.RequestCtx, c token.Claims) bool
	Release func(c token.Claims)
	// Progress reports bytes received, Done a stored upload, to the
	// elicitation or request_upload waiting for the upload id.
	Progress func(uploadID string, n, total int64)
	Done     func(uploadID string, infos []storage.Info)
	// Created reports a tus upload created on the token's link (id is the
	// upload's, the last part of its URL); nil for none.
	Created func(c token.Claims, id string)
	// Check, when set, judges stored bytes before Done (a SEP-2631 file's
	// pins); a refusal (status ≠ 0; it deleted the bytes) answers the
	// completing request and frees the link, as the whole-body upload does.
	Check func(c token.Claims, infos []storage.Info) (status int, code, msg string, err error)
	// ErrorOf is the whole-body upload's answer to a failed ingest.
	ErrorOf func(err error, maxSize int64) (status int, code, msg string)
}

// Server serves tus on the upload endpoints.
type Server struct {
	env Env
	rec storage.Recorder // nil when the store keeps no records
}

// New returns the endpoints on env's store; they answer 501 when the store
// keeps no records.
func New(env Env) *Server {
	return &Server{env: env, rec: storage.RecorderOf(env.Backend)}
}

// Offered reports whether the store keeps the records tus needs.
func (s *Server) Offered() bool { return s.rec != nil }

// Path is the path of the creation endpoint of the upload endpoint
// /u/{tok}; an upload's URL is Path(tok) + id.
func Path(tok string) string { return "/u/" + tok + "/tus/" }

// Split parses a path under /u/ into the token and what follows it
// ("tus/…"); ok is false for /u/{token} itself.
func Split(path string) (tok, rest string, ok bool) {
	return strings.Cut(strings.TrimPrefix(path, "/u/"), "/")
}

// uploadOf is the upload named by rest ("tus" or "tus/" for the creation
// endpoint, "tus/{id}" for an upload); ok is false for any other path.
func uploadOf(rest string) (id string, ok bool) {
	id, ok = strings.CutPrefix(rest, "tus")
	if !ok || id != "" && id[0] != '/' {
		return "", false
	}
	return strings.TrimPrefix(id, "/"), true
}

// Admit makes the checks that come before a request's body, for Expect:
// 100-continue; on refusal it answers and reports false.
func (s *Server) Admit(ctx *fasthttp.RequestCtx, tok, rest string) bool {
	_, _, ok := s.check(ctx, tok, rest)
	return ok
}

// check makes a request's checks before tus: the path, the store, Host
// and Origin, the token and its caller.
func (s *Server) check(ctx *fasthttp.RequestCtx, tok, rest string) (id string, c token.Claims, ok bool) {
	id, ok = uploadOf(rest)
	switch {
	case !ok:
		s.env.Gate.DrainSmall(ctx)
		gate.APIError(ctx, http.StatusNotFound, "not_found", "no such upload endpoint")
		return "", c, false
	case s.rec == nil:
		s.env.Gate.RefuseBody(ctx, http.StatusNotImplemented, "not_implemented", "this store keeps no upload state; resumable uploads are off")
		return "", c, false
	}
	if why := s.env.Gate.CheckHostOrigin(ctx); why != "" {
		s.env.Gate.RefuseBody(ctx, http.StatusForbidden, "forbidden", why)
		return "", c, false
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	c, ok = s.env.Claims(ctx, tok)
	return id, c, ok
}

// Serve answers a request for /u/{tok}/{rest}, rest being "tus/" (POST,
// OPTIONS) or "tus/{id}" (HEAD, PATCH, DELETE, OPTIONS).
func (s *Server) Serve(ctx *fasthttp.RequestCtx, tok, rest string) {
	id, c, ok := s.check(ctx, tok, rest)
	if !ok {
		return
	}
	method := string(ctx.Method())
	if method == http.MethodPatch || method == http.MethodPost {
		release, refused := s.env.Gate.TakeUploadSlot(c.Principal)
		if refused != nil {
			s.env.Gate.Refuse(ctx, refused)
			return
		}
		defer release()
	}
	creating := method == http.MethodPost && id == ""
	if creating && !s.env.Reserve(ctx, c) {
		return
	}
	req := resumable.NewRequest(ctx, s.env.Gate, id, owner(c))
	resp := s.handler(tok, c).Serve(context.Background(), req)
	if loc := header(resp, "Location"); creating && loc == "" {
		s.env.Release(c) // nothing was created: the link may be retried
	} else if creating && s.env.Created != nil {
		s.env.Created(c, strings.TrimPrefix(loc, Path(tok)))
	}
	if method == http.MethodPatch || creating {
		s.progress(c, resp)
	}
	withoutConcatenation(&resp)
	resumable.Write(ctx, s.env.Logger, resp, req.Body)
}

// owner is who an upload belongs to: the token's upload id, so another
// token's requests meet 404.
func owner(c token.Claims) string { return "link/" + c.Nonce }

// maxSize is the token's size limit, bounded by the server's.
func (s *Server) maxSize(c token.Claims) int64 {
	if c.MaxSize <= 0 || c.MaxSize > s.env.MaxUpload {
		return s.env.MaxUpload
	}
	return c.MaxSize
}

// handler is the tus handler of one token: its URLs, its size limit, its
// admission, its staged write (where the store has them) and completion.
// An upload lives as long as its token.
func (s *Server) handler(tok string, c token.Claims) *tus.Handler {
	var ttl time.Duration
	if !c.Expires.IsZero() {
		ttl = max(time.Until(c.Expires), time.Second)
	}
	cfg := tus.Config{Records: s.rec, Base: Path(tok), MaxSize: s.maxSize(c), TTL: ttl,
		Admit: func(u *tus.Upload) *tus.Error { return s.admit(c, u) },
		Complete: func(ctx context.Context, u *tus.Upload, data tus.Data) (string, *tus.Error) {
			return s.complete(ctx, c, u, data)
		}}
	if st := storage.StagerOf(s.env.Backend); st != nil {
		cfg.Stager = st
		cfg.Begin = func(ctx context.Context, u *tus.Upload) (string, *tus.Error) { return s.begin(ctx, st, c, u) }
	}
	return tus.New(cfg)
}

// spec is what the token's upload must satisfy, as the whole-body
// upload's part: the token's key, maxSize and accept list, sniffing, and
// no object already there. u's metadata has passed admit.
func (s *Server) spec(c token.Claims, u *tus.Upload) ingest.Spec {
	name := filename(u)
	mt, _ := mediaType(u)
	return ingest.Spec{Key: token.UploadObjectKey(c, name), MediaType: mt, Filename: name,
		Size: max(u.Length, 0), MaxSize: s.maxSize(c), Accept: c.Accept, IfNotExists: true, Expires: resumable.ExpiryOf(u)}
}

// admit checks a new upload's metadata: one upload per token, so no
// concatenation; a filename and media type the ingest path takes, the
// type inside the token's accept list (before any byte is sent).
func (s *Server) admit(c token.Claims, u *tus.Upload) *tus.Error {
	if u.Partial || u.Final() {
		return &tus.Error{Status: http.StatusBadRequest, Code: "concatenation_unsupported",
			Message: "an upload link takes one upload; Upload-Concat is not offered here"}
	}
	if err := storage.ValidateFilename(filename(u)); err != nil {
		status, code, msg := s.env.ErrorOf(err, s.maxSize(c))
		return &tus.Error{Status: status, Code: code, Message: "Upload-Metadata filename: " + msg}
	}
	if _, err := mediaType(u); err != nil {
		return &tus.Error{Status: http.StatusBadRequest, Code: "bad_metadata", Message: "Upload-Metadata filetype: malformed media type"}
	}
	if _, set := u.Metadata[resumable.ExpiresMeta]; set {
		return &tus.Error{Status: http.StatusBadRequest, Code: "bad_metadata",
			Message: "Upload-Metadata " + resumable.ExpiresMeta + " is the server's own"}
	}
	// The link's grant sets the blob's expiry; a ttlSeconds in the
	// metadata is not the uploader's to choose.
	resumable.StampExpiry(u, time.Duration(c.BlobTTL)*time.Second, time.Now())
	if err := ingest.CheckDeclared(s.spec(c, u)); err != nil {
		return s.refusal(err, c)
	}
	return nil
}

// begin starts the staged write of the token's object, with ingest's
// checks.
func (s *Server) begin(ctx context.Context, st storage.Stager, c token.Claims, u *tus.Upload) (string, *tus.Error) {
	id, err := ingest.BeginStaged(ctx, st, s.spec(c, u))
	if err != nil {
		return "", s.refusal(err, c)
	}
	return id, nil
}

// complete stores a complete upload as the whole-body upload stores a
// part: a staged one by committing its staged write (no byte copied), one
// kept in records by writing its bytes; then it signals the upload done.
// A refusal frees the link for another try (but for an object already
// there: the link was used).
func (s *Server) complete(ctx context.Context, c token.Claims, u *tus.Upload, data tus.Data) (string, *tus.Error) {
	spec := s.spec(c, u)
	var info storage.Info
	var err error
	if data.Staged == "" {
		info, err = ingest.Store(ctx, s.env.Backend, spec, data.Reader)
	} else {
		info, err = s.commitStaged(ctx, spec, data)
	}
	if err != nil {
		refused := s.refusal(err, c)
		if refused.Status < 500 && refused.Status != http.StatusConflict {
			s.env.Release(c)
		}
		return "", refused
	}
	if s.env.Check != nil {
		if status, code, msg, err := s.env.Check(c, []storage.Info{info}); status != 0 {
			s.env.Release(c) // the bytes were deleted: the link may be retried
			return "", &tus.Error{Status: status, Code: code, Message: msg, Err: err}
		}
	}
	s.env.Done(c.Nonce, []storage.Info{info})
	return info.Key, nil
}

// commitStaged commits a staged upload. A staged write already gone
// whose object is there with the upload's size and SHA-256 was committed
// by a completion that stopped before recording it (a crash, or another
// node): done.
func (s *Server) commitStaged(ctx context.Context, spec ingest.Spec, data tus.Data) (storage.Info, error) {
	st := storage.StagerOf(s.env.Backend)
	if st == nil {
		return storage.Info{}, errors.New("linktus: the store has no staged writes")
	}
	staged := ingest.Staged{ID: data.Staged, Parts: data.Parts, SHA256: data.SHA256, Head: data.Head}
	info, err := ingest.CommitStaged(ctx, st, spec, staged)
	if errors.Is(err, storage.ErrStagedGone) {
		got, serr := s.env.Backend.Stat(ctx, spec.Key)
		if serr == nil && got.SHA256 == data.SHA256 && got.Size == storage.StagedSize(data.Parts) {
			return got, nil
		}
	}
	return info, err
}

// refusal is the whole-body upload's answer to a failed ingest.
func (s *Server) refusal(err error, c token.Claims) *tus.Error {
	status, code, msg := s.env.ErrorOf(err, s.maxSize(c))
	return &tus.Error{Status: status, Code: code, Message: msg, Err: err}
}

// filename is the file's name: Upload-Metadata "filename", or "name" as
// Uppy also sends it.
func filename(u *tus.Upload) string {
	if f := u.Metadata["filename"]; f != "" {
		return f
	}
	return u.Metadata["name"]
}

// mediaType is the file's declared type (Upload-Metadata "filetype", or
// "type"), as the whole-body upload reads a part's Content-Type: the
// charset kept for text; "" when none is declared.
func mediaType(u *tus.Upload) (string, error) {
	ct := u.Metadata["filetype"]
	if ct == "" {
		ct = u.Metadata["type"]
	}
	if ct == "" {
		return "", nil
	}
	t, params, err := mime.ParseMediaType(ct)
	if err != nil || len(ct) > storage.MaxMediaTypeLen {
		return "", errBadType
	}
	if cs := params["charset"]; cs != "" && strings.HasPrefix(t, "text/") {
		t += "; charset=" + strings.ToLower(cs)
	}
	return t, nil
}

var errBadType = errors.New("linktus: malformed media type")

// progress reports an accepted PATCH (or creation with upload) to the
// waiting elicitation.
func (s *Server) progress(c token.Claims, resp tus.Response) {
	if resp.Error != nil {
		return
	}
	off, err := strconv.ParseInt(header(resp, "Upload-Offset"), 10, 64)
	if err != nil {
		return
	}
	total, err := strconv.ParseInt(header(resp, "Upload-Length"), 10, 64)
	if err != nil {
		total = -1
	}
	s.env.Progress(c.Nonce, off, total)
}

func header(resp tus.Response, name string) string {
	for _, kv := range resp.Header {
		if kv[0] == name {
			return kv[1]
		}
	}
	return ""
}

// withoutConcatenation drops concatenation from Tus-Extension: one token,
// one upload.
func withoutConcatenation(resp *tus.Response) {
	for i, kv := range resp.Header {
		if kv[0] == "Tus-Extension" {
			exts := strings.Split(kv[1], ",")
			kept := exts[:0]
			for _, e := range exts {
				if e != "concatenation" {
					kept = append(kept, e)
				}
			}
			resp.Header[i][1] = strings.Join(kept, ",")
		}
	}
}

// Offset is the durable offset of upload id of the link whose upload id
// is nonce, read from its record; ok is false when there is none (or it is
// another link's, or done or expired).
func (s *Server) Offset(ctx context.Context, nonce, id string) (int64, bool) {
	if s.rec == nil || !tus.ValidID(id) {
		return 0, false
	}
	data, _, err := s.rec.GetRecord(ctx, "tus/"+id+"/info") // core/tus's default prefix
	if err != nil {
		return 0, false
	}
	var u tus.Upload
	if json.Unmarshal(data, &u) != nil || u.Owner != owner(token.Claims{Nonce: nonce}) || u.Done || u.Expired {
		return 0, false
	}
	return u.Offset, true
}
