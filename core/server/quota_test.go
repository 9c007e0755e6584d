package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/storage/quota"
)

// quotaSecret is alice's API key in the quota tests.
const quotaSecret = "quota-test-key-of-alice"

var aliceKey = map[string]string{"Authorization": "Bearer " + quotaSecret}

// quotaBody is a 403 quota_exceeded answer.
type quotaBody struct {
	Error struct {
		Code, Message, Quota string
		Limit, Usage, Fits   int64
	}
}

func wantQuotaRefusal(t *testing.T, what string, status int, body []byte, fits int64) {
	t.Helper()
	var b quotaBody
	if err := json.Unmarshal(body, &b); err != nil || status != http.StatusForbidden || b.Error.Code != "quota_exceeded" ||
		b.Error.Quota != "bytes" || b.Error.Limit != 1000 || b.Error.Usage != 900 || b.Error.Fits != fits {
		t.Errorf("%s: %d %s, want 403 quota_exceeded with limit 1000, usage 900, %d fitting", what, status, body, fits)
	}
}

// TestQuotaSurfaces fills alice to her quota with PUT, then tries every
// ingest surface once more: each is refused in its protocol's terms
// (403 quota_exceeded with the figures on HTTP, an isError result naming
// the quota on MCP), and nothing more is stored. After a delete gives
// the space back, GET /v1/usage agrees with the store.
func TestQuotaSurfaces(t *testing.T) {
	parallel(t)
	for _, be := range byteplaneBackends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			raw := be.new(t)
			c := newBPClient(t, Options{Backend: raw, Auth: Auth{Keys: []string{auth.KeyLine(quotaSecret, "alice", nil)}},
				Quota: Quota{Default: auth.Quota{Bytes: 1000}}})
			if r := c.put("fill", make([]byte, 900), aliceKey); r.status != 201 {
				t.Fatalf("PUT fill: %d %s", r.status, r.body)
			}
			quotaHTTPSurfaces(t, c)
			quotaMCPSurfaces(t, c)
			quotaFilesSurface(t, c)
			truth, err := quota.Scan(t.Context(), raw)
			if err != nil || truth["alice"] != (quota.Usage{Bytes: 900, Objects: 1}) {
				t.Fatalf("stored after the refusals: %+v %v, want only the 900 bytes of fill", truth, err)
			}
			if r := c.do("DELETE", "/v1/blobs/fill", nil, aliceKey); r.status != 204 {
				t.Fatalf("DELETE: %d %s", r.status, r.body)
			}
			if r := c.put("after", make([]byte, 1000), aliceKey); r.status != 201 {
				t.Fatalf("PUT after the delete: %d %s", r.status, r.body)
			}
			r := c.do("GET", "/v1/usage", nil, aliceKey)
			var u struct {
				Principal                     string
				Bytes, Objects, InFlightBytes int64
				Limit                         struct{ Bytes int64 }
			}
			if err := json.Unmarshal(r.body, &u); r.status != 200 || err != nil || u.Principal != "alice" ||
				u.Bytes != 1000 || u.Objects != 1 || u.InFlightBytes != 0 || u.Limit.Bytes != 1000 {
				t.Fatalf("GET /v1/usage: %d %s", r.status, r.body)
			}
		})
	}
}

func quotaHTTPSurfaces(t *testing.T, c *bpClient) {
	r := c.put("p", make([]byte, 200), aliceKey)
	wantQuotaRefusal(t, "PUT declared", r.status, r.body, 100)
	req, _ := http.NewRequest("PUT", c.base+"/v1/blobs/chunked", bytes.NewReader(make([]byte, 200)))
	req.ContentLength = -1
	req.Header.Set("Authorization", aliceKey["Authorization"])
	resp, body := sendRefused(t, req)
	wantQuotaRefusal(t, "PUT chunked", resp.StatusCode, body, 100)

	up := mintUpload(t, c)
	ur := c.do("PUT", up, bytes.NewReader(make([]byte, 200)), nil)
	wantQuotaRefusal(t, "/u PUT", ur.status, ur.body, 100)

	tc := &tusClient{t: t, base: c.base, hc: &http.Client{Timeout: 60 * time.Second}}
	hdr := map[string]string{"Authorization": aliceKey["Authorization"], "Upload-Length": "200",
		"Upload-Metadata": tusMeta("key", "tus")}
	tr := tc.do("POST", "/v1/tus/", nil, hdr)
	wantQuotaRefusal(t, "/v1/tus POST", tr.StatusCode, []byte(readAll(tr)), 100)
	hdr["Upload-Length"], hdr["Upload-Defer-Length"] = "", "1"
	tr = tc.do("POST", "/v1/tus/", nil, hdr)
	loc, _ := url.Parse(tr.Header.Get("Location"))
	if tr.StatusCode != 201 || loc == nil {
		t.Fatalf("/v1/tus POST deferred: %d %s", tr.StatusCode, []byte(readAll(tr)))
	}
	patch := map[string]string{"Authorization": aliceKey["Authorization"], "Upload-Offset": "0",
		"Content-Type": "application/offset+octet-stream"}
	tr = tc.do("PATCH", loc.Path, make([]byte, 200), patch)
	if tr.StatusCode == 204 { // S3: bytes under a part's minimum wait in records; the end is refused
		patch["Upload-Offset"], patch["Upload-Length"] = "200", "200"
		tr = tc.do("PATCH", loc.Path, nil, patch)
	}
	wantQuotaRefusal(t, "/v1/tus PATCH past the quota", tr.StatusCode, []byte(readAll(tr)), 100)

	lc := newLinkTus(t, mintUpload(t, c))
	lr, _ := lc.createFile(200, "link.bin", "application/octet-stream")
	wantQuotaRefusal(t, "/u tus POST", lr.StatusCode, []byte(readAll(lr)), 100)
}

