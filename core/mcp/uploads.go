package mcp

// File inputs: the upload_file tool (SEP-2356 x-mcp-file data URIs, decoded
// as they arrive by reader.go) and the request_upload tool, which elicits a
// file in binary mode (SEP-1306, upload endpoints served by core/server at
// /u/{token}), form mode (an x-mcp-file field) or URL mode (the upload page
// at /upload/{token}), in both protocol eras.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// DefaultUploadTTL is the lifetime of the upload endpoints request_upload
// mints.
const DefaultUploadTTL = 15 * time.Minute

// UploadTokenData is the Data of the upload tokens request_upload mints
// (token.PurposeUpload; Nonce is the uploadId, Object the key or "" for
// [UploadPrefix](uploadId)+filename, MaxSize and Accept the limits).
type UploadTokenData struct {
	Field    string `json:"field,omitempty"`    // the elicitation field
	Mode     string `json:"mode,omitempty"`     // "binary" or "url"
	Multiple bool   `json:"multiple,omitempty"` // several file parts allowed
}

// UploadPrefix is the key prefix of the objects uploaded with uploadID when
// the token names no key: "uploads/<uploadID>/" + filename.
func UploadPrefix(uploadID string) string { return "uploads/" + uploadID + "/" }

// uploadWaiters connects upload endpoints (core/server) with the
// request_upload call waiting on the same node.
type uploadWaiters struct {
	mu sync.Mutex
	m  map[string]*uploadWaiter
	// expect holds the x-mcp-file fields of form elicitations in flight,
	// by session id and request id, so their answers are bounded by the
	// field's maxSize while they arrive.
	expect map[string]map[string]fileSpec
}

func expectKey(sid string, id []byte) string { return sid + "\x00" + idKey(id) }

func (u *uploadWaiters) expectFiles(sid string, id int64, fields map[string]fileSpec) func() {
	k := expectKey(sid, jsonInt(id))
	u.mu.Lock()
	if u.expect == nil {
		u.expect = map[string]map[string]fileSpec{}
	}
	u.expect[k] = fields
	u.mu.Unlock()
	return func() {
		u.mu.Lock()
		delete(u.expect, k)
		u.mu.Unlock()
	}
}

