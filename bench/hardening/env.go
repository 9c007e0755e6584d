package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
)

// env is what the inputs of one target are sent with: the target, the
// secrets (API keys, token keys, and everything minted that is registered
// as it arrives), the store's expected contents, and a seeded source for
// generated inputs.
type env struct {
	cfg   config
	t     *target
	sec   *secrets
	inv   *inventory
	feats features
	hc    *http.Client
	rules rules

	rmu sync.Mutex
	rnd *rand.Rand

	smu      sync.Mutex
	sessions map[string]string // principal → 2025-11-25 session id
}

func newEnv(c config, t *target, sec *secrets, feats features, work string) *env {
	return &env{
		cfg: c, t: t, sec: sec, feats: feats, hc: newClient(),
		inv:      newInventory(feats.tenancy),
		rules:    newRules(work, c.repo),
		rnd:      rand.New(rand.NewPCG(c.seed, uint64(len(t.name)))),
		sessions: map[string]string{},
	}
}

// intn is a seeded random number in [0, n), safe for concurrent use.
func (e *env) intn(n int) int {
	e.rmu.Lock()
	defer e.rmu.Unlock()
	return e.rnd.IntN(n)
}

// request builds a request to the target; principal "" sends no key.
func (e *env) request(ctx context.Context, method, path, principal string, body []byte) *http.Request {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.t.base()+path, r)
	if err != nil {
		panic("bug: request: " + err.Error())
	}
	if principal != "" {
		req.Header.Set("Authorization", "Bearer "+e.sec.apiKeys[principal])
	}
	return req
}

// api sends a control-API request with alice's key and JSON body v (nil:
// none), returning the answer.
func (e *env) api(ctx context.Context, method, path string, v any) *answer {
	var body []byte
	if v != nil {
		body, _ = json.Marshal(v)
	}
	req := e.request(ctx, method, path, "alice", body)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return do(e.hc, req)
}

// mintLink mints a /d link for key through POST /v1/links and registers
// its sealed box as a secret; "" when the server refuses.
func (e *env) mintLink(ctx context.Context, key string, singleUse bool) string {
	a := e.api(ctx, http.MethodPost, "/v1/links", map[string]any{"key": key, "singleUse": singleUse, "ttlSeconds": 600})
	var r struct{ URL string }
	if a.status != http.StatusCreated || json.Unmarshal(a.body, &r) != nil || r.URL == "" {
		return ""
	}
	e.sec.addToken("/d token", r.URL)
	return tokenOf(r.URL, "/d/")
}

// mintUpload mints an upload endpoint (POST /v1/uploads with spec, as
// principal) and registers its signature; "" when refused.
func (e *env) mintUpload(ctx context.Context, principal string, spec map[string]any) string {
	body, _ := json.Marshal(spec)
	req := e.request(ctx, http.MethodPost, "/v1/uploads", principal, body)
	req.Header.Set("Content-Type", "application/json")
	a := do(e.hc, req)
	var r struct{ URL string }
	if a.status != http.StatusCreated || json.Unmarshal(a.body, &r) != nil || r.URL == "" {
		return ""
	}
	e.sec.addToken("/u token", r.URL)
	return tokenOf(r.URL, "/u/")
}

// tokenOf is the token in a minted URL.
func tokenOf(url, prefix string) string {
	if i := strings.Index(url, prefix); i >= 0 {
		return url[i+len(prefix):]
	}
	return ""
}

// notePresigned registers the signature of a presigned URL an answer
// redirects to (resources/stream redirect mode, /d with
// --download-redirect): it must never reach the logs.
func (e *env) notePresigned(a *answer) {
	if a.header == nil {
		return
	}
	loc := a.header.Get("Location")
	if i := strings.Index(loc, "X-Amz-Signature="); i >= 0 {
		sig, _, _ := strings.Cut(loc[i+len("X-Amz-Signature="):], "&")
		e.sec.add("presigned URL signature", sig)
		e.sec.add("presigned URL query", loc[strings.IndexByte(loc, '?')+1:])
	}
}
