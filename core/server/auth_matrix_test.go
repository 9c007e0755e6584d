package server

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/server/blobsvc"
	"github.com/mcpblob/mcpblob/core/token"
)

// The cross-principal matrix (docs/auth.md, tenancy): alice and bob hold API
// keys on a server with a namespace per principal. For every operation of
// every surface, bob's attempt on alice's blob must fail and tell him
// nothing: each probe runs once before alice's blob exists and once after,
// and the two answers must be identical (a foreign key answers exactly like a
// missing one). The capabilities bound to a principal (sessions, links that
// need a credential, upload endpoints) are refused to bob outright.

const matrixKey = "secret/plan.txt"

// probe is one of bob's attempts; run returns its answer reduced to what
// must not change (status, error code and message, listed keys).
type probe struct {
	name string
	run  func() string
}

func bearer(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

func TestCrossPrincipalMatrix(t *testing.T) {
	parallel(t)
	c := newBPClient(t, Options{
		Backend: newLocalStore(t),
		Auth:    Auth{Keys: []string{HashKey("alice-key") + " alice", HashKey("bob-key") + " bob"}},
	})
	probes := append(controlProbes(c, bearer("bob-key")), mcpProbes(c, bearer("bob-key"))...)
	// Deletions last: were one to succeed, the probes after it would see
	// nothing either way.
	isDelete := func(p probe) int {
		if strings.Contains(strings.ToLower(p.name), "delete") {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(probes, func(a, b probe) int { return cmp.Compare(isDelete(a), isDelete(b)) })
	before := make([]string, len(probes))
	for i, p := range probes {
		before[i] = p.run()
	}
	secret := []byte("alice's plan: " + strings.Repeat("x", 100))
	if r := c.put(matrixKey, secret, bearer("alice-key")); r.status != http.StatusCreated {
		t.Fatalf("alice's PUT: %d %s", r.status, r.body)
	}
	leaks, successes := 0, 0
	for i, p := range probes {
		after := p.run()
		if after != before[i] {
			leaks++
			t.Errorf("%s: answer changed once alice's blob existed:\n before %s\n after  %s", p.name, before[i], after)
		}
		if reveals(after, secret) {
			successes++
			t.Errorf("%s: bob sees alice's blob: %s", p.name, after)
		}
	}
	bound := boundProbes(t, c)
	if r := c.do("GET", "/v1/blobs/"+matrixKey, nil, bearer("alice-key")); r.status != 200 || !bytes.Equal(r.body, secret) {
		t.Fatalf("alice's blob after bob's attempts: %d %q", r.status, r.body)
	}
	t.Logf("cross-principal matrix: %d probes answered alike before and after (%d differed), %d principal-bound refusals; %d successes",
		len(probes), leaks, bound, successes)
}

// reveals reports whether an answer shows anything of alice's blob: its
// bytes, its digest, or its key anywhere but in a not-found answer.
func reveals(answer string, secret []byte) bool {
	notFound := strings.Contains(answer, "not found") || strings.Contains(answer, "not_found")
	return strings.Contains(answer, hexSum(secret)) || strings.Contains(answer, string(secret[:12])) ||
		(strings.Contains(answer, "plan.txt") && !notFound)
}

// controlProbes are bob's /v1 attempts.
func controlProbes(c *bpClient, bob map[string]string) []probe {
	status := func(method, path, body string) func() string {
		return func() string {
			var rd *strings.Reader
			if body != "" {
				rd = strings.NewReader(body)
			} else {
				rd = strings.NewReader("")
			}
			r := c.do(method, path, rd, bob)
			return fmt.Sprintf("%d %s", r.status, r.body)
		}
	}
	return []probe{
		{"GET /v1/blobs/{key}", status("GET", "/v1/blobs/"+matrixKey, "")},
		{"HEAD /v1/blobs/{key}", status("HEAD", "/v1/blobs/"+matrixKey, "")},
		{"DELETE /v1/blobs/{key}", status("DELETE", "/v1/blobs/"+matrixKey, "")},
		{"GET /v1/blobs?prefix", status("GET", "/v1/blobs?prefix=secret/", "")},
		{"GET /v1/blobs", status("GET", "/v1/blobs", "")},
		{"POST /v1/links", status("POST", "/v1/links", `{"key":"`+matrixKey+`"}`)},
		{"POST /v1/links single-use", status("POST", "/v1/links", `{"key":"`+matrixKey+`","singleUse":true}`)},
	}
}

// mcpProbes are bob's MCP attempts, in both protocol eras.
func mcpProbes(c *bpClient, bob map[string]string) []probe {
	var out []probe
	for _, era := range []string{legacyVersion, modernVersion} {
		mc := newMCPClientWith(c.t, c.base, era, `{"resourceStreaming":{}}`, bob)
		tool := func(name, args string) func() string {
			return func() string { return outcomeString(mc.callTool(name, args).msg) }
		}
		call := func(method, params string) func() string {
			return func() string { return outcomeString(mc.call(method, params).msg) }
		}
		uri := blobs.URI(matrixKey)
		out = append(out,
			probe{era + " tools/call stat_blob", tool("stat_blob", `{"key":"`+matrixKey+`"}`)},
			probe{era + " tools/call delete_blob", tool("delete_blob", `{"key":"`+matrixKey+`"}`)},
			probe{era + " tools/call get_download_link", tool("get_download_link", `{"key":"`+matrixKey+`"}`)},
			probe{era + " tools/call list_blobs", tool("list_blobs", `{"prefix":"secret/"}`)},
			probe{era + " tools/call list_blobs (all)", tool("list_blobs", `{}`)},
			probe{era + " resources/read", call("resources/read", `{"uri":"`+uri+`"}`)},
			probe{era + " resources/list", call("resources/list", `{}`)},
			probe{era + " resources/stream", func() string {
				r := mc.streamResource(uri)
				return fmt.Sprintf("%d %s", r.status, outcomeString(r.msg))
			}},
			probe{era + " completion/complete", call("completion/complete",
				`{"ref":{"type":"ref/resource","uri":"`+blobs.URITemplate+`"},"argument":{"name":"key","value":"secret/"}}`)},
		)
	}
	return out
}

// outcomeString reduces a JSON-RPC answer to its outcome without ids.
func outcomeString(m rpcMsg) string {
	if m.Error != nil {
		return "error " + string(m.Error)
	}
	var r map[string]any
	_ = json.Unmarshal(m.Result, &r)
	delete(r, "_meta")
	b, _ := json.Marshal(r)
	return "result " + string(b)
}

// boundProbes checks the capabilities bound to alice: her 2025-11-25
// session, her upload endpoint and, on a server whose links need the
// minting principal's credential, her download link. It returns the number
// of refusals checked.
func boundProbes(t *testing.T, c *bpClient) int {
	alice := newMCPClientWith(t, c.base, legacyVersion, `{}`, bearer("alice-key"))
	if r := alice.with(bearer("bob-key")).call("ping", ``); r.status != http.StatusNotFound && r.status != http.StatusBadRequest {
		t.Errorf("bob in alice's session: %d %s", r.status, r.body)
	}
	up := sealedUpload(t, c.srv, "alice", "binary")
	body := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.txt\"\r\nContent-Type: text/plain\r\n\r\nbob was here\r\n--b--\r\n"
	hdr := map[string]string{"Content-Type": "multipart/form-data; boundary=b"}
	if r := c.do("POST", "/u/"+up, strings.NewReader(body), hdr); r.status != http.StatusUnauthorized {
		t.Errorf("alice's binary upload endpoint without a credential: %d %s", r.status, r.body)
	}
	hdr["Authorization"] = "Bearer bob-key"
	if r := c.do("POST", "/u/"+up, strings.NewReader(body), hdr); r.status != http.StatusForbidden {
		t.Errorf("alice's binary upload endpoint with bob's key: %d %s", r.status, r.body)
	}
	lc := newBPClient(t, Options{
		Backend: newLocalStore(t),
		Auth:    Auth{Keys: []string{HashKey("alice-key") + " alice", HashKey("bob-key") + " bob"}},
		Service: blobsvc.Options{LinksNeedCredential: true},
	})
	lc.put("k", []byte("v"), bearer("alice-key"))
	r := lc.do("POST", "/v1/links", strings.NewReader(`{"key":"k"}`), bearer("alice-key"))
	var link struct{ URL string }
	_ = json.Unmarshal(r.body, &link)
	if r := lc.do("GET", link.URL, nil, bearer("bob-key")); r.status != http.StatusForbidden {
		t.Errorf("alice's link with bob's key: %d %s", r.status, r.body)
	}
	if r := lc.do("GET", link.URL, nil, nil); r.status != http.StatusUnauthorized {
		t.Errorf("alice's link without a credential: %d %s", r.status, r.body)
	}
	if r := lc.do("GET", link.URL, nil, bearer("alice-key")); r.status != http.StatusOK || string(r.body) != "v" {
		t.Errorf("alice's link with her key: %d %s", r.status, r.body)
	}
	return 5
}

// sealedUpload mints an upload endpoint token for principal in mode, as
// request_upload does.
func sealedUpload(t *testing.T, srv *Server, principal, mode string) string {
	data, _ := json.Marshal(blobs.UploadTokenData{Field: "file", Mode: mode})
	tok, err := srv.opts.Keyring.Seal(token.Claims{Purpose: token.PurposeUpload, Principal: principal,
		Prefix: srv.gate.Tenancy.RawPrefix(identityOf(principal)), MaxSize: 1 << 20, Nonce: token.NewUploadID(),
		Expires: time.Now().Add(time.Minute), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func identityOf(principal string) auth.Identity {
	return auth.Identity{Principal: principal, Scopes: auth.DefaultKeyScopes}
}

// TestCrossPrincipalSubscriptions: a change in alice's namespace reaches
// her notification stream and never bob's.
func TestCrossPrincipalSubscriptions(t *testing.T) {
	parallel(t)
	c := newBPClient(t, Options{
		Backend: newLocalStore(t),
		Auth:    Auth{Keys: []string{HashKey("alice-key") + " alice", HashKey("bob-key") + " bob"}},
	})
	streams := map[string]<-chan rpcMsg{}
	for _, who := range []string{"alice", "bob"} {
		mc := newMCPClientWith(t, c.base, legacyVersion, `{}`, bearer(who+"-key"))
		s := mc.events(mc.get(""))
		ch := make(chan rpcMsg, 16)
		go func() {
			for {
				m, ok := s.next()
				if !ok {
					return
				}
				ch <- m
			}
		}()
		streams[who] = ch
	}
	time.Sleep(100 * time.Millisecond) // both streams subscribed
	c.put("news.txt", []byte("alice's news"), bearer("alice-key"))
	select {
	case m := <-streams["alice"]:
		if m.Method != "notifications/resources/list_changed" {
			t.Fatalf("alice's stream: %+v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("alice's stream saw no change")
	}
	select {
	case m := <-streams["bob"]:
		t.Fatalf("bob's stream saw alice's change: %s %s", m.Method, m.Params)
	case <-time.After(300 * time.Millisecond):
	}
	c.put("own.txt", []byte("bob's"), bearer("bob-key"))
	select {
	case <-streams["bob"]:
	case <-time.After(10 * time.Second):
		t.Fatal("bob's stream saw not even his own change")
	}
}
