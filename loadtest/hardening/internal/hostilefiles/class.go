package hostilefiles

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// Name is the class's name (in the table, and for -only).
const Name = "files/*"

// JSON-RPC codes of docs/files.md's table.
const (
	invalidParams  = -32602
	methodNotFound = -32601
)

// input is one hostile files/* request: method(params) as alice, which
// must be refused with code and reason; tool inputs (tools/call) must be
// an isError result instead.
type input struct {
	name   string
	method string
	params func(fx *fixtures) map[string]any
	code   int
	reason string
	caps   map[string]any // nil: the files capability
	// send, when set, replaces the one request (an input that needs a
	// first call, as a replayed idempotency key).
	send func(ctx context.Context, e *hostile.Env, fx *fixtures) *wire.Answer
}

func (in input) toCase(fx *fixtures) hostile.Case {
	c := hostile.Case{Name: in.method + " " + in.name, Want: hostile.WantReject, WellFormed: true, CheckAlways: true}
	c.Send = func(ctx context.Context, e *hostile.Env) *wire.Answer {
		if err := fx.get(ctx, e); err != nil {
			return &wire.Answer{Err: fmt.Errorf("(setup) %w", err)}
		}
		if in.send != nil {
			return in.send(ctx, e, fx)
		}
		caps := in.caps
		if caps == nil {
			caps = filesCaps
		}
		return rpc(ctx, e, "alice", in.method, in.params(fx), caps)
	}
	c.Check = func(_ context.Context, _ *hostile.Env, a *wire.Answer) string {
		if why := fx.leaks(a); why != "" {
			return why
		}
		return in.judge(a)
	}
	return c
}

// judge checks the answer's code and reason (a tool input's isError).
func (in input) judge(a *wire.Answer) string {
	msg, rerr, res := decode(a)
	if in.method == "tools/call" {
		if rerr == nil && !strings.Contains(string(res), `"isError":true`) {
			return "a file URI where it is not allowed was taken: " + wire.Clip(string(msg), 300)
		}
		return ""
	}
	switch {
	case rerr == nil:
		return "accepted, want error " + fmt.Sprint(in.code) + " " + in.reason + ": " + wire.Clip(string(msg), 300)
	case rerr.Code == invalidParams && rerr.Data["reason"] == nil && rerr.Data["path"] != nil:
		// A value over the server's JSON limits is refused before any
		// method reads it, naming its path (docs/protocol.md).
		return ""
	case rerr.Code != in.code || rerr.Data["reason"] != in.reason:
		return fmt.Sprintf("error %d reason %v, want %d %s (docs/files.md): %s", rerr.Code, rerr.Data["reason"], in.code, in.reason, wire.Clip(string(msg), 300))
	}
	return ""
}

// Abuse generates the class: every files/* input, on the files/* row.
func Abuse(_ context.Context, _ *hostile.Env) []hostile.Batch {
	fx := new(fixtures)
	var cs []hostile.Case
	for _, list := range [][]input{uploadInputs(), uriInputs(), rangeInputs(), uploadIDInputs(), capabilityInputs(), toolInputs()} {
		for _, in := range list {
			cs = append(cs, in.toCase(fx))
		}
	}
	return []hostile.Batch{{Class: Name, Surface: hostile.Files, Cases: cs}}
}

// with is params p with one member set (absent when v is nil).
func with(p map[string]any, k string, v any) map[string]any {
	q := map[string]any{}
	for kk, vv := range p {
		q[kk] = vv
	}
	if v == nil {
		delete(q, k)
	} else {
		q[k] = v
	}
	return q
}

// fixed is params that do not depend on the fixtures.
func fixed(p map[string]any) func(*fixtures) map[string]any {
	return func(*fixtures) map[string]any { return p }
}

