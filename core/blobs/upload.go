package blobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/ingest"
)

// UploadPrefix is the key prefix of the objects uploaded with uploadID when
// no key was named: "uploads/<uploadID>/" + filename.
func UploadPrefix(uploadID string) string { return "uploads/" + uploadID + "/" }

func (a *App) uploadSpec() mcp.FileSpec {
	return mcp.FileSpec{Accept: a.opts.UploadAccept, MaxSize: a.opts.MaxFileBytes, TransferModes: a.fileModes}
}

func (a *App) registerUploads(s *mcp.Server) error {
	return errors.Join(mcp.AddTypedTool(s, &mcp.Tool{Name: "upload_file", Title: "Upload a file",
		Description: "Store a file given inline as a data: URI, or as the mcp-file:// URI of a file already uploaded (x-mcp-file, " +
			"as its transferModes allow). The bytes are decoded as they arrive and " +
			"checked against accept and maxSize; nothing is stored when a check fails. Put key (and filename) before " +
			"file in the arguments object to let the server write straight to storage.",
		InputSchema: withFileSpec(schema("upload_file.input"), "file", a.uploadSpec()), OutputSchema: schema("blob.output"),
		Annotations: destructive, FileSink: a.fileSink}, a.uploadFile),
		mcp.AddTypedTool(s, &mcp.Tool{Name: "request_upload", Title: "Ask the user for a file",
			Description: "Ask the user to upload a file and store it: binary-mode elicitation when the client supports it, " +
				"else a form with a file field, else a link to the server's upload page. Returns the stored blob.",
			InputSchema: schema("request_upload.input"), OutputSchema: schema("blob.output"),
			Annotations: []byte(`{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":true}`),
			Streams:     mcp.StreamForInput, Stateful: true, Requires: []string{"elicitation"}}, a.requestUpload))
}

// uploadArgs are upload_file's arguments.
type uploadArgs struct {
	File       *mcp.File `json:"file"`
	Filename   string    `json:"filename"`
	Key        string    `json:"key"`
	TTLSeconds int64     `json:"ttlSeconds"` // 0: none (the schema refuses 0 given)
}

// filenameProblem checks upload_file's filename, naming the argument.
func filenameProblem(name string) string {
	if why := filenameReason(name); why != "" {
		return fmt.Sprintf("Argument %q: %s", "filename", why)
	}
	return ""
}

// filenameReason says why name cannot be a stored file's name: it breaks
// the filename rules (at most 255 bytes of UTF-8 without control
// characters) or is not a plain name.
func filenameReason(name string) string {
	var fe *storage.FilenameError
	switch {
	case errors.As(storage.ValidateFilename(name), &fe):
		return fe.Reason
	case name == "." || name == ".." || strings.ContainsAny(name, "/\\"):
		return `not a plain file name (a '/' or '\', or "." or "..")`
	}
	return ""
}

// keySink is an ingest upload opened for a key before the file arrived.
type keySink struct {
	*ingest.Upload
	key string
}

// fileSink lets upload_file's data URI go straight to storage when its key
// (and filename) came first in the arguments. A key or filename the upload
// cannot have is refused before the first byte (the bytes are read and
// dropped, and the handler answers naming the argument); so is a media
// type outside accept.
func (a *App) fileSink(t mcp.FileTarget) (mcp.Sink, bool, error) {
	key, ok := t.Args["key"]
	if !ok {
		return nil, false, nil
	}
	filename := t.Args["filename"]
	if why := filenameReason(filename); why != "" {
		return nil, false, &mcp.FileError{Arg: "filename", Reason: why}
	}
	view := a.opts.Tenancy.Store(a.backend, auth.Identity{Principal: t.Principal, Scopes: t.Scopes})
	u, err := ingest.Begin(t.Ctx, view, ingest.Spec{Key: key, MediaType: t.MediaType, Filename: filename,
		MaxSize: t.Spec.MaxSize, Accept: t.Spec.Accept})
	if err != nil {
		var ie *ingest.Error
		switch {
		case quotaProblem(err) != "":
			return nil, false, &mcp.FileError{Arg: t.Argument, Reason: quotaProblem(err)}
		case keyProblem(err) != "":
			return nil, false, &mcp.FileError{Arg: "key", Reason: keyProblem(err)}
		case errors.As(err, &ie):
			return nil, false, &mcp.FileError{Arg: t.Argument, Reason: ie.Detail}
		}
		return nil, false, fmt.Errorf("blobs: create %q: %w", key, err)
	}
	return &keySink{Upload: u, key: key}, true, nil
}

