package server

import (
	"context"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/core/auth/oauth"
	"github.com/mcpblob/mcpblob/core/auth/oauthtest"
)

// oauthServer is mcpblob protected by a real authorization server
// (cmd/mcpblob-testas), with the verifier's JWKS refresh made short so a
// rotation shows within a second; mods change the verifier's Config.
type oauthServer struct {
	as   *oauthtest.Server
	c    *bpClient
	base string
}

func startOAuthServer(t *testing.T, opts Options, mods ...func(*oauth.Config)) *oauthServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	as := oauthtest.Start(t, oauthtest.Options{Resources: []string{base + "/mcp"},
		Clients: []string{"mcpblob-test=http://127.0.0.1/callback"}})
	cfg := oauth.Config{Issuer: as.Issuer, Audience: base + "/mcp",
		MinRefresh: 200 * time.Millisecond, MaxAge: 500 * time.Millisecond}
	for _, mod := range mods {
		mod(&cfg)
	}
	v, err := oauth.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts.Auth.OAuth, opts.Auth.OAuthIssuer, opts.PublicURL = v, as.Issuer, base
	if opts.Backend == nil {
		opts.Backend = newLocalStore(t)
	}
	_, srv := startTestServerOn(t, opts, ln)
	c := &bpClient{t: t, base: base, srv: srv, hc: &http.Client{Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	return &oauthServer{as: as, c: c, base: base}
}

// mint is a token of the real AS for sub with scope, audience this server.
func (o *oauthServer) mint(t *testing.T, sub, scope string, m oauthtest.MintRequest) string {
	m.Sub, m.Scope = sub, scope
	if m.Aud == nil {
		m.Aud = o.base + "/mcp"
	}
	return o.as.Mint(t, m)
}

const toolsList = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// post sends a 2026-07-28 tools/list with the Authorization header auth.
func (o *oauthServer) post(authz, path string) httpResp {
	hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	if authz != "" {
		hdr["Authorization"] = authz
	}
	return o.c.do("POST", path, strings.NewReader(toolsList), hdr)
}

// TestOAuthTokens: every bad token is a 401 with the RFC 6750 challenge
// naming the protected resource metadata; a good one is served.
func TestOAuthTokens(t *testing.T) {
	parallel(t)
	o := startOAuthServer(t, Options{})
	good := o.mint(t, "alice", "blobs:read blobs:write", oauthtest.MintRequest{})
	if r := o.post("Bearer "+good, "/mcp"); r.status != http.StatusOK {
		t.Fatalf("a valid token: %d %s", r.status, r.body)
	}
	bad := map[string]string{
		"missing":             "",
		"malformed":           "Bearer not.a.jwt",
		"not bearer":          "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:pw")),
		"expired":             "Bearer " + o.mint(t, "alice", "blobs:read", oauthtest.MintRequest{ExpiresIn: -10 * time.Minute}),
		"not yet valid":       "Bearer " + o.mint(t, "alice", "blobs:read", oauthtest.MintRequest{NotBefore: 10 * time.Minute}),
		"wrong issuer":        "Bearer " + o.mint(t, "alice", "blobs:read", oauthtest.MintRequest{Iss: "http://127.0.0.1:1/evil"}),
		"wrong audience":      "Bearer " + o.mint(t, "alice", "blobs:read", oauthtest.MintRequest{Aud: "http://127.0.0.1:1/mcp"}),
		"alg none":            "Bearer " + algNone(good),
		"HS256 with the JWKS": "Bearer " + hs256WithPublicKey(t, o.as.Issuer, good),
		"unknown kid":         "Bearer " + o.mint(t, "alice", "blobs:read", oauthtest.MintRequest{Kid: "no-such-key"}),
	}
	// RFC 7519 §2: exp, nbf and iat are JSON numbers; the same dates as
	// strings of digits are malformed, however valid their values.
	now := time.Now()
	for name, v := range map[string]int64{"exp": now.Add(time.Hour).Unix(), "nbf": now.Add(-time.Minute).Unix(), "iat": now.Add(-time.Minute).Unix()} {
		tok := o.mint(t, "alice", "blobs:read", oauthtest.MintRequest{Claims: map[string]any{name: strconv.FormatInt(v, 10)}})
		bad[name+" as a string"] = "Bearer " + tok
	}
	for name, authz := range bad {
		checkUnauthorized(t, name, o, o.post(authz, "/mcp"))
	}
	if ch := o.post(bad["expired"], "/mcp").header.Get("WWW-Authenticate"); !strings.Contains(ch, `error="invalid_token", error_description="invalid token: expired"`) {
		t.Errorf("expired token's challenge: %q", ch)
	}
	if ch := o.post(bad["exp as a string"], "/mcp").header.Get("WWW-Authenticate"); !strings.Contains(ch, `error="invalid_token", error_description="invalid token: malformed exp claim"`) {
		t.Errorf("string exp's challenge: %q", ch)
	}
	if r := o.post("", "/mcp?access_token="+good); r.status != http.StatusUnauthorized {
		t.Errorf("token in the query string: %d %s", r.status, r.body)
	}
	// Rotation: once the verifier's keys are refreshed, a token signed with
	// the removed key is refused and one signed with the new key is served.
	o.as.Rotate(t)
	eventually(t, 10*time.Second, func() bool { return o.post("Bearer "+good, "/mcp").status == http.StatusUnauthorized })
	checkUnauthorized(t, "revoked key after JWKS rotation", o, o.post("Bearer "+good, "/mcp"))
	fresh := o.mint(t, "alice", "blobs:read", oauthtest.MintRequest{})
	if r := o.post("Bearer "+fresh, "/mcp"); r.status != http.StatusOK {
		t.Fatalf("a token of the new key: %d %s", r.status, r.body)
	}
}