// uploadInputs are authorizeUpload and prepareUpload with malformed
// params: types, huge names, bad media types, sizes and digests, keys.
func uploadInputs() []input {
	good := map[string]any{"name": "a.txt", "mimeType": "text/plain", "size": 10, "idempotencyKey": "k"}
	bad := []struct {
		member string
		value  any
		reason string
	}{
		{"name", 5, "invalidParams"}, {"name", strings.Repeat("n", 10_000), "invalidName"}, {"name", "a/b", "invalidName"},
		{"name", "a\x00b", "invalidName"}, {"name", "\u202e.exe", ""}, {"mimeType", "not a type", "invalidMediaType"},
		{"mimeType", strings.Repeat("t", 300) + "/x", "invalidMediaType"}, {"mimeType", []any{}, "invalidParams"},
		{"size", "10", "invalidParams"}, {"size", -5, "invalidSize"}, {"size", 0, "invalidSize"}, {"size", 1.5, "invalidParams"},
		{"size", 1 << 62, "maxSizeExceeded"}, {"size", "1e400", "invalidParams"},
		{"digest", "abc", "invalidParams"}, {"digest", map[string]any{"algorithm": "md5", "value": "x"}, "unsupportedDigestAlgorithm"},
		{"digest", map[string]any{"algorithm": "sha-256", "value": "abc"}, "invalidDigest"},
		{"digest", map[string]any{"algorithm": "sha-256", "value": strings.Repeat("A", 43) + "="}, "invalidDigest"},
		{"digest", map[string]any{"algorithm": "sha-256", "value": strings.Repeat("+", 43)}, "invalidDigest"},
		{"digest", map[string]any{"algorithm": "sha-256", "value": strings.Repeat("A", 100_000)}, "invalidDigest"},
		{"digest", map[string]any{"algorithm": strings.Repeat("s", 10_000), "value": "x"}, "unsupportedDigestAlgorithm"},
		{"idempotencyKey", 7, "invalidParams"}, {"idempotencyKey", strings.Repeat("k", 300), "invalidParams"},
	}
	var ins []input
	for _, m := range []string{"files/authorizeUpload", "files/prepareUpload"} {
		for _, b := range bad {
			if b.reason == "" {
				continue // a name the rules may take: not an input of this class
			}
			ins = append(ins, input{name: fmt.Sprintf("%s=%s", b.member, wire.Clip(fmt.Sprint(b.value), 30)), method: m,
				params: fixed(with(good, b.member, b.value)), code: invalidParams, reason: b.reason})
		}
	}
	for _, missing := range []string{"size", "idempotencyKey"} {
		ins = append(ins, input{name: "without " + missing, method: "files/prepareUpload", params: fixed(with(good, missing, nil)),
			code: invalidParams, reason: "invalidParams"})
	}
	ins = append(ins, input{name: "an idempotencyKey replayed with another size", method: "files/prepareUpload",
		code: invalidParams, reason: "idempotencyConflict",
		send: func(ctx context.Context, e *hostile.Env, _ *fixtures) *wire.Answer {
			p := with(good, "idempotencyKey", fmt.Sprintf("replay-%d", hostile.Next()))
			if a := rpc(ctx, e, "alice", "files/prepareUpload", p, filesCaps); a.Status != 200 {
				return a
			}
			return rpc(ctx, e, "alice", "files/prepareUpload", with(p, "size", 11), filesCaps)
		}})
	return ins
}

