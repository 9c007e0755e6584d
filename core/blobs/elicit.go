package blobs

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/files"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// requestUpload is the request_upload tool: it elicits a file (binary, form
// or URL mode), then verifies or stores it. In 2026-07-28 each round is a
// retry carrying the signed state; in 2025-11-25 the call waits.
func (a *App) requestUpload(c *mcp.Call, in requestArgs) (*mcp.ToolResult, error) {
	st, res, err := a.uploadRound(c, in)
	if res != nil || err != nil {
		return res, err
	}
	req := a.elicitation(c, st)
	var w *waiter
	if !c.Modern() && st.Mode != "form" {
		var drop func()
		w, drop = a.uploads.add(st.ID, func(n, total int64) { uploadProgress(c, st.ID, n, total) })
		defer drop()
	}
	got, err := c.Input(map[string]mcp.InputRequest{"upload": req})
	if err != nil {
		return nil, err
	}
	var ans elicitAnswer
	if json.Unmarshal(got["upload"].Result, &ans) != nil {
		if c.Modern() {
			return nil, mcp.InvalidParams(`Invalid params: inputResponses["upload"] is malformed`)
		}
		return mcp.ToolError("The client's elicitation result is malformed"), nil
	}
	if res := declined(ans.Action); res != nil {
		return res, nil
	}
	switch st.Mode {
	case "form":
		return a.finishForm(c, st, got["upload"])
	case "binary":
		return a.finishBinary(c, st, ans)
	}
	return a.finishURL(c, st, w, req)
}

// uploadRound returns the upload this call is about: new (first round), or
// the one its state names. That upload's link (binary and URL modes) rides
// in the state, so a retry names the same endpoint as the round before; only
// when the link has expired with nothing uploaded does a new upload replace
// it, and the next question says so. Nothing is kept on the node: any node
// answers any round.
func (a *App) uploadRound(c *mcp.Call, in requestArgs) (*uploadState, *mcp.ToolResult, error) {
	raw, err := c.State()
	if err != nil {
		return nil, nil, err
	}
	if raw == nil {
		st, bad := a.newUploadState(c, in)
		if bad != "" {
			return nil, mcp.ToolError("%s", bad), nil
		}
		return st, nil, a.startUpload(c, st)
	}
	st := &uploadState{}
	if json.Unmarshal(raw, st) != nil || st.ID == "" {
		return nil, nil, mcp.InvalidParams("Invalid params: requestState failed verification")
	}
	switch {
	case st.Mode == "form":
	case st.Token == "": // a state signed before links rode in it
		return st, nil, a.startUpload(c, st)
	case a.linkExpired(st):
		if _, found := a.findUpload(c, st); !found {
			st.Expired, st.ID = st.ID, token.NewUploadID()
			return st, nil, a.startUpload(c, st)
		}
	}
	return st, nil, nil
}

// startUpload mints st's upload link (binary and URL modes) and saves st
// for the rounds to come.
func (a *App) startUpload(c *mcp.Call, st *uploadState) error {
	if st.Mode != "form" {
		tok, err := a.mintUpload(c, st)
		if err != nil {
			return err
		}
		st.Token = tok
	}
	data, _ := json.Marshal(st)
	c.SetState(data)
	return nil
}

func uploadProgress(c *mcp.Call, id string, n, total int64) {
	// On the elicitation's own token (SEP-1306) and, when the client
	// asked for progress on the call, on the call's token.
	p := mcp.Object{"progressToken": "upload-" + id, "progress": n, "message": "uploading"}
	if total >= 0 {
		p["total"] = total
	}
	c.Notify("notifications/progress", p)
	c.Progress(float64(n), float64(total), "uploading")
}

// finishForm stores the data URI (or the mcp-file URI's file) of a
// form-mode answer.
func (a *App) finishForm(c *mcp.Call, st *uploadState, ans *mcp.Answer) (*mcp.ToolResult, error) {
	if res := a.sameFile(st, ans); res != nil {
		return res, nil
	}
	f, err := ans.File("file", mcp.FileSpec{Accept: st.Accept, MaxSize: st.MaxSize, TransferModes: a.fileModes})
	if fe := (*mcp.FileError)(nil); c.Modern() && errors.As(err, &fe) && fe.Reason == fileNotUploaded {
		return nil, a.awaitFile(c, st, ans)
	}
	if err != nil {
		return nil, err // a *mcp.FileError names the field
	}
	key := st.Key
	if key == "" {
		key = UploadPrefix(st.ID) + "upload"
	}
	info, res, err := a.store(c, f, key, "", true, storage.Expiry(time.Now(), time.Duration(st.TTL)*time.Second))
	if res != nil {
		for i, b := range res.Content {
			if tb, ok := b.(mcp.Text); ok {
				tb.Text = strings.Replace(tb.Text, "Argument", "Field", 1)
				res.Content[i] = tb
			}
		}
	}
	if res != nil || err != nil {
		return res, err
	}
	return a.storedResult(c, info)
}