func checkUnauthorized(t *testing.T, name string, o *oauthServer, r httpResp) {
	t.Helper()
	ch := r.header.Get("WWW-Authenticate")
	if r.status != http.StatusUnauthorized || !strings.HasPrefix(ch, "Bearer ") ||
		!strings.Contains(ch, `resource_metadata="`+o.base+`/.well-known/oauth-protected-resource/mcp"`) || !strings.Contains(ch, `scope="`) {
		t.Errorf("%s: %d, WWW-Authenticate %q: %s", name, r.status, ch, r.body)
	}
}

// algNone is tok with its header replaced by {"alg":"none"} and no signature.
func algNone(tok string) string {
	parts := strings.Split(tok, ".")
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"at+jwt"}`))
	return h + "." + parts[1] + "."
}

// hs256WithPublicKey re-signs tok's payload with HS256 whose secret is the
// AS's RSA public key in PEM: the algorithm-confusion attack.
func hs256WithPublicKey(t *testing.T, issuer, tok string) string {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(issuer, "/") + "/keys")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set struct {
		Keys []struct{ Kid, N, E string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil || len(set.Keys) == 0 {
		t.Fatalf("JWKS: %v", err)
	}
	pub := rsaPublicKey(t, set.Keys[0].N, set.Keys[0].E)
	der, _ := x509.MarshalPKIXPublicKey(pub)
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"at+jwt","kid":"` + set.Keys[0].Kid + `"}`))
	input := h + "." + strings.Split(tok, ".")[1]
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(input))
	return input + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// TestOAuthScopes: a token without blobs:write may read but not upload
// (403 insufficient_scope naming the scope), on /mcp in both eras and /v1.
func TestOAuthScopes(t *testing.T) {
	parallel(t)
	o := startOAuthServer(t, Options{})
	read := map[string]string{"Authorization": "Bearer " + o.mint(t, "alice", "blobs:read", oauthtest.MintRequest{})}
	for _, era := range []string{legacyVersion, modernVersion} {
		mc := newMCPClientWith(t, o.base, era, `{}`, read)
		r := mc.callTool("upload_file", `{"key":"k","file":"data:text/plain;base64,aGk="}`)
		ch := r.header.Get("WWW-Authenticate")
		if r.status != http.StatusForbidden || !strings.Contains(ch, `error="insufficient_scope"`) || !strings.Contains(ch, `scope="blobs:write"`) {
			t.Errorf("%s upload_file with blobs:read: %d %q %s", era, r.status, ch, r.body)
		}
		if r := mc.callTool("list_blobs", `{}`); r.status != http.StatusOK || r.tool().IsError {
			t.Errorf("%s list_blobs with blobs:read: %d %s", era, r.status, r.body)
		}
	}
	if r := o.c.put("k", []byte("x"), read); r.status != http.StatusForbidden || !strings.Contains(r.header.Get("WWW-Authenticate"), "insufficient_scope") {
		t.Errorf("PUT /v1/blobs with blobs:read: %d %s", r.status, r.body)
	}
	if r := o.c.do("GET", "/v1/blobs/k", nil, read); r.status != http.StatusNotFound {
		t.Errorf("GET /v1/blobs/k with blobs:read: %d %s (nothing may have been stored)", r.status, r.body)
	}
}

// TestOAuthResourceMetadata: RFC 9728 metadata at both well-known paths.
func TestOAuthResourceMetadata(t *testing.T) {
	parallel(t)
	o := startOAuthServer(t, Options{})
	for _, path := range []string{auth.MetadataPath, auth.MetadataPathMCP} {
		r := o.c.do("GET", path, nil, nil)
		var md auth.ResourceMetadata
		if r.status != http.StatusOK || json.Unmarshal(r.body, &md) != nil {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		if md.Resource != o.base+"/mcp" || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != o.as.Issuer ||
			strings.Join(md.ScopesSupported, " ") != "blobs:read blobs:write blobs:admin" || strings.Join(md.BearerMethodsSupported, ",") != "header" {
			t.Errorf("GET %s: %+v", path, md)
		}
	}
}

func rsaPublicKey(t *testing.T, n, e string) *rsa.PublicKey {
	t.Helper()
	nb, err1 := base64.RawURLEncoding.DecodeString(n)
	eb, err2 := base64.RawURLEncoding.DecodeString(e)
	if err1 != nil || err2 != nil {
		t.Fatalf("JWK n/e: %v %v", err1, err2)
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(nb), E: int(new(big.Int).SetBytes(eb).Int64())}
}