// uriInputs are authorizeDownload and getDownload of malformed URIs,
// other servers' and unknown files, bob's file, a file not uploaded.
func uriInputs() []input {
	type uriCase struct {
		name   string
		uri    func(fx *fixtures) any
		reason string
	}
	lit := func(v any) func(*fixtures) any { return func(*fixtures) any { return v } }
	server := func(fx *fixtures) string { return fx.alice.URI[:strings.LastIndex(fx.alice.URI, "/")] }
	cases := []uriCase{
		{"uri=5", lit(5), "invalidParams"}, {"uri=null", lit([]any{"x"}), "invalidParams"}, {"uri empty", lit(""), "invalidUri"},
		{"a data URI", lit("data:,x"), "invalidUri"}, {"mcp-file://", lit("mcp-file://"), "invalidUri"},
		{"a query", func(fx *fixtures) any { return fx.alice.URI + "?x=1" }, "invalidUri"},
		{"a fragment", func(fx *fixtures) any { return fx.alice.URI + "#f" }, "invalidUri"},
		{"a dot segment", func(fx *fixtures) any { return server(fx) + "/../" + fx.alice.UploadID }, "invalidUri"},
		{"percent-encoding", func(fx *fixtures) any { return server(fx) + "/%41" }, "invalidUri"},
		{"an id of 10000 bytes", func(fx *fixtures) any { return server(fx) + "/" + strings.Repeat("A", 10_000) }, "invalidUri"},
		{"upper-case scheme", func(fx *fixtures) any { return "MCP-FILE" + fx.alice.URI[len("mcp-file"):] }, "invalidUri"},
		{"userinfo", func(fx *fixtures) any { return strings.Replace(fx.alice.URI, "://", "://bob@", 1) }, "invalidUri"},
		{"another server", func(fx *fixtures) any { return "mcp-file://files.example.com/" + fx.alice.UploadID }, "fileNotFound"},
		{"an unknown id", func(fx *fixtures) any { return server(fx) + "/AAAAAAAAAAAAAAAAAAAAAAAAAA" }, "fileNotFound"},
		{"bob's file", func(fx *fixtures) any { return fx.bob.URI }, "fileNotFound"},
		{"a file not uploaded", func(fx *fixtures) any { return fx.pending.URI }, "uploadIncomplete"},
	}
	var ins []input
	for _, m := range []string{"files/authorizeDownload", "files/getDownload"} {
		for _, c := range cases {
			ins = append(ins, input{name: c.name, method: m, code: invalidParams, reason: c.reason,
				params: func(fx *fixtures) map[string]any { return map[string]any{"uri": c.uri(fx)} }})
		}
	}
	return ins
}

// rangeInputs are getDownload ranges outside alice's file or malformed.
func rangeInputs() []input {
	type r = map[string]any
	size := func(fx *fixtures) int { return len(fx.alice.Data) }
	cases := []struct {
		name   string
		rng    func(fx *fixtures) any
		reason string
	}{
		{"start -1", func(*fixtures) any { return r{"start": -1} }, "invalidRange"},
		{"start = size", func(fx *fixtures) any { return r{"start": size(fx)} }, "invalidRange"},
		{"end past the size", func(fx *fixtures) any { return r{"start": 0, "endExclusive": size(fx) + 1} }, "invalidRange"},
		{"empty range", func(*fixtures) any { return r{"start": 5, "endExclusive": 5} }, "invalidRange"},
		{"end before start", func(*fixtures) any { return r{"start": 9, "endExclusive": 3} }, "invalidRange"},
		{"no start", func(*fixtures) any { return r{"endExclusive": 3} }, "invalidRange"},
		{"start 2^62", func(*fixtures) any { return r{"start": 1 << 62} }, "invalidRange"},
		{"start a string", func(*fixtures) any { return r{"start": "0"} }, "invalidParams"},
		{"start 1.5", func(*fixtures) any { return r{"start": 1.5} }, "invalidParams"},
		{"range a string", func(*fixtures) any { return "bytes=0-1" }, "invalidParams"},
	}
	var ins []input
	for _, c := range cases {
		ins = append(ins, input{name: "range " + c.name, method: "files/getDownload", code: invalidParams, reason: c.reason,
			params: func(fx *fixtures) map[string]any { return map[string]any{"uri": fx.alice.URI, "range": c.rng(fx)} }})
	}
	return ins
}

