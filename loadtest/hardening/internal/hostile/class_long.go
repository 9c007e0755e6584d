package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// Lengths around the limits: keys at most 1024 bytes (docs/control-api.md),
// a file system's 255-byte names, the 64 KiB spooling threshold of string
// arguments (docs/uploads.md), and the 16 KiB header limit.
var (
	long300 = strings.Repeat("s", 300)
	long1k  = strings.Repeat("k", 1025)
	long8k  = strings.Repeat("h", 8<<10)
	long20k = strings.Repeat("u", 20<<10)
	long70k = strings.Repeat("p", 70<<10)
)

// hugeNumbers are JSON values for integer arguments that must stay within
// their documented range (item 8: they overflowed into defaults). null is
// not among them: for an optional member it commonly means "not given".
var hugeNumbers = []string{"9300000000", "1e18", "9223372036854775808", "-1", "0.5", "1e309", `"900"`, "true"}

// overLong sends over-long keys, ids, strings, filenames and numbers.
func overLong(ctx context.Context, e *Env) []Batch {
	return []Batch{
		{"over-long values", V1, longV1()},
		{"over-long values", Legacy, longMCP(Legacy)},
		{"over-long values", Modern, longMCP(Modern)},
		{"over-long values", D, longTokens("/d/", http.MethodGet)},
		{"over-long values", U, longTokens("/u/", http.MethodPut)},
		{"over-long values", Page, longTokens("/upload/", http.MethodGet)},
	}
}

func longV1() []Case {
	cs := []Case{
		rawCase("PUT key of 1025 bytes", WantReject, http.MethodPut, "/v1/blobs/hard/"+long1k, "alice", []byte("x")),
		rawCase("PUT key with a 300-byte segment", WantEither, http.MethodPut, "/v1/blobs/hard/"+long300+fmt.Sprint(next()), "alice", []byte("x")),
		rawCase("PUT key of 8 KiB", WantReject, http.MethodPut, "/v1/blobs/hard/"+long8k, "alice", []byte("x")),
		rawCase("PUT key of 20 KiB (over the header limit)", WantReject, http.MethodPut, "/v1/blobs/hard/"+long20k, "alice", []byte("x")),
		noStore(rawCase("GET prefix of 70 KiB", WantReject, http.MethodGet, "/v1/blobs?prefix="+long70k, "alice", nil)),
		noStore(rawCase("GET cursor of 8 KiB", WantReject, http.MethodGet, "/v1/blobs?cursor="+long8k, "alice", nil)),
		rawCase("PUT Content-Type of 8 KiB", WantEither, http.MethodPut, fmt.Sprintf("/v1/blobs/hard/ct-%d", next()), "alice", []byte("x"), "Content-Type: text/"+long8k),
		rawCase("PUT filename of 8 KiB", WantEither, http.MethodPut, fmt.Sprintf("/v1/blobs/hard/fn-%d", next()), "alice", []byte("x"),
			`Content-Disposition: attachment; filename="`+long8k+`"`),
		rawCase("PUT filename with CR LF NUL", WantEither, http.MethodPut, fmt.Sprintf("/v1/blobs/hard/fn-%d", next()), "alice", []byte("x"),
			`Content-Disposition: attachment; filename*=UTF-8''a%0D%0AX-Injected%3A%201%00.txt`),
		jsonCase("POST /v1/links key of 1025 bytes", WantReject, "/v1/links", map[string]any{"key": "hard/" + long1k}),
		jsonCase("POST /v1/links body of 70 KiB", WantReject, "/v1/links", map[string]any{"key": BaseText, "filename": long70k}),
		linkFilenameCase("filename of 8 KiB", long8k),
		linkFilenameCase("filename of 60 KiB", strings.Repeat("f", 60<<10)),
		linkFilenameCase("filename with CR LF", "a\r\nX-Injected: 1.txt"),
		linkFilenameCase("filename with NUL", "a\x00.txt"),
	}
	for _, q := range []string{"limit=99999999999999999999", "limit=-1", "limit=1e3", "limit=0x10", "cursor=%00%ff"} {
		cs = append(cs, noStore(rawCase("GET /v1/blobs?"+q, WantReject, http.MethodGet, "/v1/blobs?"+q, "alice", nil)))
	}
	for _, n := range hugeNumbers {
		cs = append(cs, rawJSONCase("POST /v1/links ttlSeconds "+n, WantReject, "/v1/links", fmt.Sprintf(`{"key":%q,"ttlSeconds":%s}`, BaseText, n)),
			rawJSONCase("POST /v1/uploads ttlSeconds "+n, WantReject, "/v1/uploads", fmt.Sprintf(`{"ttlSeconds":%s}`, n)),
			rawJSONCase("POST /v1/uploads maxSize "+n, WantReject, "/v1/uploads", fmt.Sprintf(`{"maxSize":%s}`, n)))
	}
	return cs
}