// finishBinary verifies a binary-mode answer against storage: the uploadId
// is the one minted, the object exists, size and type match.
func (a *App) finishBinary(c *mcp.Call, st *uploadState, ans elicitAnswer) (*mcp.ToolResult, error) {
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
			return mcp.ToolError(`Field "file": exactly one file is expected`), nil
		}
		raw = list[0]
	}
	if raw == nil || json.Unmarshal(raw, &fv) != nil {
		return mcp.ToolError(`Field "file": the answer must describe the uploaded file ({name, size, mimeType, uploadId})`), nil
	}
	if fv.UploadID != st.ID && fv.UploadID == st.Expired {
		return mcp.ToolError(`Field "file": the upload link for uploadId %q expired before a file arrived`, fv.UploadID), nil
	}
	if fv.UploadID != st.ID {
		return mcp.ToolError(`Field "file": uploadId %q does not name this upload`, fv.UploadID), nil
	}
	info, found := a.findUpload(c, st)
	switch {
	case !found:
		return mcp.ToolError(`Field "file": nothing was uploaded for uploadId %q`, st.ID), nil
	case info.Size != fv.Size:
		return mcp.ToolError(`Field "file": the answer says %d bytes but %d bytes were uploaded`, fv.Size, info.Size), nil
	case fv.MimeType != "" && baseType(fv.MimeType) != baseType(info.MediaType):
		return mcp.ToolError(`Field "file": the answer says %q but %q was uploaded`, fv.MimeType, info.MediaType), nil
	}
	return blobResult(info), nil
}

// finishURL waits for a URL-mode upload: accept is consent, the file comes
// through the upload page. In 2026-07-28 a file not there yet asks again
// with the same state.
func (a *App) finishURL(c *mcp.Call, st *uploadState, w *waiter, req mcp.InputRequest) (*mcp.ToolResult, error) {
	info, found := a.findUpload(c, st)
	if c.Modern() {
		if found {
			return blobResult(info), nil
		}
		return nil, c.AskAgain(map[string]mcp.InputRequest{"upload": req})
	}
	// Until the upload arrives the elicitation is still pending: it holds
	// a unit of the pending budget, as the elicitation did.
	release, err := c.HoldPending()
	if err != nil {
		return nil, err
	}
	defer release()
	t := time.NewTimer(a.opts.WaitTimeout)
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
			info, found = a.findUpload(c, st)
		case <-t.C:
			return mcp.ToolError("No file was uploaded within %v", a.opts.WaitTimeout), nil
		case <-c.Context().Done():
			return nil, c.Context().Err()
		}
	}
	c.Notify("notifications/elicitation/complete", mcp.Object{"elicitationId": st.ID})
	return blobResult(info), nil
}

// waiters connect upload endpoints (core/server) with the request_upload
// call waiting on the same node.
type waiters struct {
	mu sync.Mutex
	m  map[string]*waiter
}

type waiter struct {
	progress func(n, total int64)
	done     chan []storage.Info
}

func (u *waiters) add(id string, progress func(n, total int64)) (*waiter, func()) {
	w := &waiter{progress: progress, done: make(chan []storage.Info, 1)}
	u.mu.Lock()
	if u.m == nil {
		u.m = map[string]*waiter{}
	}
	u.m[id] = w
	u.mu.Unlock()
	return w, func() {
		u.mu.Lock()
		delete(u.m, id)
		u.mu.Unlock()
	}
}

func (u *waiters) get(id string) *waiter {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.m[id]
}

// UploadProgress reports n of total bytes received for uploadID (total < 0:
// unknown). A request_upload call on this node that elicited the upload
// forwards it as notifications/progress.
func (a *App) UploadProgress(uploadID string, n, total int64) {
	if w := a.uploads.get(uploadID); w != nil && w.progress != nil {
		w.progress(n, total)
	}
}

// UploadDone reports the objects committed for uploadID and announces them.
func (a *App) UploadDone(uploadID string, infos []storage.Info) {
	a.filesDone(infos)
	for _, info := range infos {
		a.Changed(info.Key)
	}
	if w := a.uploads.get(uploadID); w != nil {
		select {
		case w.done <- infos:
		default:
		}
	}
}

// answerFileURI is the mcp-file URI a form answer gives as its file; "" for
// anything else.
func answerFileURI(ans *mcp.Answer) string {
	var r struct {
		Content struct {
			File string `json:"file"`
		} `json:"content"`
	}
	if json.Unmarshal(ans.Result, &r) != nil || !files.IsURI(r.Content.File) {
		return ""
	}
	return r.Content.File
}

// awaitFile answers a 2026-07-28 form answer that names a file whose bytes
// have not arrived: the same question again, with the file's URI in the
// signed requestState, so the client finishes that upload and retries
// with it; no round starts another file.
func (a *App) awaitFile(c *mcp.Call, st *uploadState, ans *mcp.Answer) error {
	st.File = answerFileURI(ans)
	data, _ := json.Marshal(st)
	c.SetState(data)
	req := a.elicitation(c, st)
	req.Params["message"] = "Waiting for the file's upload to complete (" + st.File + "); answer again with it once it is uploaded. " + st.Message
	return c.AskAgain(map[string]mcp.InputRequest{"upload": req})
}

// sameFile refuses a round that names another file than the one its state
// waits for.
func (a *App) sameFile(st *uploadState, ans *mcp.Answer) *mcp.ToolResult {
	if st.File == "" || answerFileURI(ans) == st.File {
		return nil
	}
	return mcp.ToolError("Field %q: this call waits for the upload of %s; answer with that file", "file", st.File)
}