// expected returns the fields a response (session sid, id) may carry. The
// session is not verified yet: the answer only ever tightens limits.
func (u *uploadWaiters) expected(sid string, id []byte) map[string]fileSpec {
	if sid == "" {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.expect[expectKey(sid, id)]
}

type uploadWaiter struct {
	progress func(n, total int64)
	done     chan []storage.Info
}

func (u *uploadWaiters) add(id string, progress func(n, total int64)) (*uploadWaiter, func()) {
	w := &uploadWaiter{progress: progress, done: make(chan []storage.Info, 1)}
	u.mu.Lock()
	if u.m == nil {
		u.m = map[string]*uploadWaiter{}
	}
	u.m[id] = w
	u.mu.Unlock()
	return w, func() {
		u.mu.Lock()
		delete(u.m, id)
		u.mu.Unlock()
	}
}

func (u *uploadWaiters) get(id string) *uploadWaiter {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.m[id]
}

// UploadProgress reports n of total bytes received for uploadID (total < 0:
// unknown). A request_upload call on this node that elicited the upload
// forwards it as notifications/progress.
func (s *Server) UploadProgress(uploadID string, n, total int64) {
	if w := s.uploads.get(uploadID); w != nil && w.progress != nil {
		w.progress(n, total)
	}
}

// UploadDone reports the objects committed for uploadID and publishes them
// on the hub.
func (s *Server) UploadDone(uploadID string, infos []storage.Info) {
	for _, info := range infos {
		s.hub.PublishBlobChange(info.Key)
	}
	if w := s.uploads.get(uploadID); w != nil {
		select {
		case w.done <- infos:
		default:
		}
	}
}

func newUploadID() string { return token.NewUploadID() }

// fileError is the isError result for a rejected file argument.
func fileError(fa *fileArg) obj {
	return toolError("Argument %q: %s", fa.name, fa.problem)
}

func (s *Server) uploadSpec() fileSpec {
	return fileSpec{Accept: s.opts.UploadAccept, MaxSize: s.opts.MaxFileBytes}
}

func specObj(spec fileSpec) obj {
	o := obj{"maxSize": spec.MaxSize}
	if len(spec.Accept) > 0 {
		o["accept"] = spec.Accept
	}
	return o
}

func (s *Server) registerUploadTools() {
	spec := s.uploadSpec()
	s.addTool(&tool{
		name: "upload_file",
		def: obj{
			"title": "Upload a file",
			"description": "Store a file given inline as a data: URI (x-mcp-file). The bytes are decoded as they arrive and " +
				"checked against accept and maxSize; nothing is stored when a check fails. Put key (and filename) before " +
				"file in the arguments object to let the server write straight to storage.",
			"inputSchema": obj{
				"type": "object",
				"properties": obj{
					"file": obj{"type": "string", "format": "uri", "description": "the file as an RFC 2397 data: URI",
						"x-mcp-file": specObj(spec)},
					"filename": obj{"type": "string", "maxLength": 255, "description": "the file's original name"},
					"key":      keyProp("where to store the blob; default uploads/<id>/<filename>"),
				},
				"required":             []string{"file"},
				"additionalProperties": false,
			},
			"outputSchema": blobSchema(),
			"annotations":  obj{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false},
		},
		files: map[string]fileSpec{"file": spec},
		directKey: func(args map[string]string) (string, bool) {
			key, ok := args["key"]
			return key, ok && storage.ValidateKey(key) == nil && filenameProblem(args["filename"]) == ""
		},
		run: s.uploadFile,
	})
	s.addTool(&tool{
		name: "request_upload",
		def: obj{
			"title": "Ask the user for a file",
			"description": "Ask the user to upload a file and store it: binary-mode elicitation when the client supports it, " +
				"else a form with a file field, else a link to the server's upload page. Returns the stored blob.",
			"inputSchema": obj{
				"type": "object",
				"properties": obj{
					"message": obj{"type": "string", "maxLength": 1000, "description": "what to ask the user"},
					"key":     keyProp("where to store the blob (must not exist yet); default uploads/<id>/<filename>"),
					"accept":  obj{"type": "array", "items": obj{"type": "string"}, "description": "accepted media types (image/png, image/*)"},
					"maxSize": obj{"type": "integer", "minimum": 1, "description": "largest accepted file in bytes"},
					"mode":    obj{"type": "string", "enum": []string{"binary", "form", "url"}, "description": "force an elicitation mode"},
				},
				"additionalProperties": false,
			},
			"outputSchema": blobSchema(),
			"annotations":  obj{"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": true},
		},
		streams:  true,
		stateful: true,
		requires: []string{"elicitation"},
		run:      s.requestUpload,
	})
}

func filenameProblem(name string) string {
	if name == "" {
		return ""
	}
	if len(name) > 255 || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return fmt.Sprintf("Argument %q must be a plain file name (no '/', '\\', NUL, at most 255 bytes)", "filename")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Sprintf("Argument %q must not contain control characters", "filename")
		}
	}
	return ""
}

// fileValue returns the file argument or field at path: taken out of the
// message by reader.go, or decoded now from a small string value.
func fileValue(files *fileSet, path, name string, raw json.RawMessage, spec fileSpec) (*fileArg, string) {
	if fa := files.get(path); fa != nil {
		if fa.raw {
			return &fileArg{name: name, problem: schemeProblem(fa.head)}, ""
		}
		return fa, ""
	}
	if raw == nil || string(raw) == "null" {
		return nil, fmt.Sprintf("Argument %q is required", name)
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return nil, fmt.Sprintf("Argument %q must be a string", name)
	}
	return inlineFile(name, spec, v), ""
}