func (a *App) uploadFile(c *mcp.Call, in uploadArgs) (*mcp.ToolResult, error) {
	key, filename, f := in.Key, in.Filename, in.File
	if bad := filenameProblem(filename); bad != "" {
		return mcp.ToolError("%s", bad), nil
	}
	defer f.Abort()
	if key == "" {
		key = UploadPrefix(token.NewUploadID()) + orDefault(filename, "upload")
	}
	if err := storage.ValidateKey(key); err != nil {
		return mcp.ToolError("Argument %q: %s", "key", keyProblem(err)), nil
	}
	expires, bad := expiryArg(in.TTLSeconds)
	if bad != nil {
		return bad, nil
	}
	info, res, err := a.store(c, f, key, filename, false, expires)
	if res != nil || err != nil {
		return res, err
	}
	return a.storedResult(c, info)
}

// expiryArg is the expiry of a blob stored now with ttlSeconds n (0:
// none), or the isError result naming the argument (the input schema
// bounds it already; this holds for a caller without the schema).
func expiryArg(n int64) (time.Time, *mcp.ToolResult) {
	if n == 0 {
		return time.Time{}, nil
	}
	ttl, err := storage.CheckTTL(n)
	if err != nil {
		return time.Time{}, mcp.ToolError("Argument %q: %s", "ttlSeconds", err.Error())
	}
	return storage.Expiry(time.Now(), ttl), nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// store commits a decoded file under key through the ingest path: the
// upload its sink opened, or a new one fed from the spooled or inline
// payload. A problem with the file is an isError result, a storage failure
// an error (-32603); either way nothing is stored.
func (a *App) store(c *mcp.Call, f *mcp.File, key, filename string, mustBeNew bool, expires time.Time) (storage.Info, *mcp.ToolResult, error) {
	ctx := c.Context()
	var info storage.Info
	var err error
	switch sink, _ := f.Sink().(*keySink); {
	case sink != nil && sink.key == key:
		if err = sink.Close(); err == nil {
			info, err = sink.Commit(ctx)
		}
		if err == nil {
			f.Keep()
		}
		if err == nil && !expires.IsZero() {
			info, err = a.restamp(ctx, a.view(c), info, expires)
		}
	case sink != nil:
		return info, mcp.ToolError("Argument %q must be given once", "key"), nil
	default:
		info, err = ingest.Store(ctx, a.view(c), ingest.Spec{Key: key, MediaType: f.MediaType, Filename: filename,
			Size: f.Size, IfNotExists: mustBeNew, Expires: expires}, f.Reader())
	}
	if err != nil {
		res, err := a.storeError(f, key, err)
		return info, res, err
	}
	a.Changed(a.raw(c, info.Key))
	a.log.Debug("blobs: file stored", "key", info.Key, "size", info.Size, "mediaType", info.MediaType)
	return info, nil, nil
}

// storeError is the answer for a failed store: an isError result for what
// the caller can fix, an internal error for the rest.
func (a *App) storeError(f *mcp.File, key string, err error) (*mcp.ToolResult, error) {
	var (
		ie *ingest.Error
		fe *storage.FilenameError
	)
	switch {
	case quotaProblem(err) != "":
		return mcp.ToolError("Argument %q: %s", f.Name, quotaProblem(err)), nil
	case errors.As(err, &ie):
		return mcp.ToolError("Argument %q: %s", f.Name, ie.Detail), nil
	case keyProblem(err) != "":
		return mcp.ToolError("Argument %q: %s", "key", keyProblem(err)), nil
	case errors.As(err, &fe):
		return mcp.ToolError("Argument %q: %s", "filename", fe.Reason), nil
	case errors.Is(err, storage.ErrExists):
		return mcp.ToolError("Blob %q already exists", key), nil
	case errors.Is(err, storage.ErrInvalidMediaType):
		return mcp.ToolError("Argument %q: its media type must be at most %d bytes without control characters",
			f.Name, storage.MaxMediaTypeLen), nil
	}
	return nil, fmt.Errorf("blobs: store %q: %w", key, err)
}

// quotaProblem names the quota that refused an upload ("" when none
// did): the principal's quota is full, nothing was stored.
func quotaProblem(err error) string {
	if qe := storage.QuotaErrorOf(err); qe != nil {
		return "quota exceeded: " + qe.Detail() + "; nothing was stored"
	}
	return ""
}

// withFileSpec sets the x-mcp-file descriptor of a property of a schema.
func withFileSpec(schema []byte, prop string, spec mcp.FileSpec) []byte {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		panic("bug: schema: " + err.Error())
	}
	p := s["properties"].(map[string]any)[prop].(map[string]any)
	d := map[string]any{"maxSize": spec.MaxSize}
	if len(spec.Accept) > 0 {
		d["accept"] = spec.Accept
	}
	if len(spec.TransferModes) > 0 {
		d["transferModes"] = spec.TransferModes
	}
	p["x-mcp-file"] = d
	out, err := json.Marshal(s)
	if err != nil {
		panic("bug: schema: " + err.Error())
	}
	return out
}
