package blobs

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpblob/mcpblob/core/files"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/storage"
)

// registerFiles adds the files/* methods: the upstream SEP-2631 PR's
// (authorizeUpload, authorizeDownload) and its author's fork's
// (prepareUpload, completeUpload, getUpload, getDownload), thin adapters on
// one model (core/files). Each needs the client's files capability.
func (a *App) registerFiles(s *mcp.Server) {
	for name, h := range map[string]func(*mcp.Call) (any, error){
		"files/authorizeUpload":   a.authorizeUpload,
		"files/authorizeDownload": a.authorizeDownload,
		"files/prepareUpload":     a.prepareUpload,
		"files/completeUpload":    a.completeUpload,
		"files/getUpload":         a.getUpload,
		"files/getDownload":       a.getDownload,
	} {
		s.AddMethod(name, a.needsFiles(name, h))
	}
}

// needsFiles answers -32601 to a client that did not declare the files
// capability, as a server without the methods would, and gives the
// server's faults the reason "internal" (the cause goes to the log).
func (a *App) needsFiles(name string, h func(*mcp.Call) (any, error)) func(*mcp.Call) (any, error) {
	return func(c *mcp.Call) (any, error) {
		if !c.HasCapability(CapFiles) {
			return nil, fileProblem(mcp.CodeMethodNotFound, "capabilityMissing",
				fmt.Sprintf("Method not found: %s needs the client capability %q", name, CapFiles), nil)
		}
		res, err := h(c)
		var e *mcp.Error
		if err != nil && !errors.As(err, &e) {
			a.log.Error("blobs: files method failed", "method", name, "err", err)
			return nil, fileProblem(mcp.CodeInternalError, "internal", "Internal error", nil)
		}
		return res, err
	}
}

// params decodes c's params into v: -32602 naming the problem.
func params(c *mcp.Call, v any, names ...string) *mcp.Error {
	m := map[string]json.RawMessage{}
	for _, n := range names {
		if raw := c.Param(n); raw != nil {
			m[n] = raw
		}
	}
	b, _ := json.Marshal(m)
	if err := json.Unmarshal(b, v); err != nil {
		return invalidFile("invalidParams", "%v", err)
	}
	return nil
}

// uploadParams are the params both upload methods share.
type uploadParams struct {
	Name           string        `json:"name"`
	MimeType       string        `json:"mimeType"`
	Size           *int64        `json:"size"`
	Digest         *files.Digest `json:"digest"`
	IdempotencyKey string        `json:"idempotencyKey"`
}

// request checks p into a fileRequest.
func (p uploadParams) request() (fileRequest, *mcp.Error) {
	r := fileRequest{Name: p.Name, MediaType: p.MimeType, Size: -1, IdempotencyKey: p.IdempotencyKey}
	if p.Size != nil {
		r.Size = *p.Size
		if r.Size < 0 {
			r.Size = -2 // refused by checkFileRequest
		}
	}
	if p.Digest != nil {
		d, err := files.ParseDigest(*p.Digest)
		if de, ok := err.(*files.DigestError); ok {
			return r, invalidFile(de.Reason, "digest: %s", de.Msg)
		}
		r.Digest = d
	}
	return r, nil
}

func (a *App) readUploadParams(c *mcp.Call, fork bool) (fileRequest, *mcp.Error) {
	var p uploadParams
	if e := params(c, &p, "name", "mimeType", "size", "digest", "idempotencyKey"); e != nil {
		return fileRequest{}, e
	}
	switch {
	case fork && p.Size == nil:
		return fileRequest{}, invalidFile("invalidParams", "size is required")
	case fork && p.IdempotencyKey == "":
		return fileRequest{}, invalidFile("invalidParams", "idempotencyKey is required")
	case len(p.IdempotencyKey) > 256:
		return fileRequest{}, invalidFile("invalidParams", "idempotencyKey is longer than 256 bytes")
	}
	return p.request()
}

// authorizeUpload is files/authorizeUpload (upstream PR): a new file and
// where to PUT its bytes.
func (a *App) authorizeUpload(c *mcp.Call) (any, error) {
	f, up, err := a.authorizedUpload(c, false)
	if err != nil {
		return nil, err
	}
	return mcp.Object{"file": a.fileValue(f), "upload": up}, nil
}

// authorizedUpload reads an upload request's params (the fork's rules when
// fork), prepares its file (or finds the one its idempotencyKey names) and
// mints where to send the bytes: the one path of authorizeUpload and
// prepareUpload.
func (a *App) authorizedUpload(c *mcp.Call, fork bool) (*files.File, any, error) {
	r, e := a.readUploadParams(c, fork)
	if e != nil {
		return nil, nil, e
	}
	f, err := a.prepareFile(c, r)
	if err != nil {
		return nil, nil, err
	}
	up, err := a.uploadDescriptor(c, f)
	if err != nil {
		return nil, nil, err
	}
	return f, up, nil
}

// authorizeDownload is files/authorizeDownload (upstream PR): a fresh
// download link to an uploaded file of the caller's.
func (a *App) authorizeDownload(c *mcp.Call) (any, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if e := params(c, &p, "uri"); e != nil {
		return nil, e
	}
	_, res, err := a.download(c, p.URI)
	return res, err
}

