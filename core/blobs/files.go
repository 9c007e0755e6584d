package blobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/files"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// FilePrefix is the key prefix, in the principal's view, of the blobs that
// hold SEP-2631 files' bytes: "mcp-files/<id>".
const FilePrefix = "mcp-files/"

// CapFiles is the client capability the files/* methods need.
const CapFiles = "files"

// fileStore is the App's store of file records: the backend's records
// (exact across nodes), or this process's for a backend without any.
func fileStore(b storage.Backend) *files.Store {
	if rec := storage.RecorderOf(b); rec != nil {
		return files.NewStore(rec)
	}
	return files.NewStore(new(storage.MemRecords))
}

// fileServer is the server part of the file URIs the App mints: the host
// (and port) of PublicURL.
func fileServer(publicURL string) string {
	if u, err := url.Parse(publicURL); err == nil && u.Host != "" {
		return u.Host
	}
	return "localhost"
}

// fileRequest is what a client asks to upload, checked.
type fileRequest struct {
	Name, MediaType string
	Size            int64  // -1: not declared
	Digest          string // pinned sha-256, hex; "" none
	IdempotencyKey  string
}

// fileProblem is a files/* refusal: its JSON-RPC error, with data.reason.
func fileProblem(code int, reason, msg string, extra mcp.Object) *mcp.Error {
	data := mcp.Object{"reason": reason}
	for k, v := range extra {
		data[k] = v
	}
	return mcp.NewError(code, msg, data)
}

func invalidFile(reason, format string, a ...any) *mcp.Error {
	return fileProblem(mcp.CodeInvalidParams, reason, "Invalid params: "+fmt.Sprintf(format, a...), nil)
}

// checkFileRequest validates a request's name, media type and size.
func (a *App) checkFileRequest(r *fileRequest) *mcp.Error {
	if r.Name != "" {
		if why := filenameReason(r.Name); why != "" {
			return invalidFile("invalidName", "name: %s", why)
		}
	}
	if r.MediaType == "" {
		r.MediaType = storage.DefaultMediaType
	} else if _, _, err := mime.ParseMediaType(r.MediaType); err != nil || len(r.MediaType) > storage.MaxMediaTypeLen {
		return invalidFile("invalidMediaType", "mimeType %q is not a media type", r.MediaType)
	}
	switch {
	case r.Size == 0:
		return invalidFile("invalidSize", "size: an empty file cannot be uploaded")
	case r.Size < -1:
		return invalidFile("invalidSize", "size must not be negative")
	case r.Size > a.opts.MaxFileBytes:
		return fileProblem(mcp.CodeInvalidParams, "maxSizeExceeded",
			fmt.Sprintf("Invalid params: size %d is over the server's limit of %d bytes", r.Size, a.opts.MaxFileBytes),
			mcp.Object{"maxSize": a.opts.MaxFileBytes, "actualSize": r.Size})
	}
	return nil
}

// codeLimitExceeded is mcp's -32029, a limit on protocol state.
const codeLimitExceeded = -32029

// chargeFile charges a file record the caller is about to write to the
// server's claims rate per principal (mcp.Server.Claims), as upload ids
// and single-use links are: past it, -32029 with Retry-After.
func (a *App) chargeFile(c *mcp.Call) error {
	if err := a.claims.Allow(c.Principal()); err != nil {
		return mcp.NewError(codeLimitExceeded, "Too Many Requests: file records ("+err.Error()+")",
			mcp.Object{"reason": "rateLimited"}).WithStatus(http.StatusTooManyRequests).WithHeader("Retry-After", "60")
	}
	return nil
}

// prepareFile creates the caller's file for r, or with an idempotency key
// already used by the caller, returns the file that key created.
func (a *App) prepareFile(c *mcp.Call, r fileRequest) (*files.File, error) {
	if e := a.checkFileRequest(&r); e != nil {
		return nil, e
	}
	if err := a.chargeFile(c); err != nil {
		return nil, err
	}
	id := files.NewID()
	f := &files.File{ID: id, Owner: c.Principal(), Name: r.Name, MediaType: r.MediaType, Size: r.Size,
		Digest: r.Digest, MaxSize: a.opts.MaxFileBytes, Key: a.raw(c, FilePrefix+id), UploadID: token.NewUploadID(),
		IdempotencyKey: r.IdempotencyKey, State: files.Prepared, Created: time.Now().UTC(),
		Expires: time.Now().Add(a.opts.UploadTTL).Truncate(time.Second)}
	if r.Size > 0 {
		f.MaxSize = r.Size
	}
	if err := a.files.Create(c.Context(), f); err != nil {
		return nil, fmt.Errorf("blobs: file %s: %w", id, err)
	}
	if r.IdempotencyKey == "" {
		return f, nil
	}
	first, err := a.files.Claim(c.Context(), c.Principal(), r.IdempotencyKey, id)
	if err != nil || first == id {
		return f, err
	}
	prev, err := a.files.Get(c.Context(), c.Principal(), first)
	if err != nil {
		return nil, fmt.Errorf("blobs: file %s of an idempotency key: %w", first, err)
	}
	if prev.Size != f.Size || prev.Digest != f.Digest || prev.Name != f.Name || prev.MediaType != f.MediaType {
		return nil, invalidFile("idempotencyConflict", "idempotencyKey was used for another upload (a different name, mimeType, size or digest)")
	}
	return prev, nil
}

// fileURI is f's mcp-file URI.
func (a *App) fileURI(f *files.File) string { return files.URI(a.fileServer, f.ID) }

