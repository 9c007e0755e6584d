package hostilefiles

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
)

// filesCaps declares the files capability (SEP-2631).
var filesCaps = map[string]any{"files": map[string]any{}}

// rpc sends method(params) as principal in 2026-07-28, declaring caps.
func rpc(ctx context.Context, e *hostile.Env, principal, method string, params map[string]any, caps map[string]any) *wire.Answer {
	name := ""
	if method == "tools/call" {
		name, _ = params["name"].(string)
	}
	body := hostile.RPC(method, hostile.WithMeta(params, caps))
	return wire.Do(e.HTTP, e.ModernReq(ctx, principal, method, name, body))
}

// rpcError is the JSON-RPC error of an answer (nil for a result), and the
// whole message.
type rpcError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

func decode(a *wire.Answer) (msg []byte, e *rpcError, result json.RawMessage) {
	msg, err := mcpc.Message(a.ContentType(), a.Body)
	if err != nil {
		return nil, nil, nil
	}
	var m struct {
		Error  *rpcError       `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(msg, &m)
	return msg, m.Error, m.Result
}

// file is a file the inputs hit: its URI, upload id, name and bytes.
type file struct {
	URI, UploadID, Name string
	Data                []byte
}

// digestOf is the wire digest of b.
func digestOf(b []byte) map[string]any {
	s := sha256.Sum256(b)
	return map[string]any{"algorithm": "sha-256", "value": base64.RawURLEncoding.EncodeToString(s[:])}
}

// prepare prepares principal's file of data named name, uploads its bytes
// when upload is set (registering them with the store check) and
// registers its upload link as a secret.
func prepare(ctx context.Context, e *hostile.Env, principal, name string, data []byte, upload bool) (file, error) {
	a := rpc(ctx, e, principal, "files/prepareUpload", map[string]any{"name": name, "mimeType": "text/plain",
		"size": len(data), "digest": digestOf(data), "idempotencyKey": fmt.Sprintf("hard-%d", hostile.Next())}, filesCaps)
	_, rerr, res := decode(a)
	var r struct {
		UploadID string `json:"uploadId"`
		File     struct{ URI string }
		Upload   struct{ URL string }
	}
	if rerr != nil || json.Unmarshal(res, &r) != nil || r.UploadID == "" {
		return file{}, errors.New("files/prepareUpload: " + a.String())
	}
	e.NoteSecret("files/* upload link", r.Upload.URL)
	f := file{URI: r.File.URI, UploadID: r.UploadID, Name: name, Data: data}
	if !upload {
		return f, nil
	}
	u, err := url.Parse(r.Upload.URL)
	if err != nil {
		return file{}, err
	}
	req := e.Request(ctx, http.MethodPut, u.Path, "", data)
	req.Header.Set("Content-Type", "text/plain")
	put := wire.Do(e.HTTP, req)
	if put.Status != http.StatusCreated {
		return file{}, errors.New("PUT of the file's bytes: " + put.String())
	}
	e.NoteStored(principal, put)
	return f, nil
}

// fixtures are the files every input may hit, made once per run.
type fixtures struct {
	once       sync.Once
	err        error
	alice, bob file // uploaded
	pending    file // alice's, prepared and never uploaded
}

func (fx *fixtures) get(ctx context.Context, e *hostile.Env) error {
	fx.once.Do(func() {
		n := hostile.Next()
		if fx.alice, fx.err = prepare(ctx, e, "alice", fmt.Sprintf("alice-%d.txt", n), []byte(strings.Repeat("alice's file\n", 40)), true); fx.err != nil {
			return
		}
		if fx.bob, fx.err = prepare(ctx, e, "bob", fmt.Sprintf("bob-secret-%d.txt", n), []byte(strings.Repeat("bob's own bytes\n", 33)), true); fx.err != nil {
			return
		}
		fx.pending, fx.err = prepare(ctx, e, "alice", "pending.txt", []byte("never sent\n"), false)
	})
	return fx.err
}

// leaks is what of bob's file an answer to alice names ("" none): its
// name or digest (an input may echo bob's URI or upload id; nothing
// else of his may come back).
func (fx *fixtures) leaks(a *wire.Answer) string {
	bobDigest, _ := digestOf(fx.bob.Data)["value"].(string)
	for what, s := range map[string]string{"name": fx.bob.Name, "digest": bobDigest} {
		if s != "" && strings.Contains(string(a.Body), s) {
			return "the answer names bob's file's " + what + ": " + a.String()
		}
	}
	return ""
}