// rawJSONCase POSTs body (JSON text as given) to a /v1 path as alice.
func rawJSONCase(name string, w Want, path, body string) Case {
	return httpCase(name, w, false, func(ctx context.Context, e *Env) *http.Request {
		req := e.Request(ctx, http.MethodPost, path, "alice", []byte(body))
		req.Header.Set("Content-Type", "application/json")
		return req
	})
}

// linkFilenameCase mints a link with a hostile filename: refusing it is
// right; a link that is minted must then serve (item 8: one that always
// answered 431) with no control character in Content-Disposition.
func linkFilenameCase(label, filename string) Case {
	c := jsonCase("POST /v1/links "+label, WantEither, "/v1/links", map[string]any{"key": BaseText, "filename": filename})
	c.Check = func(ctx context.Context, e *Env, a *wire.Answer) string {
		var r struct{ URL string }
		if a.Status != http.StatusCreated || json.Unmarshal(a.Body, &r) != nil {
			return ""
		}
		e.sec.AddToken("/d token", r.URL)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.base()+"/d/"+tokenOf(r.URL, "/d/"), nil)
		got := wire.Do(e.HTTP, req)
		if got.Status != http.StatusOK {
			return "the link was minted but does not serve: " + got.String()
		}
		if cd := got.Header.Get("Content-Disposition"); strings.ContainsAny(cd, "\r\n\x00") {
			return fmt.Sprintf("Content-Disposition carries control characters: %q", wire.Clip(cd, 80))
		}
		return ""
	}
	return c
}

// longMCP: over-long and out-of-range arguments, ids and names, judged by
// the tools' inputSchema (tools/list) where it states a limit.
func longMCP(era Surface) []Case {
	args := func(kv ...any) func(*Env) map[string]any {
		return func(*Env) map[string]any {
			m := map[string]any{}
			for i := 0; i+1 < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			return m
		}
	}
	dataArgs := func(kv ...any) func(*Env) map[string]any {
		return func(e *Env) map[string]any { m := args(kv...)(e); m["file"] = e.dataURI("text/plain"); return m }
	}
	cs := []Case{
		toolCase(era, "upload_file key with a 300-byte segment", WantEither, "upload_file", dataArgs("key", fmt.Sprintf("hard/%d/%s", next(), long300))),
		toolCase(era, "upload_file key of 1025 bytes", WantReject, "upload_file", dataArgs("key", "hard/"+long1k)),
		// The local store refuses a/b while a exists; S3 allows both (storage/localfs doc).
		toolCase(era, "upload_file key under an existing blob (a/b with a stored)", WantEither, "upload_file", dataArgs("key", BaseText+"/child")),
		toolCase(era, "upload_file filename of 300 bytes (maxLength 255)", WantReject, "upload_file", dataArgs("key", fmt.Sprintf("hard/fn-%d", next()), "filename", long300)),
		filenameCase(era, "a\r\nX-Injected: 1.txt"),
		filenameCase(era, "a\x00.txt"),
		toolCase(era, "stat_blob key with a 300-byte segment", WantReject, "stat_blob", args("key", "hard/"+long300)),
		toolCase(era, "stat_blob key of 70 KiB", WantReject, "stat_blob", args("key", long70k)),
		prefixCase(era),
		toolCase(era, "get_download_link filename of 60 KiB (maxLength 255)", WantReject, "get_download_link", args("key", BaseText, "filename", strings.Repeat("f", 60<<10))),
		toolCase(era, "tool name of 70 KiB", WantReject, long70k, args()),
		idCase(era, `"`+long70k+`"`), idCase(era, "1e400"), idCase(era, "99999999999999999999999"),
	}
	for _, n := range hugeNumbers {
		var v any
		json.Unmarshal([]byte(n), &v)
		if n == "1e309" || n == "9223372036854775808" {
			v = json.Number(n)
		}
		cs = append(cs, toolCase(era, "get_download_link ttlSeconds "+n, WantReject, "get_download_link", args("key", BaseText, "ttlSeconds", v)),
			toolCase(era, "list_blobs limit "+n, WantReject, "list_blobs", args("limit", v)))
	}
	return cs
}