// download finds the caller's uploaded file by URI and mints its download
// descriptor: the file, and the answer {file, download}.
func (a *App) download(c *mcp.Call, uri string) (*files.File, mcp.Object, error) {
	f, err := a.lookupFile(c, uri)
	if err != nil {
		return nil, nil, err
	}
	if e := a.usable(c.Context(), f); e != nil {
		return nil, nil, e
	}
	down, err := a.downloadDescriptor(c, f)
	if err != nil {
		return nil, nil, err
	}
	return f, mcp.Object{"file": a.fileValue(f), "download": down}, nil
}

// prepareUpload is files/prepareUpload (fork): authorizeUpload with a
// required size and idempotencyKey; a replay of the key names the same
// upload. The uploadId is the file's id.
func (a *App) prepareUpload(c *mcp.Call) (any, error) {
	f, up, err := a.authorizedUpload(c, true)
	if err != nil {
		return nil, err
	}
	return mcp.Object{"uploadId": f.ID, "status": f.State, "file": a.fileValue(f), "upload": up}, nil
}

// uploadOf reads the uploadId param and finds its file.
func (a *App) uploadOf(c *mcp.Call) (*files.File, error) {
	var p struct {
		UploadID string `json:"uploadId"`
	}
	if e := params(c, &p, "uploadId"); e != nil {
		return nil, e
	}
	f, err := a.files.Get(c.Context(), c.Principal(), p.UploadID)
	if errors.Is(err, files.ErrNotFound) {
		return nil, invalidFile("uploadNotFound", "uploadId: no such upload")
	}
	return f, err
}

// getUpload is files/getUpload (fork): the upload's status and the bytes
// received (a single-shot PUT reports them once it is complete).
func (a *App) getUpload(c *mcp.Call) (any, error) {
	f, err := a.uploadOf(c)
	if err != nil {
		return nil, err
	}
	res := mcp.Object{"uploadId": f.ID, "status": f.State, "receivedBytes": a.received(c.Context(), f), "file": a.fileValue(f)}
	if f.Reason != "" {
		res["reason"] = f.Reason
	}
	return res, nil
}

// completeUpload is files/completeUpload (fork): the client's size (and
// digest) checked against the bytes stored; a mismatch fails the file and
// deletes its bytes. verified says a sha-256 was checked (pinned at
// prepareUpload or given here).
func (a *App) completeUpload(c *mcp.Call) (any, error) {
	var p struct {
		Size   *int64        `json:"size"`
		Digest *files.Digest `json:"digest"`
	}
	if e := params(c, &p, "size", "digest"); e != nil {
		return nil, e
	}
	if p.Size == nil {
		return nil, invalidFile("invalidParams", "size is required")
	}
	f, err := a.uploadOf(c)
	if err != nil {
		return nil, err
	}
	if e := a.usable(c.Context(), f); e != nil {
		return nil, e
	}
	digest := ""
	if p.Digest != nil {
		if digest, err = files.ParseDigest(*p.Digest); err != nil {
			de := err.(*files.DigestError)
			return nil, invalidFile(de.Reason, "digest: %s", de.Msg)
		}
	}
	reason := ""
	switch {
	case *p.Size != f.Stored.Size:
		reason = "sizeMismatch"
	case digest != "" && digest != f.Stored.SHA256:
		reason = "digestMismatch"
	}
	if reason != "" && f.State == files.Completed { // verified once: a wrong claim now changes nothing
		return nil, invalidFile(reason, "the completed file's bytes do not match the size or digest given")
	}
	f, err = a.files.Update(c.Context(), c.Principal(), f.ID, func(f *files.File) error {
		if reason != "" {
			f.State, f.Reason = files.Failed, reason
		} else if f.State.Usable() {
			f.State = files.Completed
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if reason != "" {
		a.dropFileBytes(c.Context(), []storage.Info{{Key: f.Key}})
		return nil, invalidFile(reason, "%s", fileReasonText(reason))
	}
	verified := f.Digest != "" || digest != ""
	return mcp.Object{"uploadId": f.ID, "status": f.State, "file": a.fileValue(f), "verified": verified}, nil
}

// byteRange is getDownload's range.
type byteRange struct {
	Start        *int64 `json:"start"`
	EndExclusive *int64 `json:"endExclusive"`
}

// getDownload is files/getDownload (fork): authorizeDownload with an
// optional range, which the descriptor carries as a Range header.
func (a *App) getDownload(c *mcp.Call) (any, error) {
	var p struct {
		URI   string     `json:"uri"`
		Range *byteRange `json:"range"`
	}
	if e := params(c, &p, "uri", "range"); e != nil {
		return nil, e
	}
	f, res, err := a.download(c, p.URI)
	if err != nil || p.Range == nil {
		return res, err
	}
	size, r := f.Stored.Size, p.Range
	end := size
	if r.EndExclusive != nil {
		end = *r.EndExclusive
	}
	if r.Start == nil || *r.Start < 0 || *r.Start >= size || end <= *r.Start || end > size {
		return nil, fileProblem(mcp.CodeInvalidParams, "invalidRange",
			fmt.Sprintf("Invalid params: range must have 0 <= start < endExclusive <= size (%d)", size), mcp.Object{"size": size})
	}
	down := res["download"].(mcp.Object)
	down["headers"] = mcp.Object{"Range": fmt.Sprintf("bytes=%d-%d", *r.Start, end-1)}
	down["range"] = mcp.Object{"unit": "bytes", "supported": true, "start": *r.Start, "endExclusive": end}
	return res, nil
}
