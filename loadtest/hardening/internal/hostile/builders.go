package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
)

// Builders of the common input shapes, so each class lists inputs, not
// plumbing.

// rawCase sends a hand-made request (head built by head, body as is).
func rawCase(name string, w Want, method, target, principal string, body []byte, hdr ...string) Case {
	return Case{Name: name, Want: w, Stores: method == http.MethodPut || method == http.MethodPost,
		Send: func(ctx context.Context, e *Env) *wire.Answer {
			return e.sendRaw(ctx, wire.Raw{Head: e.Head(method, target, principal, len(body), hdr...), Body: body, Method: method})
		}}
}

// Head is a request head for target on the server under test: Host,
// Authorization (principal "" sends none), Content-Length (n < 0: none)
// and Connection: close, then the extra header lines.
func (e *Env) Head(method, target, principal string, n int, hdr ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, target, e.addr)
	if principal != "" {
		fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", e.apiKeys[principal])
	}
	if n >= 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", n)
	}
	b.WriteString("Connection: close\r\n")
	for _, h := range hdr {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

func (e *Env) sendRaw(ctx context.Context, r wire.Raw) *wire.Answer {
	return wire.Send(ctx, e.addr, r, e.caseLimit)
}

// httpCase sends a request made by mk with the harness's client.
func httpCase(name string, w Want, stores bool, mk func(ctx context.Context, e *Env) *http.Request) Case {
	return Case{Name: name, Want: w, Stores: stores, Send: func(ctx context.Context, e *Env) *wire.Answer {
		return e.sendHTTP(ctx, mk(ctx, e))
	}}
}

// legacyCase sends body as alice on her 2025-11-25 session (with the
// resources/stream capability when stream is set).
func legacyCase(name string, w Want, stores, stream bool, body func(e *Env) []byte) Case {
	c := httpCase(name, w, stores, func(ctx context.Context, e *Env) *http.Request {
		var caps map[string]any
		if stream {
			caps = streamCaps
		}
		return e.legacyReq(ctx, "alice", caps, body(e))
	})
	c.WellFormed = true
	return c
}

// modernCase sends body as alice in 2026-07-28 with Mcp-Method (and
// Mcp-Name when name is set) plus the extra header pairs.
func modernCase(name string, w Want, stores bool, method, mcpName string, body func(e *Env) []byte, hdr ...string) Case {
	c := httpCase(name, w, stores, func(ctx context.Context, e *Env) *http.Request {
		req := e.ModernReq(ctx, "alice", method, mcpName, body(e))
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header[hdr[i]] = append(req.Header[hdr[i]], hdr[i+1])
		}
		return req
	})
	c.WellFormed = true
	return c
}

// toolCase is tools/call name(args) in era s (sLegacy or sModern), the
// "key" argument first (the single-write path of upload_file); in
// 2026-07-28 a "key" argument is mirrored in Mcp-Param-Blob-Key.
func toolCase(s Surface, label string, w Want, tool string, args func(e *Env) map[string]any) Case {
	return toolCaseOrder(s, label, w, tool, args, "key")
}

// toolCaseOrder is toolCase with the argument named first put first.
func toolCaseOrder(s Surface, label string, w Want, tool string, args func(e *Env) map[string]any, first string) Case {
	stores := tool == "upload_file"
	if s == Legacy {
		return legacyCase(label, w, stores, false, func(e *Env) []byte {
			return RPC("tools/call", call(tool, orderArgs(args(e), first)))
		})
	}
	c := httpCase(label, w, stores, func(ctx context.Context, e *Env) *http.Request {
		a := args(e)
		req := e.ModernReq(ctx, "alice", "tools/call", tool, RPC("tools/call", WithMeta(call(tool, orderArgs(a, first)), nil)))
		switch k := a["key"].(type) {
		case string:
			req.Header.Set("Mcp-Param-Blob-Key", mcptest.HeaderValue(k))
		case rawStr:
			req.Header.Set("Mcp-Param-Blob-Key", mcptest.HeaderValue(string(k)))
		}
		return req
	})
	c.WellFormed = true
	return c
}

// orderArgs marshals m with the member first (when present) first and the
// rest sorted.
func orderArgs(m map[string]any, first string) json.RawMessage {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != first {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if _, ok := m[first]; ok {
		keys = append([]string{first}, keys...)
	}
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(m[k])
		if err != nil {
			panic("bug: argument " + k + ": " + err.Error())
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return append(b, '}')
}

// readCase is resources/read (or resources/stream) of uri in era (sLegacy
// or sModern).
func readCase(era Surface, label string, w Want, method, uri string) Case {
	ju, _ := jsonStr(uri)
	p := map[string]any{"uri": ju}
	if era == Modern {
		caps := map[string]any(nil)
		if method == "resources/stream" {
			caps = streamCaps
		}
		return modernCase(label, w, false, method, uri, func(*Env) []byte { return RPC(method, WithMeta(p, caps)) })
	}
	return legacyCase(label, w, false, method == "resources/stream", func(*Env) []byte { return RPC(method, p) })
}

// dataURI is a small data URI whose payload starts with a fresh marker
// (registered as a secret).
func (e *Env) dataURI(mediaType string) string {
	return "data:" + mediaType + ";base64," + e.sec.Marker() + "AAAA"
}

// keyOf returns the "key" members anywhere in an answer.
func keyOf(a *wire.Answer) []string {
	var v any
	if json.Unmarshal(msgOf(a), &v) != nil {
		return nil
	}
	var keys []string
	wire.WalkJSON(v, func(m map[string]any) {
		if k, ok := m["key"].(string); ok {
			keys = append(keys, k)
		}
	})
	return keys
}

// sameKey checks that a success stored (or named) exactly key: a server
// that normalises or decodes a key twice aliases objects.
func sameKey(key string) func(context.Context, *Env, *wire.Answer) string {
	return func(_ context.Context, _ *Env, a *wire.Answer) string {
		for _, k := range keyOf(a) {
			if k != key {
				return fmt.Sprintf("the answer names key %q for the key %q it was given", k, key)
			}
		}
		return ""
	}
}

// rawStr is a JSON string sent byte for byte: encoding/json would replace
// invalid UTF-8 with U+FFFD, and the hostile bytes would never arrive.
// Quotes, backslashes and control characters are escaped; nothing else.
type rawStr string

// MarshalJSON writes s quoted, its bytes unchanged.
func (s rawStr) MarshalJSON() ([]byte, error) {
	b := []byte{'"'}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = fmt.Appendf(b, `\u%04x`, c)
		default:
			b = append(b, c)
		}
	}
	return append(b, '"'), nil
}

// jsonStr is s as a JSON value that arrives unchanged, and whether the
// resulting JSON is well-formed (RFC 8259 wants UTF-8).
func jsonStr(s string) (any, bool) {
	if utf8.ValidString(s) {
		return s, true
	}
	return rawStr(s), false
}

// msgOf is the JSON-RPC message of an answer (JSON or SSE body).
func msgOf(a *wire.Answer) []byte {
	msg, err := mcpc.Message(a.ContentType(), a.Body)
	if err != nil {
		return nil
	}
	return msg
}

// sendHTTP sends req (built with net/http for convenience) byte for byte
// on a fresh connection, like a hand-made request: a server that answers
// and closes early (431, 413) is still heard.
func (e *Env) sendHTTP(ctx context.Context, req *http.Request) *wire.Answer {
	req.Close = true
	var b strings.Builder
	if err := req.Write(&b); err != nil {
		return &wire.Answer{Err: err}
	}
	return e.sendRaw(ctx, wire.Raw{Head: b.String(), Method: req.Method})
}