// uploadIDInputs are getUpload and completeUpload of malformed, unknown
// and bob's upload ids, and completeUpload's own params.
func uploadIDInputs() []input {
	ids := []struct {
		name string
		id   func(fx *fixtures) any
	}{
		{"uploadId=5", func(*fixtures) any { return 5 }}, {"uploadId empty", func(*fixtures) any { return "" }},
		{"uploadId ../x", func(*fixtures) any { return "../x" }}, {"uploadId of 10000 bytes", func(*fixtures) any { return strings.Repeat("A", 10_000) }},
		{"an unknown uploadId", func(*fixtures) any { return "AAAAAAAAAAAAAAAAAAAAAAAAAA" }},
		{"bob's uploadId", func(fx *fixtures) any { return fx.bob.UploadID }},
	}
	var ins []input
	for _, m := range []string{"files/getUpload", "files/completeUpload"} {
		for _, c := range ids {
			reason := "uploadNotFound"
			if c.name == "uploadId=5" {
				reason = "invalidParams"
			}
			ins = append(ins, input{name: c.name, method: m, code: invalidParams, reason: reason,
				params: func(fx *fixtures) map[string]any {
					return map[string]any{"uploadId": c.id(fx), "size": len(fx.bob.Data), "digest": digestOf(fx.bob.Data)}
				}})
		}
	}
	return append(ins,
		input{name: "without size", method: "files/completeUpload", code: invalidParams, reason: "invalidParams",
			params: func(fx *fixtures) map[string]any { return map[string]any{"uploadId": fx.alice.UploadID} }},
		input{name: "size a string", method: "files/completeUpload", code: invalidParams, reason: "invalidParams",
			params: func(fx *fixtures) map[string]any { return map[string]any{"uploadId": fx.alice.UploadID, "size": "1"} }},
		input{name: "a bad digest", method: "files/completeUpload", code: invalidParams, reason: "invalidDigest",
			params: func(fx *fixtures) map[string]any {
				return map[string]any{"uploadId": fx.alice.UploadID, "size": len(fx.alice.Data), "digest": map[string]any{"algorithm": "sha-256", "value": "x"}}
			}},
		input{name: "a file not uploaded", method: "files/completeUpload", code: invalidParams, reason: "uploadIncomplete",
			params: func(fx *fixtures) map[string]any { return map[string]any{"uploadId": fx.pending.UploadID, "size": 11} }},
	)
}

// capabilityInputs are every method from a client without files.
func capabilityInputs() []input {
	var ins []input
	for _, m := range []string{"files/authorizeUpload", "files/authorizeDownload", "files/prepareUpload", "files/completeUpload",
		"files/getUpload", "files/getDownload"} {
		ins = append(ins, input{name: "without the files capability", method: m, code: methodNotFound, reason: "capabilityMissing",
			caps: map[string]any{}, params: func(fx *fixtures) map[string]any {
				return map[string]any{"uri": fx.alice.URI, "uploadId": fx.alice.UploadID}
			}})
	}
	return ins
}

// toolInputs are mcp-file URIs in tool arguments where they cannot open:
// bob's file, a file not uploaded, a malformed URI, and URIs in
// arguments that take no file.
func toolInputs() []input {
	tool := func(name, tl string, args func(fx *fixtures) map[string]any) input {
		return input{name: name, method: "tools/call", params: func(fx *fixtures) map[string]any {
			return map[string]any{"name": tl, "arguments": args(fx)}
		}}
	}
	key := func() string { return fmt.Sprintf("hard/files/%d.txt", hostile.Next()) }
	return []input{
		tool("upload_file of bob's file URI", "upload_file", func(fx *fixtures) map[string]any { return map[string]any{"key": key(), "file": fx.bob.URI} }),
		tool("upload_file of a file not uploaded", "upload_file", func(fx *fixtures) map[string]any { return map[string]any{"key": key(), "file": fx.pending.URI} }),
		tool("upload_file of a malformed file URI", "upload_file", func(fx *fixtures) map[string]any {
			return map[string]any{"key": key(), "file": fx.alice.URI + "/../x"}
		}),
		tool("upload_file of another server's file URI", "upload_file", func(fx *fixtures) map[string]any {
			return map[string]any{"key": key(), "file": "mcp-file://files.example.com/" + fx.alice.UploadID}
		}),
		tool("stat_blob of a file URI as the key", "stat_blob", func(fx *fixtures) map[string]any { return map[string]any{"key": fx.bob.URI} }),
		tool("get_download_link of a file URI as the key", "get_download_link", func(fx *fixtures) map[string]any { return map[string]any{"key": fx.bob.URI} }),
		tool("delete_blob of a file URI as the key", "delete_blob", func(fx *fixtures) map[string]any { return map[string]any{"key": fx.alice.URI} }),
	}
}