// filenameCase uploads with a filename holding control characters: a
// success must not store them (item 8).
func filenameCase(era Surface, name string) Case {
	key := fmt.Sprintf("hard/ctl-%d", next())
	c := toolCase(era, fmt.Sprintf("upload_file filename %q", name), WantEither, "upload_file", func(e *Env) map[string]any {
		return map[string]any{"key": key, "filename": name, "file": e.dataURI("text/plain")}
	})
	c.Check = func(ctx context.Context, e *Env, a *wire.Answer) string {
		got := e.api(ctx, "alice", http.MethodGet, "/v1/blobs?prefix="+escapeAll(key), nil)
		if strings.Contains(string(got.Body), `\r`) || strings.Contains(string(got.Body), `\n`) || strings.Contains(string(got.Body), `\u0000`) {
			return "the stored filename keeps the control characters: " + got.String()
		}
		return ""
	}
	return c
}

// prefixCase: a 70 KiB list_blobs prefix matches nothing; a server that
// drops it lists everything (item 8).
func prefixCase(era Surface) Case {
	c := toolCase(era, "list_blobs prefix of 70 KiB", WantEither, "list_blobs", func(*Env) map[string]any {
		return map[string]any{"prefix": long70k}
	})
	c.Check = func(_ context.Context, _ *Env, a *wire.Answer) string {
		if ks := keyOf(a); len(ks) > 0 {
			return fmt.Sprintf("a prefix no key has listed %d blobs (the prefix was dropped)", len(ks))
		}
		return ""
	}
	return c
}

// idCase sends tools/list with a hostile JSON-RPC id: an answer must carry
// the same id.
func idCase(era Surface, id string) Case {
	body := func(*Env) []byte {
		p := `{}`
		if era == Modern {
			b, _ := json.Marshal(WithMeta(nil, nil))
			p = string(b)
		}
		return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":` + p + `}`)
	}
	var c Case
	if era == Legacy {
		c = legacyCase("id "+wire.Clip(id, 24), WantEither, false, false, body)
	} else {
		c = modernCase("id "+wire.Clip(id, 24), WantEither, false, "tools/list", "", body)
	}
	c.Check = func(_ context.Context, _ *Env, a *wire.Answer) string {
		if a.Status >= 300 {
			return ""
		}
		var m struct{ ID json.RawMessage }
		json.Unmarshal(msgOf(a), &m)
		if len(m.ID) > 0 && len(id) < 64 && !sameNumber(string(m.ID), id) {
			return fmt.Sprintf("the answer's id is %s, not the request's %s", wire.Clip(string(m.ID), 40), id)
		}
		if len(m.ID) > 0 && len(id) >= 64 && len(m.ID) != len(id) {
			return fmt.Sprintf("the answer's id (%d bytes) is not the request's (%d bytes)", len(m.ID), len(id))
		}
		return ""
	}
	return c
}

// longTokens: a token path of 10 KiB (a bad token) and of 20 KiB (over
// the header limit): both refused with the surface's error body.
func longTokens(prefix, method string) []Case {
	return []Case{
		noStore(rawCase(prefix+"<10 KiB token>", WantReject, method, prefix+strings.Repeat("A", 10<<10), "", nil)),
		noStore(rawCase(prefix+"<20 KiB token>", WantReject, method, prefix+long20k, "", nil)),
	}
}

// sameNumber reports whether two JSON values are the same text or the same
// number.
func sameNumber(a, b string) bool {
	if a == b {
		return true
	}
	x, okA := new(big.Float).SetString(a)
	y, okB := new(big.Float).SetString(b)
	return okA && okB && x.Cmp(y) == 0
}