func (s *Server) uploadFile(c *call, args map[string]json.RawMessage) (obj, error) {
	key, bad := argString(args, "key", false)
	if bad != "" {
		return toolError("%s", bad), nil
	}
	filename, bad := argString(args, "filename", false)
	if bad != "" {
		return toolError("%s", bad), nil
	}
	if bad := filenameProblem(filename); bad != "" {
		return toolError("%s", bad), nil
	}
	fa, bad := fileValue(c.files, "/params/arguments/file", "file", args["file"], s.uploadSpec())
	if bad != "" {
		return toolError("%s", bad), nil
	}
	if key == "" {
		key = UploadPrefix(newUploadID()) + orDefault(filename, "upload")
	}
	if err := storage.ValidateKey(key); err != nil {
		fa.release()
		return toolError("Invalid key %q: %v", key, err), nil
	}
	info, res, err := s.storeFile(c.ctx, fa, key, filename, false)
	if res != nil || err != nil {
		return res, err
	}
	return blobResult(info), nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func blobResult(info storage.Info) obj {
	sc := blobStruct(info)
	return obj{"content": []any{structuredText(sc), resourceLink(info)}, "structuredContent": sc}
}

// storeFile validates a decoded file and commits it under key: the writer
// reader.go opened, or a copy of the spooled or inline payload. Any problem
// is an isError result and nothing is stored.
func (s *Server) storeFile(ctx context.Context, fa *fileArg, key, filename string, mustBeNew bool) (storage.Info, obj, error) {
	defer fa.release()
	if fa.problem != "" {
		return storage.Info{}, fileError(fa), nil
	}
	why, mt := contentProblem(fa.header.MediaType, fa.size, fa.head)
	if why != "" {
		fa.problem = why
		return storage.Info{}, fileError(fa), nil
	}
	var info storage.Info
	var err error
	if fa.w != nil && fa.key == key {
		info, err = fa.w.Commit(ctx)
	} else {
		if mt == fa.header.MediaType {
			mt = storedType(fa.header)
		}
		var src io.Reader = bytes.NewReader(fa.inline)
		switch {
		case fa.spool != nil:
			src = fa.spool
		case fa.w != nil:
			return storage.Info{}, nil, errors.New("mcp: bug: direct upload under another key")
		}
		var w storage.Writer
		w, err = s.backend.Create(ctx, key, storage.CreateOptions{MediaType: mt, Filename: filename, Size: fa.size, IfNotExists: mustBeNew})
		if err == nil {
			if _, err = io.Copy(w, src); err == nil {
				info, err = w.Commit(ctx)
			}
			if err != nil {
				_ = w.Abort(ctx)
			}
		}
	}
	if err != nil {
		switch {
		case errors.Is(err, storage.ErrInvalidKey):
			return info, toolError("Invalid key %q: %v", key, err), nil
		case errors.Is(err, storage.ErrExists):
			return info, toolError("Blob %q already exists", key), nil
		}
		return info, nil, fmt.Errorf("mcp: store %q: %w", key, err)
	}
	s.hub.PublishBlobChange(info.Key)
	s.log.Debug("mcp: file stored", "key", info.Key, "size", info.Size, "mediaType", info.MediaType)
	return info, nil, nil
}

// uploadState is request_upload's progress, kept in the signed requestState
// in 2026-07-28.
type uploadState struct {
	Mode    string   `json:"mode"`
	ID      string   `json:"id"`
	Key     string   `json:"key,omitempty"`
	MaxSize int64    `json:"max"`
	Accept  []string `json:"acc,omitempty"`
	Message string   `json:"msg,omitempty"`
}

// elicitModes reads the client's elicitation capability.
func elicitModes(caps json.RawMessage) (form, url, binary bool, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(caps, &m) != nil {
		return
	}
	raw, has := m["elicitation"]
	if !has || string(raw) == "null" {
		return
	}
	var e map[string]json.RawMessage
	if json.Unmarshal(raw, &e) != nil {
		return
	}
	_, form = e["form"]
	_, url = e["url"]
	_, binary = e["binary"]
	if !url && !binary {
		form = true // {} means form only
	}
	return form, url, binary, true
}

// stateFiles returns the x-mcp-file fields of the form a request_upload
// requestState asked for, so a retry's inputResponses are bounded while
// they arrive (when requestState precedes them in params). The state is
// verified as in runModern; anything else yields nil.
func (s *Server) stateFiles(principal, method, name, state string) map[string]fileSpec {
	if method != "tools/call" || name != "request_upload" {
		return nil
	}
	claims, err := s.keyring.Verify(state, token.PurposeRequestState)
	if err != nil || claims.Principal != principal || claims.Object != method+" "+name {
		return nil
	}
	var st uploadState
	if json.Unmarshal(claims.Data, &st) != nil || st.Mode != "form" {
		return nil
	}
	return map[string]fileSpec{"file": {Accept: st.Accept, MaxSize: st.MaxSize}}
}

// binaryMaxFileSize is elicitation.binary.maxFileSize, 0 when absent.
func binaryMaxFileSize(caps json.RawMessage) int64 {
	var c struct {
		Elicitation struct {
			Binary struct {
				MaxFileSize int64 `json:"maxFileSize"`
			} `json:"binary"`
		} `json:"elicitation"`
	}
	_ = json.Unmarshal(caps, &c)
	return c.Elicitation.Binary.MaxFileSize
}

// newUploadState validates request_upload's arguments and picks the mode.
func (s *Server) newUploadState(c *call, args map[string]json.RawMessage) (*uploadState, string) {
	st := &uploadState{ID: newUploadID(), MaxSize: s.opts.MaxFileBytes}
	var bad string
	if st.Message, bad = argString(args, "message", false); bad != "" {
		return nil, bad
	}
	if st.Message == "" {
		st.Message = "Choose a file to upload to mcpblob"
	}
	if st.Key, bad = argString(args, "key", false); bad != "" {
		return nil, bad
	}
	if st.Key != "" {
		if err := storage.ValidateKey(st.Key); err != nil {
			return nil, fmt.Sprintf("Invalid key %q: %v", st.Key, err)
		}
	}
	if raw, ok := args["accept"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &st.Accept) != nil {
			return nil, `Argument "accept" must be an array of media types`
		}
	}
	if raw, ok := args["maxSize"]; ok && string(raw) != "null" {
		var n int64
		if json.Unmarshal(raw, &n) != nil || n < 1 {
			return nil, `Argument "maxSize" must be a positive integer`
		}
		st.MaxSize = min(n, s.opts.MaxFileBytes)
	}
	mode, bad := argString(args, "mode", false)
	if bad != "" {
		return nil, bad
	}
	form, url, binary, ok := elicitModes(c.caps)
	if !ok {
		return nil, "The client does not support elicitation"
	}
	switch {
	case mode == "binary" && binary, mode == "form" && form, mode == "url" && url:
		st.Mode = mode
	case mode != "":
		return nil, fmt.Sprintf("The client does not support %s-mode elicitation", mode)
	case binary:
		st.Mode = "binary"
	case form:
		st.Mode = "form"
	default:
		st.Mode = "url"
	}
	if st.Mode == "binary" {
		// The client rejects files over its maxFileSize (SEP-1306): ask
		// for no more than it can send.
		if n := binaryMaxFileSize(c.caps); n > 0 && n < st.MaxSize {
			st.MaxSize = n
		}
	}
	return st, ""
}

