package blobs

import (
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// UploadTokenData is the Data of the upload tokens request_upload mints
// (token.PurposeUpload; Nonce is the uploadId, Object the key or "" for
// [UploadPrefix](uploadId)+filename, MaxSize and Accept the limits).
type UploadTokenData struct {
	Field    string `json:"field,omitempty"`    // the elicitation field
	Mode     string `json:"mode,omitempty"`     // "binary" or "url"
	Multiple bool   `json:"multiple,omitempty"` // several file parts allowed
	// File is the SEP-2631 file (core/files) whose bytes the upload brings
	// (Mode "file"): the endpoint hands them to App.FileUploaded.
	File string `json:"file,omitempty"`
}

// uploadState is request_upload's progress, kept across rounds (in the
// signed requestState in 2026-07-28). Token is the upload endpoint's token
// (binary and URL modes), minted once: every round of one call names the
// same upload until it completes or its link expires. Expired is the id of
// the upload a renewal replaced (see App.uploadRound).
type uploadState struct {
	Mode    string   `json:"mode"`
	ID      string   `json:"id"`
	Key     string   `json:"key,omitempty"`
	MaxSize int64    `json:"max"`
	Accept  []string `json:"acc,omitempty"`
	Message string   `json:"msg,omitempty"`
	Token   string   `json:"tok,omitempty"`
	Expired string   `json:"old,omitempty"`
	// TTL is the blob's ttlSeconds (0: none), counted from its upload.
	TTL int64 `json:"ttl,omitempty"`
	// File is the mcp-file URI a form answer named before its bytes
	// arrived (2026-07-28): every later round waits for that file.
	File string `json:"file,omitempty"`
}

// elicitModes reads the client's elicitation capability.
func elicitModes(caps json.RawMessage) (form, url, binary bool, ok bool) {
	var c struct {
		Elicitation *map[string]json.RawMessage `json:"elicitation"`
	}
	if json.Unmarshal(caps, &c) != nil || c.Elicitation == nil {
		return
	}
	e := *c.Elicitation
	_, form = e["form"]
	_, url = e["url"]
	_, binary = e["binary"]
	if !url && !binary {
		form = true // {} means form only
	}
	return form, url, binary, true
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

// requestArgs are request_upload's arguments.
type requestArgs struct {
	Message string   `json:"message"`
	Key     string   `json:"key"`
	Accept  []string `json:"accept"`
	MaxSize int64    `json:"maxSize"` // 0: MaxFileBytes
	Mode    string   `json:"mode"`
	// TTLSeconds is the stored blob's lifetime, counted from its upload;
	// 0: none.
	TTLSeconds int64 `json:"ttlSeconds"`
}

// newUploadState validates request_upload's arguments and picks the mode.
func (a *App) newUploadState(c *mcp.Call, in requestArgs) (*uploadState, string) {
	st := &uploadState{ID: token.NewUploadID(), MaxSize: a.opts.MaxFileBytes, Message: in.Message, Key: in.Key, Accept: in.Accept}
	if st.Message == "" {
		st.Message = "Choose a file to upload to mcpblob"
	}
	if st.Key != "" {
		if err := storage.ValidateKey(st.Key); err != nil {
			return nil, fmt.Sprintf("Argument %q: %s", "key", keyProblem(err))
		}
	}
	if in.MaxSize > 0 {
		st.MaxSize = min(in.MaxSize, a.opts.MaxFileBytes)
	}
	if in.TTLSeconds != 0 {
		if _, err := storage.CheckTTL(in.TTLSeconds); err != nil {
			return nil, fmt.Sprintf("Argument %q: %s", "ttlSeconds", err.Error())
		}
		st.TTL = in.TTLSeconds
	}
	if bad := st.pickMode(c.Capabilities(), in.Mode); bad != "" {
		return nil, bad
	}
	return st, ""
}

func (st *uploadState) pickMode(caps json.RawMessage, mode string) string {
	form, url, binary, ok := elicitModes(caps)
	if !ok {
		return "The client does not support elicitation"
	}
	switch {
	case mode == "binary" && binary, mode == "form" && form, mode == "url" && url:
		st.Mode = mode
	case mode != "":
		return fmt.Sprintf("The client does not support %s-mode elicitation", mode)
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
		if n := binaryMaxFileSize(caps); n > 0 && n < st.MaxSize {
			st.MaxSize = n
		}
	}
	return ""
}

// mintUpload seals the upload endpoint token for st: the URL goes to a
// browser or a client and must not show the key or the principal.
func (a *App) mintUpload(c *mcp.Call, st *uploadState) (string, error) {
	data, _ := json.Marshal(UploadTokenData{Field: "file", Mode: st.Mode})
	object, prefix := a.opts.Tenancy.UploadTarget(identity(c), st.Key)
	return a.keyring.Seal(token.Claims{
		Purpose:   token.PurposeUpload,
		Principal: c.Principal(),
		Object:    object,
		Prefix:    prefix,
		MaxSize:   st.MaxSize,
		Accept:    st.Accept,
		Expires:   time.Now().Add(a.opts.UploadTTL),
		Nonce:     st.ID,
		Data:      data,
		BlobTTL:   st.TTL,
	})
}

// linkExpired reports whether st's upload link no longer verifies (it
// expired, or its key left the keyring): the upload endpoint refuses it.
func (a *App) linkExpired(st *uploadState) bool {
	_, err := a.keyring.Verify(st.Token, token.PurposeUpload)
	return err != nil
}

// message is the elicitation's message for st, which says so when st
// replaced an upload whose link expired.
func (st *uploadState) message() string {
	if st.Expired != "" {
		return "The previous upload link expired before a file arrived; this is a new one. " + st.Message
	}
	return st.Message
}

// elicitation is the elicitation/create request for st; the upload
// endpoint is the one st names.
func (a *App) elicitation(c *mcp.Call, st *uploadState) mcp.InputRequest {
	req := mcp.InputRequest{Method: "elicitation/create", Capability: "elicitation"}
	switch st.Mode {
	case "form":
		spec := mcp.Object{"maxSize": st.MaxSize, "transferModes": a.fileModes}
		if len(st.Accept) > 0 {
			spec["accept"] = st.Accept
		}
		field := mcp.Object{"type": "string", "format": "uri", "title": "File", "description": "the file to upload", "x-mcp-file": spec}
		req.Params = mcp.Object{"message": st.Message, "requestedSchema": mcp.Object{
			"type": "object", "properties": mcp.Object{"file": field}, "required": []string{"file"}}}
		if c.Modern() || c.ProtocolVersion() >= mcp.Version20251125 {
			req.Params["mode"] = "form"
		}
		return req
	case "binary":
		req.Params = a.binaryParams(c, st)
		return req
	}
	req.Params = mcp.Object{"mode": "url", "message": st.message(), "url": a.opts.PublicURL + "/upload/" + st.Token}
	if !c.Modern() {
		req.Params["elicitationId"] = st.ID
	}
	return req
}

func (a *App) binaryParams(c *mcp.Call, st *uploadState) mcp.Object {
	field := mcp.Object{"type": "file", "title": "File", "description": "the file to upload", "maxSize": st.MaxSize, "multiple": false}
	if len(st.Accept) > 0 {
		field["accept"] = st.Accept
	}
	p := mcp.Object{"mode": "binary", "message": st.message(),
		"requestedSchema": mcp.Object{"type": "object", "properties": mcp.Object{"file": field}, "required": []string{"file"}},
		"uploadEndpoints": mcp.Object{"file": mcp.Object{"url": a.opts.PublicURL + "/u/" + st.Token, "method": "POST", "uploadId": st.ID}},
	}
	if !c.Modern() {
		p["_meta"] = mcp.Object{"progressToken": "upload-" + st.ID}
	}
	return p
}

// elicitAnswer is an elicitation result.
type elicitAnswer struct {
	Action  string                     `json:"action"`
	Content map[string]json.RawMessage `json:"content"`
}

func declined(action string) *mcp.ToolResult {
	switch action {
	case "accept":
		return nil
	case "decline":
		return mcp.ToolError("The user declined the upload")
	case "cancel":
		return mcp.ToolError("The user cancelled the upload")
	}
	return mcp.ToolError("The client answered the elicitation with an unknown action %q", action)
}

// baseType is a media type without parameters, lower-case.
func baseType(mt string) string {
	if t, _, err := mime.ParseMediaType(mt); err == nil {
		return t
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

// findUpload looks for the object uploaded for st.
func (a *App) findUpload(c *mcp.Call, st *uploadState) (storage.Info, bool) {
	ctx, view := c.Context(), a.view(c)
	if st.Key != "" {
		info, err := view.Stat(ctx, st.Key)
		return info, err == nil
	}
	page, err := view.List(ctx, UploadPrefix(st.ID), "", 1)
	if err != nil || len(page.Items) == 0 {
		return storage.Info{}, false
	}
	return page.Items[0], true
}
