package server

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/blobs"
)

// resumableHint is the fork's resumable hint of an upload descriptor.
type resumableHint struct {
	Protocol  string `json:"protocol"`
	URL       string `json:"url"`
	UploadURL string `json:"uploadUrl"`
	UploadID  string `json:"uploadId"`
	Received  *int64 `json:"receivedBytes"`
}

type hintedAnswer struct {
	fileAnswer
	Upload hintedDescriptor `json:"upload"`
}

type hintedDescriptor struct {
	Method    string            `json:"method"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
	Resumable *resumableHint    `json:"resumable"`
}

// Descriptor is d without its hint.
func (d hintedDescriptor) Descriptor() descriptor {
	return descriptor{Method: d.Method, URL: d.URL, Headers: d.Headers}
}

// TestFilesResumable: a file's upload descriptor carries the resumable
// hint (tus at <upload url>/tus/); a raw tus client creates the upload
// there, sends part, is cut mid-PATCH, asks HEAD, resumes and completes.
// Meanwhile files/getUpload says uploading with the bytes received, a
// fresh descriptor names the tus upload, and at the end the file is
// uploaded (its digest pin checked). Bytes off the pin by tus fail it.
func TestFilesResumable(t *testing.T) {
	parallel(t)
	base, _ := startTestServer(t, Options{Backend: newLocalStore(t)})
	for _, modern := range []bool{false, true} {
		c := newFilesClient(t, base, "", modern, `{"files":{}}`)
		data := tusPayload(400_000)
		prep := map[string]any{"mimeType": "application/octet-stream", "size": len(data), "digest": wireDigest(data),
			"idempotencyKey": "resume-" + strconv.FormatBool(modern)}
		var p hintedAnswer
		c.ok("files/prepareUpload", prep, &p)
		h := p.Upload.Resumable
		if h == nil || h.Protocol != "tus" || h.URL != p.Upload.URL+"/tus/" || h.UploadID != p.UploadID || h.Received == nil || *h.Received != 0 {
			t.Fatalf("prepareUpload's hint: %+v (upload url %s)", h, p.Upload.URL)
		}
		lc := newLinkTus(t, p.Upload.URL)
		r, path := lc.createFile(len(data), "", "application/octet-stream")
		if path == "" {
			t.Fatalf("tus creation on the hint's url: %d %s", r.StatusCode, readAll(r))
		}
		const first = 100_000
		if r := lc.patch(path, 0, data[:first], nil); r.StatusCode != 204 {
			t.Fatalf("first PATCH: %d %s", r.StatusCode, readAll(r))
		}
		wantUploading(t, c, p.UploadID, first)
		const cut = 250_000
		cutPatch(t, lc.base, path, first, len(data), data[first:cut])
		eventually(t, 30*time.Second, func() bool { return lc.offset(path) == cut })
		wantUploading(t, c, p.UploadID, cut)
		if a := c.call("files/completeUpload", map[string]any{"uploadId": p.UploadID, "size": len(data)}); a.Error == nil ||
			a.Error.Data["reason"] != "uploadIncomplete" || a.Error.Data["status"] != "uploading" || a.Error.Data["receivedBytes"] != float64(cut) {
			t.Fatalf("completeUpload during the tus upload: %s %+v; want uploadIncomplete, uploading, %d bytes", a.Result, a.Error, cut)
		}
		var again hintedAnswer
		c.ok("files/prepareUpload", prep, &again) // a replay: a fresh link to the same upload
		if h := again.Upload.Resumable; h == nil || h.Received == nil || *h.Received != cut || mustPath(t, h.UploadURL) == "" ||
			!strings.HasSuffix(h.UploadURL, path[strings.LastIndex(path, "/"):]) {
			t.Fatalf("the replay's hint: %+v; want the tus upload %s at %d", h, path, cut)
		}
		other := newLinkTus(t, again.Upload.URL) // resume through the fresh link
		if r := other.patch(mustPath(t, again.Upload.Resumable.UploadURL), cut, data[cut:], nil); r.StatusCode != 204 {
			t.Fatalf("resumed PATCH: %d %s", r.StatusCode, readAll(r))
		}
		var g fileAnswer
		c.ok("files/getUpload", map[string]any{"uploadId": p.UploadID}, &g)
		if g.Status != "uploaded" || g.Received != int64(len(data)) {
			t.Fatalf("getUpload after the last PATCH: %+v", g)
		}
		var done hintedAnswer
		c.ok("files/prepareUpload", prep, &done)
		if done.Upload.Resumable != nil {
			t.Fatalf("an uploaded file's descriptor still hints tus: %+v", done.Upload.Resumable)
		}
		var down fileAnswer
		c.ok("files/authorizeDownload", map[string]any{"uri": p.File.URI}, &down)
		if code, body := httpDo(t, down.Download, nil, nil); code != 200 || !bytes.Equal(body, data) {
			t.Fatalf("GET the tus-uploaded file: %d, %d bytes", code, len(body))
		}
		filesTusOffPin(t, c)
	}
}

// filesTusOffPin: bytes sent by tus that break the digest pin are
// refused by the completing PATCH (400 digest_mismatch, as the PUT), not
// kept, and fail the file; the link is free again, and a tus upload of
// the pinned bytes makes the file uploaded.
func filesTusOffPin(t *testing.T, c *filesClient) {
	data := []byte(strings.Repeat("pinned\n", 1000))
	var p hintedAnswer
	c.ok("files/prepareUpload", map[string]any{"mimeType": "text/plain", "size": len(data), "digest": wireDigest(data),
		"idempotencyKey": "off-pin-" + strconv.FormatBool(c.modern)}, &p)
	lc := newLinkTus(t, p.Upload.URL)
	_, path := lc.createFile(len(data), "", "text/plain")
	if r := lc.patch(path, 0, bytes.ToUpper(data), nil); r.StatusCode != 400 || !strings.Contains(readAll(r), `"digest_mismatch"`) {
		t.Fatalf("PATCH of the bytes off the pin: %d %v; want 400 digest_mismatch", r.StatusCode, r.Header)
	}
	var g fileAnswer
	c.ok("files/getUpload", map[string]any{"uploadId": p.UploadID}, &g)
	if g.Status != "failed" || g.Reason != "digestMismatch" {
		t.Fatalf("getUpload after tus bytes off the pin: %+v", g)
	}
	r, again := lc.createFile(len(data), "", "text/plain")
	if again == "" {
		t.Fatalf("a new tus upload after the refusal: %d %s", r.StatusCode, readAll(r))
	}
	if r := lc.patch(again, 0, data, nil); r.StatusCode != 204 {
		t.Fatalf("PATCH of the pinned bytes: %d %s", r.StatusCode, readAll(r))
	}
	c.ok("files/getUpload", map[string]any{"uploadId": p.UploadID}, &g)
	if g.Status != "uploaded" {
		t.Fatalf("getUpload after the pinned bytes: %+v", g)
	}
}

func wantUploading(t *testing.T, c *filesClient, id string, received int64) {
	t.Helper()
	var g fileAnswer
	c.ok("files/getUpload", map[string]any{"uploadId": id}, &g)
	if g.Status != "uploading" || g.Received != received {
		t.Fatalf("getUpload during the tus upload: %+v; want uploading, %d bytes", g, received)
	}
}

// TestFilesExpiry: the records of files authorized and never uploaded,
// of a tus upload left unfinished, and of failed ones go once their upload
// link expired, when the sweep runs; their idempotency keys then prepare
// a new file. An uploaded file stays.
func TestFilesExpiry(t *testing.T) {
	parallel(t)
	const ttl = 2 * time.Second
	base, srv := startTestServer(t, Options{Backend: newLocalStore(t), Blobs: blobs.Options{UploadTTL: ttl}})
	c := newFilesClient(t, base, "", true, `{"files":{}}`)
	data := []byte("kept\n")
	prep := func(key string, b []byte) hintedAnswer {
		var p hintedAnswer
		c.ok("files/prepareUpload", map[string]any{"mimeType": "text/plain", "size": len(b), "digest": wireDigest(b), "idempotencyKey": key}, &p)
		return p
	}
	never, partial, failed, kept := prep("never", data), prep("partial", data), prep("failed", data), prep("kept", data)
	lc := newLinkTus(t, partial.Upload.URL)
	if _, path := lc.createFile(len(data), "", "text/plain"); path == "" || lc.patch(path, 0, data[:2], nil).StatusCode != 204 {
		t.Fatal("the unfinished tus upload did not start")
	}
	if code, _ := httpDo(t, failed.Upload.Descriptor(), bytes.ToUpper(data), nil); code != 400 {
		t.Fatalf("PUT off the pin: %d", code)
	}
	if code, b := httpDo(t, kept.Upload.Descriptor(), data, nil); code != 201 {
		t.Fatalf("PUT: %d %s", code, b)
	}
	if n, err := srv.blobs.SweepFiles(t.Context()); err != nil || n != 0 {
		t.Fatalf("a sweep before the links expired removed %d, %v", n, err)
	}
	time.Sleep(ttl + time.Second)
	// The resumable uploads' sweep runs this in its rounds (one node per
	// round: package resumable's tests); here the round is called directly.
	if n, err := srv.blobs.SweepFiles(t.Context()); err != nil || n != 3 {
		t.Fatalf("the sweep removed %d, %v; want the 3 files without their bytes", n, err)
	}
	for _, p := range []hintedAnswer{never, partial, failed} {
		c.refused("files/getUpload", map[string]any{"uploadId": p.UploadID}, -32602, "uploadNotFound")
	}
	var g fileAnswer
	c.ok("files/getUpload", map[string]any{"uploadId": kept.UploadID}, &g)
	if g.Status != "uploaded" {
		t.Fatalf("the uploaded file after the sweep: %+v", g)
	}
	if again := prep("never", data); again.UploadID == never.UploadID || again.Status != "prepared" {
		t.Fatalf("the swept file's idempotencyKey: %+v; want a new file", again)
	}
}
