package blobsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/mcp/scan"
	"github.com/mcpblob/mcpblob/core/server/gate"
	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// The JSON requests of the control API (POST /v1/links, POST /v1/uploads).
// Each field is checked and a refusal names it: unknown fields, fields
// given twice, numbers of the wrong kind or outside their range (ttlSeconds
// 9300000000 must not wrap around into some lifetime), bad keys and
// filenames.

// readJSON decodes a small JSON request object into v (unknown and repeated
// fields refused); false means an error response was written.
func (s *Server) readJSON(ctx *fasthttp.RequestCtx, v any) bool {
	if !s.admitJSON(ctx) {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(s.gate.Paced(ctx), maxControlJSON+1))
	if err != nil {
		gate.APIError(ctx, http.StatusBadRequest, "bad_request", "reading the body failed")
		return false
	}
	if len(b) > maxControlJSON {
		ctx.SetConnectionClose()
		gate.APIError(ctx, http.StatusRequestEntityTooLarge, "too_large", "JSON body too large")
		return false
	}
	if why := jsonProblem(b, v); why != "" {
		gate.APIError(ctx, http.StatusBadRequest, "bad_request", why)
		return false
	}
	return true
}

// admitJSON refuses (413) a JSON request whose declared length is over
// maxControlJSON, before any body byte.
func (s *Server) admitJSON(ctx *fasthttp.RequestCtx) bool {
	if cl := ctx.Request.Header.ContentLength(); cl > maxControlJSON {
		s.gate.RefuseBody(ctx, http.StatusRequestEntityTooLarge, "too_large", "JSON body too large")
		return false
	}
	return true
}