// mintUpload signs the upload endpoint token for st.
func (s *Server) mintUpload(c *call, st *uploadState) (string, error) {
	data, _ := json.Marshal(UploadTokenData{Field: "file", Mode: st.Mode})
	return s.keyring.Sign(token.Claims{
		Purpose:   token.PurposeUpload,
		Principal: c.principal,
		Object:    st.Key,
		MaxSize:   st.MaxSize,
		Accept:    st.Accept,
		Expires:   time.Now().Add(DefaultUploadTTL),
		Nonce:     st.ID,
		Data:      data,
	})
}

// elicitation builds the elicitation/create params for st.
func (s *Server) elicitation(c *call, st *uploadState) (obj, error) {
	switch st.Mode {
	case "form":
		field := obj{"type": "string", "format": "uri", "title": "File", "description": "the file to upload",
			"x-mcp-file": specObj(fileSpec{Accept: st.Accept, MaxSize: st.MaxSize})}
		p := obj{"message": st.Message, "requestedSchema": obj{
			"type": "object", "properties": obj{"file": field}, "required": []string{"file"}}}
		if c.modern || c.version >= Version20251125 {
			p["mode"] = "form"
		}
		return p, nil
	case "binary":
		tok, err := s.mintUpload(c, st)
		if err != nil {
			return nil, err
		}
		field := obj{"type": "file", "title": "File", "description": "the file to upload", "maxSize": st.MaxSize, "multiple": false}
		if len(st.Accept) > 0 {
			field["accept"] = st.Accept
		}
		p := obj{"mode": "binary", "message": st.Message,
			"requestedSchema": obj{"type": "object", "properties": obj{"file": field}, "required": []string{"file"}},
			"uploadEndpoints": obj{"file": obj{"url": s.opts.PublicURL + "/u/" + tok, "method": "POST", "uploadId": st.ID}},
		}
		if !c.modern {
			p["_meta"] = obj{"progressToken": "upload-" + st.ID}
		}
		return p, nil
	default:
		tok, err := s.mintUpload(c, st)
		if err != nil {
			return nil, err
		}
		p := obj{"mode": "url", "message": st.Message, "url": s.opts.PublicURL + "/upload/" + tok}
		if !c.modern {
			p["elicitationId"] = st.ID
		}
		return p, nil
	}
}

