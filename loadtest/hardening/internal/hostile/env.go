package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// Env is what the inputs of one target are sent with: the server's
// address, the API keys and token keys it was started with, where to
// register secrets (everything minted, as it arrives) and stored objects,
// and a seeded source for generated inputs.
type Env struct {
	name, addr string
	apiAddr    string            // where paths outside /mcp and /g/ go ("" = addr)
	apiKeys    map[string]string // principal → bearer key
	keyring    *token.Keyring    // the server's token keys, to sign hostile claims
	sec        secretSink
	inv        objectSink
	tenancy    bool // the build has per-principal namespaces
	flips      int  // single-character forgeries per token
	caseLimit  time.Duration
	HTTP       *http.Client

	rmu sync.Mutex
	rnd *rand.Rand

	smu      sync.Mutex
	sessions map[string]string // principal and capabilities → 2025-11-25 session id
}

// secretSink registers values that must never reach the server's logs.
type secretSink interface {
	Add(kind, value string)
	AddToken(kind, token string) // registers the token's signature or sealed box
	Marker() string              // a fresh data URI payload marker, registered
}

// objectSink records what a success answer stored, or that an input
// deleted an object on purpose.
type objectSink interface {
	NoteStored(principal string, a *wire.Answer)
	Forget(principal, key string)
}

// Options are what NewEnv needs besides the sinks.
type Options struct {
	Name, Addr string
	// APIAddr, when set, is where every path but /mcp and /g/ goes: the
	// upstream's control API and links behind a gateway at Addr (the
	// store the gateway's MCP traffic reaches is the upstream's).
	APIAddr   string
	APIKeys   map[string]string
	Keyring   *token.Keyring
	Tenancy   bool
	Flips     int
	CaseLimit time.Duration
	Seed      uint64
}

// NewEnv returns an Env for the server o describes; sec and inv receive
// the secrets and the stored objects its inputs produce.
func NewEnv(o Options, sec secretSink, inv objectSink) *Env {
	return &Env{name: o.Name, addr: o.Addr, apiAddr: o.APIAddr, apiKeys: o.APIKeys, keyring: o.Keyring, sec: sec, inv: inv,
		tenancy: o.Tenancy, flips: o.Flips, caseLimit: o.CaseLimit, HTTP: wire.NewClient(),
		rnd: rand.New(rand.NewPCG(o.Seed, uint64(len(o.Name)))), sessions: map[string]string{}}
}

func (e *Env) base() string { return "http://" + e.addr }

// Intn is a seeded random number in [0, n), safe for concurrent use.
func (e *Env) Intn(n int) int {
	e.rmu.Lock()
	defer e.rmu.Unlock()
	return e.rnd.IntN(n)
}

// Request builds a request to the target; principal "" sends no key.
func (e *Env) Request(ctx context.Context, method, path, principal string, body []byte) *http.Request {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	base := e.base()
	if e.apiAddr != "" && !strings.HasPrefix(path, "/mcp") && !strings.HasPrefix(path, "/g/") {
		base = "http://" + e.apiAddr
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, r)
	if err != nil {
		panic("bug: request: " + err.Error())
	}
	if principal != "" {
		req.Header.Set("Authorization", "Bearer "+e.apiKeys[principal])
	}
	return req
}

// api sends a control-API request as principal with JSON body v (nil:
// none), returning the answer.
func (e *Env) api(ctx context.Context, principal, method, path string, v any) *wire.Answer {
	var body []byte
	if v != nil {
		body, _ = json.Marshal(v)
	}
	req := e.Request(ctx, method, path, principal, body)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return wire.Do(e.HTTP, req)
}

// mintLink mints a /d link for key through POST /v1/links and registers
// its sealed box as a secret; "" when the server refuses.
func (e *Env) mintLink(ctx context.Context, key string, singleUse bool) string {
	a := e.api(ctx, "alice", http.MethodPost, "/v1/links", map[string]any{"key": key, "singleUse": singleUse, "ttlSeconds": 600})
	var r struct{ URL string }
	if a.Status != http.StatusCreated || json.Unmarshal(a.Body, &r) != nil || r.URL == "" {
		return ""
	}
	e.sec.AddToken("/d token", r.URL)
	return tokenOf(r.URL, "/d/")
}

// MintUpload mints an upload endpoint (POST /v1/uploads with spec, as
// principal) and registers its signature; "" when refused.
func (e *Env) MintUpload(ctx context.Context, principal string, spec map[string]any) string {
	a := e.api(ctx, principal, http.MethodPost, "/v1/uploads", spec)
	var r struct{ URL string }
	if a.Status != http.StatusCreated || json.Unmarshal(a.Body, &r) != nil || r.URL == "" {
		return ""
	}
	e.sec.AddToken("/u token", r.URL)
	return tokenOf(r.URL, "/u/")
}

// tokenOf is the token in a minted URL.
func tokenOf(url, prefix string) string {
	if i := strings.Index(url, prefix); i >= 0 {
		return url[i+len(prefix):]
	}
	return ""
}

// NotePresigned registers the signature of a presigned URL an answer
// redirects to (resources/stream redirect mode, /d with
// --download-redirect): it must never reach the logs.
func (e *Env) NotePresigned(a *wire.Answer) {
	if a.Header == nil {
		return
	}
	loc := a.Header.Get("Location")
	if i := strings.Index(loc, "X-Amz-Signature="); i >= 0 {
		sig, _, _ := strings.Cut(loc[i+len("X-Amz-Signature="):], "&")
		e.sec.Add("presigned URL signature", sig)
		e.sec.Add("presigned URL query", loc[strings.IndexByte(loc, '?')+1:])
	}
}
