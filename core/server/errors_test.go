package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// internals are the pieces of a storage or syscall error that no client
// answer may carry: they would tell an attacker about the host.
var internals = []string{"statat", "openat", "mkdirat", "file name too long", "localfs:", "storage:", "ingest:", "syscall", ".mcpblob"}

// checkNoInternals fails when answer carries a piece of internals or the
// store's folder.
func checkNoInternals(t *testing.T, what, answer, dir string) {
	t.Helper()
	for _, bad := range append(internals, dir) {
		if strings.Contains(answer, bad) {
			t.Errorf("%s: the answer carries %q: %.400s", what, bad, answer)
		}
	}
}

// TestErrorsNameNoInternals gives every surface a key whose segment is too
// long for the local store: stat_blob and the other key tools (both eras)
// answer isError, /v1 a 400 invalid_key, each naming the problem, none
// with the store's path or the syscall error. A request line over the
// header limit on /d is answered with the HTTP JSON error body, not a
// JSON-RPC one.
func TestErrorsNameNoInternals(t *testing.T) {
	parallel(t)
	dir := t.TempDir()
	st := newLocalStoreAt(t, dir)
	c := newBPClient(t, Options{Backend: st})
	if r := c.put("x/y", []byte("hi"), nil); r.status != 201 {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	long := strings.Repeat("a", 300)
	legacy, modern := c.client(legacyVersion, `{}`), c.client(modernVersion, `{}`)
	for _, key := range []string{long, "x/" + long} {
		for _, tool := range []string{
			`"stat_blob","arguments":{"key":` + jsonString(key) + `}`,
			`"delete_blob","arguments":{"key":` + jsonString(key) + `}`,
			`"get_download_link","arguments":{"key":` + jsonString(key) + `}`,
			`"upload_file","arguments":{"key":` + jsonString(key) + `,"file":"data:text/plain;base64,aGk="}`,
			`"upload_file","arguments":{"file":"data:text/plain;base64,aGk=","key":` + jsonString(key) + `}`,
		} {
			l := legacy.call("tools/call", `{"name":`+tool+`}`)
			m := modern.with(map[string]string{"Mcp-Param-Blob-Key": key}).call("tools/call", `{"name":`+tool+`}`).msg
			if m.Error != nil {
				t.Errorf("2026-07-28 %.40s: %s", tool, m.Error)
			}
			for era, body := range map[string]string{"2025-11-25": string(l.body), "2026-07-28": string(m.Result)} {
				what := era + " " + tool[:min(len(tool), 40)]
				if !strings.Contains(body, `"isError":true`) || !strings.Contains(strings.ToLower(body), "key") || !strings.Contains(body, "255 bytes") {
					t.Errorf("%s: want isError naming the key's problem: %.400s", what, body)
				}
				checkNoInternals(t, what, body, dir)
			}
		}
		for _, m := range []string{"GET", "HEAD", "PUT", "DELETE"} {
			r := c.do(m, "/v1/blobs/"+key, strings.NewReader("hi"), nil)
			if r.status != http.StatusBadRequest || m != "HEAD" && (errCode(t, r) != "invalid_key" || !strings.Contains(string(r.body), "255 bytes")) {
				t.Errorf("%s /v1/blobs/<long>: %d %.300s", m, r.status, r.body)
			}
			checkNoInternals(t, m+" /v1/blobs", string(r.body), dir)
		}
		r := c.do("POST", "/v1/links", strings.NewReader(`{"key":`+jsonString(key)+`}`), nil)
		if r.status != http.StatusBadRequest || errCode(t, r) != "invalid_key" {
			t.Errorf("POST /v1/links: %d %.300s", r.status, r.body)
		}
		checkNoInternals(t, "POST /v1/links", string(r.body), dir)
	}

	req, _ := http.NewRequest("GET", c.base+"/d/"+strings.Repeat("A", 20<<10), nil)
	resp, raw := sendRefused(t, req) // the server answers before reading the whole request line
	r := httpResp{status: resp.StatusCode, header: resp.Header, body: raw}
	var body struct {
		JSONRPC string `json:"jsonrpc"`
		Error   struct{ Code, Message string }
	}
	if r.status != http.StatusRequestHeaderFieldsTooLarge || json.Unmarshal(r.body, &body) != nil || body.JSONRPC != "" ||
		body.Error.Code != "header_too_large" || body.Error.Message == "" {
		t.Errorf("/d with a request line over the header limit: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
}