// elicitAnswer is an elicitation result.
type elicitAnswer struct {
	Action  string                     `json:"action"`
	Content map[string]json.RawMessage `json:"content"`
}

func (s *Server) requestUpload(c *call, args map[string]json.RawMessage) (obj, error) {
	if c.modern {
		return s.requestUploadModern(c, args)
	}
	st, bad := s.newUploadState(c, args)
	if bad != "" {
		return toolError("%s", bad), nil
	}
	params, err := s.elicitation(c, st)
	if err != nil {
		return nil, err
	}
	var w *uploadWaiter
	if st.Mode != "form" {
		var drop func()
		w, drop = s.uploads.add(st.ID, func(n, total int64) {
			// On the elicitation's own token (SEP-1306) and, when the
			// client asked for progress on the call, on the call's token.
			p := obj{"progressToken": "upload-" + st.ID, "progress": n, "message": "uploading"}
			if total >= 0 {
				p["total"] = total
			}
			c.notify("notifications/progress", p)
			c.progress(float64(n), float64(total), "uploading")
		})
		defer drop()
	}
	var sent func(int64)
	if st.Mode == "form" {
		var unexpect func()
		defer func() {
			if unexpect != nil {
				unexpect()
			}
		}()
		sent = func(id int64) {
			unexpect = s.uploads.expectFiles(c.sess.id, id, map[string]fileSpec{"file": {Accept: st.Accept, MaxSize: st.MaxSize}})
		}
	}
	m, err := c.requestMsg("elicitation/create", params, sent)
	if err != nil {
		return toolError("elicitation/create failed: %v", err), nil
	}
	defer m.files.discard()
	var ans elicitAnswer
	if json.Unmarshal(m.Result, &ans) != nil {
		return toolError("The client's elicitation result is malformed"), nil
	}
	if res := declined(ans.Action); res != nil {
		return res, nil
	}
	switch st.Mode {
	case "form":
		return s.finishForm(c, st, m.files, "/result/content/file", ans)
	case "binary":
		return s.finishBinary(c, st, ans)
	}
	// URL mode: accept is consent; wait for the upload itself.
	info, found := s.findUpload(c.ctx, st)
	t := time.NewTimer(s.opts.ClientTimeout)
	defer t.Stop()
	poll := time.NewTicker(time.Second) // another node may have taken the upload
	defer poll.Stop()
	for !found {
		select {
		case infos := <-w.done:
			if len(infos) > 0 {
				info, found = infos[0], true
			}
		case <-poll.C:
			info, found = s.findUpload(c.ctx, st)
		case <-t.C:
			return toolError("No file was uploaded within %v", s.opts.ClientTimeout), nil
		case <-c.ctx.Done():
			return nil, c.ctx.Err()
		}
	}
	c.notify("notifications/elicitation/complete", obj{"elicitationId": st.ID})
	return blobResult(info), nil
}

func declined(action string) obj {
	switch action {
	case "accept":
		return nil
	case "decline":
		return toolError("The user declined the upload")
	case "cancel":
		return toolError("The user cancelled the upload")
	}
	return toolError("The client answered the elicitation with an unknown action %q", action)
}

// finishForm stores the data URI of a form-mode answer.
func (s *Server) finishForm(c *call, st *uploadState, files *fileSet, path string, ans elicitAnswer) (obj, error) {
	fa, bad := fileValue(files, path, "file", ans.Content["file"], fileSpec{Accept: st.Accept, MaxSize: st.MaxSize})
	if bad != "" {
		return toolError("%s", strings.Replace(bad, "Argument", "Field", 1)), nil
	}
	if fa.problem == "" && fa.size > st.MaxSize {
		fa.problem = fmt.Sprintf("file is larger than maxSize %d bytes", st.MaxSize)
	}
	if fa.problem == "" && len(st.Accept) > 0 && !codec.MatchAccept(st.Accept, fa.header.MediaType) {
		fa.problem = acceptProblem(fa.header.MediaType, st.Accept)
	}
	key := st.Key
	if key == "" {
		key = UploadPrefix(st.ID) + "upload"
	}
	info, res, err := s.storeFile(c.ctx, fa, key, "", true)
	if res != nil || err != nil {
		if res != nil {
			replaceArgument(res)
		}
		return res, err
	}
	return blobResult(info), nil
}