// mintUpload mints an upload endpoint of alice's (POST /v1/uploads).
func mintUpload(t *testing.T, c *bpClient) string {
	t.Helper()
	r := c.do("POST", "/v1/uploads", strings.NewReader(`{}`), aliceKey)
	var up struct{ URL string }
	if err := json.Unmarshal(r.body, &up); r.status != 201 || err != nil {
		t.Fatalf("POST /v1/uploads: %d %s", r.status, r.body)
	}
	return up.URL
}

func quotaMCPSurfaces(t *testing.T, c *bpClient) {
	uri := "data:application/octet-stream;base64," + base64.StdEncoding.EncodeToString(make([]byte, 200))
	for _, era := range []string{legacyVersion, modernVersion} {
		m := newMCPClientWith(t, c.base, era, `{"elicitation":{"form":{}}}`, aliceKey)
		for i, args := range []string{`{"key":"m0","file":"` + uri + `"}`, `{"file":"` + uri + `","key":"m1"}`} {
			o := outcomeOf(m.with(map[string]string{"Mcp-Param-Blob-Key": fmt.Sprint("m", i)}).callTool("upload_file", args).msg)
			if !o.isError || !strings.Contains(o.text, "quota exceeded: the bytes quota is 1000, usage 900, 100 more fit") {
				t.Errorf("%s upload_file %.10s…: %+v, want an isError result naming the quota", era, args, o)
			}
		}
		if o := requestUploadForm(t, m, uri); !o.isError || !strings.Contains(o.text, "quota exceeded") {
			t.Errorf("%s request_upload form answer: %+v, want an isError result naming the quota", era, o)
		}
	}
}

// TestQuotaTusPatch: a resumable upload of undeclared length whose PATCH
// takes it past the quota while its bytes stream into the staged write
// is refused 403 quota_exceeded, not 500, on both stores, and logs no
// error (a refusal is the client's, not the server's fault).
func TestQuotaTusPatch(t *testing.T) {
	parallel(t)
	for _, be := range byteplaneBackends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			logs := &logBuffer{}
			c := newBPClient(t, Options{Backend: be.new(t), Auth: Auth{Keys: []string{auth.KeyLine(quotaSecret, "alice", nil)}},
				Quota: Quota{Default: auth.Quota{Bytes: 4 << 20}}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
			tc := &tusClient{t: t, base: c.base, hc: &http.Client{Timeout: 60 * time.Second}}
			tr := tc.do("POST", "/v1/tus/", nil, map[string]string{"Authorization": aliceKey["Authorization"],
				"Upload-Defer-Length": "1", "Upload-Metadata": tusMeta("key", "big")})
			loc, _ := url.Parse(tr.Header.Get("Location"))
			if tr.StatusCode != 201 || loc == nil {
				t.Fatalf("POST deferred: %d %s", tr.StatusCode, readAll(tr))
			}
			tr = tc.do("PATCH", loc.Path, make([]byte, 20<<20), map[string]string{"Authorization": aliceKey["Authorization"],
				"Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"})
			var b quotaBody
			if err := json.Unmarshal([]byte(readAll(tr)), &b); err != nil || tr.StatusCode != 403 || b.Error.Code != "quota_exceeded" ||
				b.Error.Limit != 4<<20 || b.Error.Fits > 4<<20 {
				t.Fatalf("PATCH of 20 MiB past a 4 MiB quota: %d %+v", tr.StatusCode, b)
			}
			r := c.do("GET", "/v1/usage", nil, aliceKey)
			if !strings.Contains(string(r.body), `"bytes":0,`) {
				t.Fatalf("usage after the refusal: %s", r.body)
			}
			noBugLogs(t, logs)
		})
	}
}

// quotaFilesSurface: an SEP-2631 file past the quota (both eras) is
// refused where its bytes arrive, the upload link the authorization gave:
// 403 quota_exceeded, nothing stored (TestQuotaSurfaces checks the store).
func quotaFilesSurface(t *testing.T, c *bpClient) {
	data := make([]byte, 200)
	for _, modern := range []bool{false, true} {
		fc := newFilesClient(t, c.base, quotaSecret, modern, `{"files":{}}`)
		var up fileAnswer
		fc.ok("files/authorizeUpload", map[string]any{"name": "f.bin", "mimeType": "application/octet-stream",
			"size": len(data), "digest": wireDigest(data)}, &up)
		code, body := httpDo(t, up.Upload, data, nil)
		wantQuotaRefusal(t, fmt.Sprintf("files/authorizeUpload's upload (modern %v)", modern), code, body, 100)
	}
}