// fileValue is f as the wire's FileValue.
func (a *App) fileValue(f *files.File) mcp.Object {
	v := mcp.Object{"uri": a.fileURI(f), "mimeType": f.MediaType}
	if f.Name != "" {
		v["name"] = f.Name
	}
	size, digest := f.Size, f.Digest
	if f.Stored != nil { // what was stored (its type sniffed) over what was declared
		size, digest, v["mimeType"] = f.Stored.Size, f.Stored.SHA256, f.Stored.MediaType
	}
	if size >= 0 {
		v["size"] = size
	}
	if d := files.WireDigest(digest); d != nil {
		v["digest"] = d
	}
	return v
}

// uploadDescriptor mints f's upload link: a single-shot PUT of the raw
// bytes to an upload endpoint (/u/{token}) bound to f's key and upload id,
// so every descriptor of one file names the same upload.
func (a *App) uploadDescriptor(c *mcp.Call, f *files.File) (mcp.Object, error) {
	data := []byte(`{"mode":"file","file":"` + f.ID + `"}`)
	exp, err := a.uploadExpiry(c.Context(), f)
	if err != nil {
		return nil, fmt.Errorf("blobs: file %s: upload expiry: %w", f.ID, err)
	}
	tok, err := a.keyring.Seal(token.Claims{Purpose: token.PurposeUpload, Principal: c.Principal(), Object: f.Key,
		MaxSize: f.MaxSize, Expires: exp, Nonce: f.UploadID, Data: data})
	if err != nil {
		return nil, fmt.Errorf("blobs: file %s: upload link: %w", f.ID, err)
	}
	url := a.opts.PublicURL + "/u/" + tok
	d := mcp.Object{"transport": "https", "method": "PUT", "url": url,
		"headers":   mcp.Object{"Content-Type": f.MediaType},
		"expiresAt": exp.UTC().Format(time.RFC3339)}
	if h := a.resumableHint(c.Context(), f, url); h != nil {
		d["resumable"] = h
	}
	return d, nil
}

// downloadDescriptor mints a fresh download link to f's bytes, bound to
// the version stored (Range-capable, as every /d link).
func (a *App) downloadDescriptor(c *mcp.Call, f *files.File) (mcp.Object, error) {
	link, err := a.keyring.MintDownload(a.opts.DownloadURL, token.DownloadGrant{Principal: c.Principal(), Key: f.Key,
		Version: f.Stored.ETag, Filename: f.Name, TTL: a.opts.LinkTTL})
	if err != nil {
		return nil, fmt.Errorf("blobs: file %s: download link: %w", f.ID, err)
	}
	return mcp.Object{"transport": "https", "method": "GET", "url": link.URL,
		"expiresAt": link.Expires.UTC().Format(time.RFC3339), "range": mcp.Object{"unit": "bytes", "supported": true}}, nil
}

// lookupFile finds the caller's file by URI: a malformed URI, another
// server's, an unknown file and someone else's are -32602, the last two
// alike.
func (a *App) lookupFile(c *mcp.Call, uri string) (*files.File, error) {
	server, id, err := files.ParseURI(uri)
	switch {
	case err != nil:
		return nil, invalidFile("invalidUri", "uri: %s", strings.TrimPrefix(err.Error(), "files: "))
	case server != a.fileServer:
		return nil, invalidFile("fileNotFound", "uri: no such file on this server")
	}
	return a.getFile(c.Context(), c.Principal(), id)
}

func (a *App) getFile(ctx context.Context, owner, id string) (*files.File, error) {
	f, err := a.files.Get(ctx, owner, id)
	if errors.Is(err, files.ErrNotFound) {
		return nil, invalidFile("fileNotFound", "no such file")
	}
	return f, err
}

// usable refuses a file whose bytes are not there (yet).
func (a *App) usable(ctx context.Context, f *files.File) *mcp.Error {
	switch {
	case f.State == files.Failed:
		return invalidFile(f.Reason, "the file's upload failed (%s)", f.Reason)
	case !f.State.Usable():
		return fileProblem(mcp.CodeInvalidParams, "uploadIncomplete", "Invalid params: the file's bytes have not been uploaded",
			mcp.Object{"status": f.State, "receivedBytes": a.received(ctx, f)})
	}
	return nil
}

// fileBlock is the {type:"file"} content block (SEP-2631).
type fileBlock struct{ file mcp.Object }

func (b fileBlock) MarshalJSON() ([]byte, error) {
	return json.Marshal(mcp.Object{"type": "file", "file": b.file})
}

// storedResult is the result of a tool that stored a blob for the caller:
// blobResult, whose resource_link becomes a {type:"file"} block naming a
// file object of the blob (pinned to the version stored) when the client
// declared the files capability and the claims rate allows a record.
func (a *App) storedResult(c *mcp.Call, info storage.Info) (*mcp.ToolResult, error) {
	res := blobResult(info)
	if !c.HasCapability(CapFiles) {
		return res, nil
	}
	if a.chargeFile(c) != nil {
		return res, nil // over the claims rate: the resource_link stays
	}
	f := &files.File{ID: files.NewID(), Owner: c.Principal(), Name: info.Filename, MediaType: mediaType(info),
		Size: info.Size, Digest: info.SHA256, MaxSize: info.Size, Key: a.raw(c, info.Key), State: files.Completed,
		Stored:  &files.Stored{Size: info.Size, SHA256: info.SHA256, ETag: info.ETag, MediaType: mediaType(info)},
		Created: time.Now().UTC()}
	if err := a.files.Create(c.Context(), f); err != nil {
		return nil, fmt.Errorf("blobs: file of %q: %w", info.Key, err)
	}
	for i, b := range res.Content {
		if _, ok := b.(mcp.ResourceLink); ok {
			res.Content[i] = fileBlock{a.fileValue(f)}
		}
	}
	return res, nil
}