// replaceArgument words a file error for an elicitation field.
func replaceArgument(res obj) {
	if content, ok := res["content"].([]any); ok && len(content) > 0 {
		if tb, ok := content[0].(obj); ok {
			if t, ok := tb["text"].(string); ok {
				tb["text"] = strings.Replace(t, "Argument", "Field", 1)
			}
		}
	}
}

// finishBinary verifies a binary-mode answer against storage: the uploadId
// is the one minted, the object exists, size and type match.
func (s *Server) finishBinary(c *call, st *uploadState, ans elicitAnswer) (obj, error) {
	var fv struct {
		Name     string `json:"name"`
		Size     int64  `json:"size"`
		MimeType string `json:"mimeType"`
		UploadID string `json:"uploadId"`
	}
	raw := ans.Content["file"]
	if len(raw) > 0 && raw[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil || len(list) != 1 {
			return toolError(`Field "file": exactly one file is expected`), nil
		}
		raw = list[0]
	}
	if raw == nil || json.Unmarshal(raw, &fv) != nil {
		return toolError(`Field "file": the answer must describe the uploaded file ({name, size, mimeType, uploadId})`), nil
	}
	if fv.UploadID != st.ID {
		return toolError(`Field "file": uploadId %q does not name this upload`, fv.UploadID), nil
	}
	info, found := s.findUpload(c.ctx, st)
	if !found {
		return toolError(`Field "file": nothing was uploaded for uploadId %q`, st.ID), nil
	}
	if info.Size != fv.Size {
		return toolError(`Field "file": the answer says %d bytes but %d bytes were uploaded`, fv.Size, info.Size), nil
	}
	if fv.MimeType != "" && baseType(fv.MimeType) != baseType(info.MediaType) {
		return toolError(`Field "file": the answer says %q but %q was uploaded`, fv.MimeType, info.MediaType), nil
	}
	return blobResult(info), nil
}

func baseType(mt string) string {
	if t, _, err := mime.ParseMediaType(mt); err == nil {
		return t
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

// findUpload looks for the object uploaded for st.
func (s *Server) findUpload(ctx context.Context, st *uploadState) (storage.Info, bool) {
	if st.Key != "" {
		info, err := s.backend.Stat(ctx, st.Key)
		return info, err == nil
	}
	page, err := s.backend.List(ctx, UploadPrefix(st.ID), "", 1)
	if err != nil || len(page.Items) == 0 {
		return storage.Info{}, false
	}
	return page.Items[0], true
}

// requestUploadModern is request_upload over MRTR (2026-07-28): an
// InputRequiredResult with a signed requestState naming the upload, until
// the retried call carries the answer and, for URL mode, the file is there.
func (s *Server) requestUploadModern(c *call, args map[string]json.RawMessage) (obj, error) {
	responses, e := inputResponses(c)
	if e != nil {
		return nil, e
	}
	var st *uploadState
	if raw, ok := c.params["requestState"]; ok && string(raw) != "null" {
		var rs string
		if json.Unmarshal(raw, &rs) != nil {
			return nil, invalidParams("Invalid params: requestState must be a string")
		}
		data, e := s.verifyState(c, rs)
		if e != nil {
			return nil, e
		}
		st = &uploadState{}
		if json.Unmarshal(data, &st) != nil || st.ID == "" {
			return nil, invalidParams("Invalid params: requestState failed verification")
		}
	} else {
		var bad string
		if st, bad = s.newUploadState(c, args); bad != "" {
			return toolError("%s", bad), nil
		}
		responses = nil // answers without the state they belong to
	}
	ask := func() (obj, error) {
		p, err := s.elicitation(c, st)
		if err != nil {
			return nil, err
		}
		data, _ := json.Marshal(st)
		return s.inputRequired(c, map[string]inputReq{"upload": {method: "elicitation/create", params: p, capability: "elicitation"}}, data)
	}
	raw, ok := responses["upload"]
	if !ok {
		return ask()
	}
	var ans elicitAnswer
	if json.Unmarshal(raw, &ans) != nil {
		return nil, invalidParams(`Invalid params: inputResponses["upload"] is malformed`)
	}
	if res := declined(ans.Action); res != nil {
		return res, nil
	}
	switch st.Mode {
	case "form":
		return s.finishForm(c, st, c.files, "/params/inputResponses/upload/content/file", ans)
	case "binary":
		return s.finishBinary(c, st, ans)
	}
	if info, found := s.findUpload(c.ctx, st); found {
		return blobResult(info), nil
	}
	return ask() // not uploaded yet: ask again with the same state
}
