package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/blobs"
)

// TestRequestUploadRoundsNameOneUpload: every 2026-07-28 round of one
// request_upload call names the same upload (URL and binary modes), on any
// node: a retry before the upload asks again with the same link (a new link
// each round sent the user's open page to an upload the call no longer
// waited for), the file sent to the first link completes the call on
// another node, and a tampered requestState is refused.
func TestRequestUploadRoundsNameOneUpload(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	// Two nodes behind one public URL: one store, one keyring (the
	// harness's), nothing else shared.
	baseA, _ := startTestServer(t, Options{Backend: st})
	baseB, _ := startTestServer(t, Options{Backend: st, PublicURL: baseA})
	client := func(t *testing.T, base, caps string) *mcpClient {
		return newMCPClient(t, base, modernVersion, caps).with(map[string]string{"Accept": "application/json"})
	}
	const noArgs = `{"name":"request_upload","arguments":{}}`

	t.Run("url", func(t *testing.T) {
		const caps, accept = `{"elicitation":{"url":{}}}`, `{"upload":{"action":"accept"}}`
		a, b := client(t, baseA, caps), client(t, baseB, caps)
		first := a.call("tools/call", noArgs)
		p1 := inputRequest(t, first.tool())
		prev := first
		for i, c := range []*mcpClient{a, b, b} {
			again := c.retry(prev, accept)
			if p := inputRequest(t, again.tool()); p.URL != p1.URL || p.Mode != "url" {
				t.Fatalf("retry %d before the upload names %q, want the first round's %q", i+1, p.URL, p1.URL)
			}
			prev = again
		}
		ct, body := multipartBody(t, [3]string{"u.txt", "text/plain", "one upload"})
		if u := doUpload(t, "POST", strings.Replace(p1.URL, "/upload/", "/u/", 1), ct, body, nil); u.Status != http.StatusCreated {
			t.Fatalf("upload %+v", u)
		}
		r := b.retry(prev, accept)
		if res := r.tool(); res.IsError || res.ResultType != "complete" || res.StructuredContent.SHA256 != hexSum([]byte("one upload")) {
			t.Fatalf("after the upload: %d %+v", r.status, res)
		}

		// A requestState changed by the client is refused, as before.
		state := prev.tool().RequestState
		i, ch := len(state)/3, "A"
		if state[i] == 'A' {
			ch = "B"
		}
		flipped := state[:i] + ch + state[i+1:]
		bad := a.call("tools/call", `{"name":"request_upload","arguments":{},"requestState":"`+flipped+`","inputResponses":`+accept+`}`)
		if e := bad.rpcError(); e.Code != -32602 || !strings.Contains(e.Message, "requestState") {
			t.Fatalf("tampered requestState: %+v", e)
		}
	})

	t.Run("binary", func(t *testing.T) {
		const caps = `{"elicitation":{"binary":{}}}`
		a, b := client(t, baseA, caps), client(t, baseB, caps)
		first := a.call("tools/call", noArgs)
		ep1 := inputRequest(t, first.tool()).UploadEndpoints["file"]
		// A retry without the answer (the client lost it) asks again: the
		// same endpoint and uploadId.
		again := b.retry(first, `{}`)
		if ep := inputRequest(t, again.tool()).UploadEndpoints["file"]; ep != ep1 {
			t.Fatalf("the retry names %+v, want the first round's %+v", ep, ep1)
		}
		ct, body := multipartBody(t, [3]string{"b.bin", "application/octet-stream", "binary bytes"})
		if u := doUpload(t, "POST", ep1.URL, ct, body, nil); u.Status != http.StatusCreated {
			t.Fatalf("upload %+v", u)
		}
		r := a.retry(again, `{"upload":{"action":"accept","content":{"file":{"name":"b.bin","size":12,"mimeType":"application/octet-stream","uploadId":"`+ep1.UploadID+`"}}}}`)
		if res := r.tool(); res.IsError || res.StructuredContent.SHA256 != hexSum([]byte("binary bytes")) {
			t.Fatalf("after the upload: %d %+v", r.status, res)
		}
	})
}

// TestRequestUploadExpiredLinkRenewed: when a URL-mode link expires with
// nothing uploaded, the next retry names a new upload and says why; the
// old link is refused (410) and the new one completes the call. A
// binary-mode answer naming the expired upload is told so.
func TestRequestUploadExpiredLinkRenewed(t *testing.T) {
	parallel(t)
	st := newLocalStore(t)
	const ttl = 3 * time.Second // the new link must outlive the upload that follows
	base, _ := startTestServer(t, Options{Backend: st, Blobs: blobs.Options{UploadTTL: ttl}})
	client := func(caps string) *mcpClient {
		return newMCPClient(t, base, modernVersion, caps).with(map[string]string{"Accept": "application/json"})
	}
	bc := client(`{"elicitation":{"binary":{}}}`)
	bfirst := bc.call("tools/call", `{"name":"request_upload","arguments":{}}`)
	old := inputRequest(t, bfirst.tool()).UploadEndpoints["file"].UploadID
	c := client(`{"elicitation":{"url":{}}}`)
	const accept = `{"upload":{"action":"accept"}}`
	first := c.call("tools/call", `{"name":"request_upload","arguments":{}}`)
	p1 := inputRequest(t, first.tool())
	if p := inputRequest(t, c.retry(first, accept).tool()); p.URL != p1.URL {
		t.Fatalf("a retry before expiry names %q, want %q", p.URL, p1.URL)
	}
	waitGone(t, p1.URL, 2*ttl) // minted after the binary one: both expired

	r := bc.retry(bfirst, `{"upload":{"action":"accept","content":{"file":{"name":"x","size":1,"uploadId":"`+old+`"}}}}`)
	if res := r.tool(); !res.IsError || res.Content[0].Text != `Field "file": the upload link for uploadId "`+old+`" expired before a file arrived` {
		t.Fatalf("binary answer for the expired upload: %+v", res)
	}

	again := c.retry(first, accept)
	p2 := inputRequest(t, again.tool())
	if p2.URL == p1.URL || !strings.Contains(p2.URL, "/upload/") || !strings.Contains(p2.Message, "expired") {
		t.Fatalf("after expiry: url %q (first %q), message %q", p2.URL, p1.URL, p2.Message)
	}
	if p := inputRequest(t, c.retry(again, accept).tool()); p.URL != p2.URL {
		t.Fatalf("the renewed upload's retry names %q, want %q", p.URL, p2.URL)
	}
	ct, body := multipartBody(t, [3]string{"late.txt", "text/plain", "second link"})
	if u := doUpload(t, "POST", strings.Replace(p1.URL, "/upload/", "/u/", 1), ct, body, nil); u.Status != http.StatusGone {
		t.Fatalf("upload to the expired link: %+v", u)
	}
	if u := doUpload(t, "POST", strings.Replace(p2.URL, "/upload/", "/u/", 1), ct, body, nil); u.Status != http.StatusCreated {
		t.Fatalf("upload to the new link: %+v", u)
	}
	r = c.retry(again, accept)
	if res := r.tool(); res.IsError || res.StructuredContent.SHA256 != hexSum([]byte("second link")) {
		t.Fatalf("after the upload: %d %+v", r.status, res)
	}
}

// waitGone polls the upload page at url until it answers 410 (the link
// expired), failing after within.
func waitGone(t *testing.T, url string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusGone {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upload page still answers %d after %v", resp.StatusCode, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