// jsonProblem decodes the object b into v and says what is wrong with it,
// naming the field; "" when nothing is.
func jsonProblem(b []byte, v any) string {
	if !json.Valid(b) {
		return "malformed JSON"
	}
	if bytes.TrimLeft(b, " \t\r\n")[0] != '{' {
		// encoding/json would take null for an empty object.
		return "the body must be a JSON object"
	}
	keys := topLevelKeys(b)
	for i, k := range keys {
		if slices.Contains(keys[:i], k) {
			return fmt.Sprintf("field %q is given more than once", k)
		}
		if !slices.Contains(fieldNames(v), k) {
			// encoding/json would match "Key" to key: names are exact here.
			return fmt.Sprintf("unknown field %q", k)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("field %q must be %s", te.Field, jsonKind(te.Type.String()))
	case errors.As(err, &te):
		return "the body must be a JSON object"
	}
	// encoding/json's only other error here: json: unknown field "x".
	if _, name, ok := bytes.Cut([]byte(err.Error()), []byte("unknown field ")); ok {
		return "unknown field " + string(name)
	}
	return "malformed JSON"
}

// jsonKind names a Go type of the request structs for a client.
func jsonKind(goType string) string {
	switch goType {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "[]string":
		return "an array of strings"
	}
	return "of another type"
}

// topLevelKeys returns the member names of the object b, in order,
// repeats included; nil when b is not an object. b is valid JSON.
func topLevelKeys(b []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := tok.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// fieldNames returns the JSON names of the fields of the struct *v.
func fieldNames(v any) []string {
	t := reflect.TypeOf(v).Elem()
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}

// intField reads the integer member name of a JSON request: absent, null
// or 0 is def; else an integer in [1, most]. On a bad value it answers 400
// naming the field and the range, and reports false.
func intField(ctx *fasthttp.RequestCtx, name string, raw json.RawMessage, def, most int64) (int64, bool) {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "0" {
		return def, true
	}
	n, ok := scan.Integer(raw, 1, most)
	if !ok {
		gate.APIError(ctx, http.StatusBadRequest, "bad_request", fmt.Sprintf("%s must be an integer in [1, %d]", name, most))
	}
	return n, ok
}

// ttlField reads ttlSeconds (intField): def when not given, else whole
// seconds in [1, maxLinkTTL].
func ttlField(ctx *fasthttp.RequestCtx, raw json.RawMessage, def time.Duration) (time.Duration, bool) {
	n, ok := intField(ctx, "ttlSeconds", raw, int64(def/time.Second), int64(maxLinkTTL/time.Second))
	return time.Duration(n) * time.Second, ok
}

// keyField checks a key of a JSON request, answering 400 invalid_key with
// the reason when it breaks the key rules.
func keyField(ctx *fasthttp.RequestCtx, key string) bool {
	if err := storage.ValidateKey(key); err != nil {
		gate.APIError(ctx, http.StatusBadRequest, "invalid_key", invalidKeyMessage(key, err))
		return false
	}
	return true
}

// filenameField checks a filename, answering 400 invalid_filename with the
// reason when it breaks the filename rules (storage.ValidateFilename).
func filenameField(ctx *fasthttp.RequestCtx, name string) bool {
	if err := storage.ValidateFilename(name); err != nil {
		gate.APIError(ctx, http.StatusBadRequest, "invalid_filename", filenameMessage(err))
		return false
	}
	return true
}

func (s *Server) postLink(ctx *fasthttp.RequestCtx, id auth.Identity) {
	var req struct {
		Key        string          `json:"key"`
		TTLSeconds json.RawMessage `json:"ttlSeconds"`
		Filename   string          `json:"filename"`
		SingleUse  bool            `json:"singleUse"`
	}
	if !s.readJSON(ctx, &req) {
		return
	}
	if req.Key == "" {
		gate.APIError(ctx, http.StatusBadRequest, "bad_request", "key is required")
		return
	}
	if !keyField(ctx, req.Key) || !filenameField(ctx, req.Filename) {
		return
	}
	ttl, ok := ttlField(ctx, req.TTLSeconds, token.DefaultDownloadTTL)
	if !ok {
		return
	}
	if req.SingleUse && ttl > token.MaxSingleUseTTL {
		gate.APIError(ctx, http.StatusBadRequest, "bad_request", fmt.Sprintf("a single-use link lives at most %d seconds (ttlSeconds)", int64(token.MaxSingleUseTTL/time.Second)))
		return
	}
	info, err := s.storeFor(id).Stat(context.Background(), req.Key)
	if err != nil {
		s.apiStorageError(ctx, "stat", req.Key, err)
		return
	}
	link, err := s.env.Keyring.MintDownload(s.env.DownloadURL, token.DownloadGrant{Principal: id.Principal,
		Key: s.gate.Tenancy.Raw(id, req.Key), Version: info.ETag, Filename: req.Filename, SingleUse: req.SingleUse, TTL: ttl})
	if err != nil {
		s.apiStorageError(ctx, "mint", req.Key, err)
		return
	}
	gate.WriteJSON(ctx, http.StatusCreated, map[string]string{"url": link.URL, "expiresAt": link.Expires.UTC().Format(time.RFC3339)})
}

func (s *Server) postUpload(ctx *fasthttp.RequestCtx, id auth.Identity) {
	var req struct {
		Key        string          `json:"key"`
		MaxSize    json.RawMessage `json:"maxSize"`
		Accept     []string        `json:"accept"`
		TTLSeconds json.RawMessage `json:"ttlSeconds"`
		BlobTTL    json.RawMessage `json:"blobTtlSeconds"` // the blob's ttlSeconds; ttlSeconds is the link's
	}
	if !s.readJSON(ctx, &req) {
		return
	}
	if req.Key != "" && !keyField(ctx, req.Key) {
		return
	}
	maxSize, ok := intField(ctx, "maxSize", req.MaxSize, s.maxUpload(), s.maxUpload())
	if !ok {
		return
	}
	for _, a := range req.Accept {
		if !validMediaRange(a) {
			gate.APIError(ctx, http.StatusBadRequest, "bad_request", fmt.Sprintf("accept entry %q is not a media type or range", a))
			return
		}
	}
	ttl, ok := ttlField(ctx, req.TTLSeconds, token.DefaultUploadTTL)
	blobTTL, ok := gate.BlobTTLField(ctx, ok, req.BlobTTL)
	if !ok {
		return
	}
	u := token.Upload{Principal: id.Principal, MaxSize: maxSize, Accept: req.Accept, TTL: ttl, BlobTTL: blobTTL}
	u.Key, u.Prefix = s.gate.Tenancy.UploadTarget(id, req.Key)
	up, err := s.mintUpload(u)
	if err != nil {
		s.apiStorageError(ctx, "mint", req.Key, err)
		return
	}
	// pageUrl: the same endpoint's upload page (uploadpage.go), for a person.
	gate.WriteJSON(ctx, http.StatusCreated, map[string]string{"url": up.URL, "method": up.Method, "uploadId": up.UploadID,
		"pageUrl": strings.TrimSuffix(s.env.PublicURL, "/") + "/upload/" + up.Token, "expiresAt": up.Expires.UTC().Format(time.RFC3339)})
}
