package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

const (
	resourceA = "http://127.0.0.1:9001/mcp"
	resourceB = "http://127.0.0.1:9002/mcp"
	pubClient = "pub"
	pubRedir  = "http://127.0.0.1:43210/cb" // registered without the port
)

// testAS is a running server and the plain HTTP client that drives it.
type testAS struct {
	t      *testing.T
	issuer string
	root   string // scheme://host, where /test/ lives
	http   *http.Client
}

func start(t *testing.T, args ...string) *testAS {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, stdout := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, stdout, io.Discard)
		stdout.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("no listening line: %v (run: %v)", err, <-done)
	}
	go io.Copy(io.Discard, out)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	issuer, ok := strings.CutPrefix(strings.TrimSpace(line), "mcpblob-testas listening on ")
	if !ok {
		t.Fatalf("listening line %q", line)
	}
	u, _ := url.Parse(issuer)
	return &testAS{t: t, issuer: issuer, root: u.Scheme + "://" + u.Host, http: &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func startDefault(t *testing.T, extra ...string) *testAS {
	return start(t, append([]string{
		"-issuer", "/tenant1",
		"-resource", resourceA, "-resource", resourceB,
		"-user", "alice:alice:alice-pw", "-user", "bob:bob:bob-pw",
		"-user-claim", "alice:org=acme", "-user-scopes", "bob:blobs:read",
		"-client", pubClient + "=http://127.0.0.1/cb",
		"-client", "conf:s3cret=http://127.0.0.1:7777/cb",
	}, extra...)...)
}

// result is a response with its body read.
type result struct {
	*http.Response
	body []byte
}

func (a *testAS) do(req *http.Request) result {
	a.t.Helper()
	resp, err := a.http.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return result{resp, body}
}

func (a *testAS) get(u string) result {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	return a.do(req)
}

func (a *testAS) postForm(u string, form url.Values, user, pass string) result {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	return a.do(req)
}

func (a *testAS) getJSON(u string, v any) {
	a.t.Helper()
	r := a.get(u)
	if r.StatusCode != http.StatusOK || json.Unmarshal(r.body, v) != nil {
		a.t.Fatalf("GET %s: %s %s", u, r.Status, r.body)
	}
}

func location(t *testing.T, r result) *url.URL {
	t.Helper()
	if r.StatusCode != http.StatusFound {
		t.Fatalf("%s %s: want 302, got %s %s", r.Request.Method, r.Request.URL, r.Status, r.body)
	}
	u, err := r.Location()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// authorize runs the login steps of the package doc and returns the URL the
// AS finally redirects the browser to.
func (a *testAS) authorize(params url.Values, username, password string) *url.URL {
	a.t.Helper()
	loginURL := location(a.t, a.get(a.issuer+"/authorize?"+params.Encode()))
	if loginURL.Path != strings.TrimPrefix(a.issuer, a.root)+"/login" {
		return loginURL // an error redirect to the client
	}
	page := a.get(loginURL.String())
	if page.StatusCode != http.StatusOK || !strings.Contains(string(page.body), `name="password"`) {
		a.t.Fatalf("login page: %s %s", page.Status, page.body)
	}
	form := url.Values{"id": {loginURL.Query().Get("id")}, "username": {username}, "password": {password}}
	callback := location(a.t, a.postForm(a.issuer+"/login", form, "", ""))
	return location(a.t, a.get(callback.String()))
}

func pkce() (verifier, challenge string) {
	verifier = randomID(32)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

func authParams(clientID, redirect, challenge, scope string, resources ...string) url.Values {
	v := url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect},
		"scope": {scope}, "state": {"st-1"},
	}
	if challenge != "" {
		v.Set("code_challenge", challenge)
		v.Set("code_challenge_method", "S256")
	}
	v["resource"] = resources
	return v
}

// token posts a token request and decodes the JSON answer.
func (a *testAS) token(form url.Values, user, pass string) (int, map[string]any) {
	a.t.Helper()
	r := a.postForm(a.issuer+"/oauth/token", form, user, pass)
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		a.t.Fatalf("token answer %s: %s", r.Status, r.body)
	}
	return r.StatusCode, m
}

// publicFlow logs user in through the public client and exchanges the code.
func (a *testAS) publicFlow(user, pass, scope string, resources ...string) map[string]any {
	a.t.Helper()
	verifier, challenge := pkce()
	back := a.authorize(authParams(pubClient, pubRedir, challenge, scope, resources...), user, pass)
	if got := back.Query(); got.Get("code") == "" || got.Get("state") != "st-1" {
		a.t.Fatalf("redirect %s: want code and state", back)
	}
	status, tok := a.token(url.Values{
		"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")},
		"redirect_uri": {pubRedir}, "client_id": {pubClient}, "code_verifier": {verifier},
	}, "", "")
	if status != http.StatusOK {
		a.t.Fatalf("code exchange: %d %v", status, tok)
	}
	return tok
}

// verify checks the JWT's signature against the served JWKS and returns its
// claims; ok is false when no JWKS key verifies it.
func (a *testAS) verify(token string) (claims map[string]any, ok bool) {
	a.t.Helper()
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil {
		a.t.Fatal(err)
	}
	if typ := jws.Signatures[0].Header.ExtraHeaders["typ"]; typ != "at+jwt" {
		a.t.Errorf("typ %v, want at+jwt", typ)
	}
	var jwks jose.JSONWebKeySet
	a.getJSON(a.issuer+"/keys", &jwks)
	keys := jwks.Key(jws.Signatures[0].Header.KeyID)
	if len(keys) == 0 {
		return nil, false
	}
	payload, err := jws.Verify(keys[0])
	if err != nil {
		a.t.Fatalf("signature: %v", err)
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		a.t.Fatal(err)
	}
	return claims, true
}

func (a *testAS) mustVerify(token string) map[string]any {
	a.t.Helper()
	claims, ok := a.verify(token)
	if !ok {
		a.t.Fatal("no JWKS key for the token's kid")
	}
	return claims
}

func wantClaim(t *testing.T, claims map[string]any, name string, want any) {
	t.Helper()
	got, _ := json.Marshal(claims[name])
	w, _ := json.Marshal(want)
	if string(got) != string(w) {
		t.Errorf("claim %s = %s, want %s", name, got, w)
	}
}

func TestMetadata(t *testing.T) {
	a := startDefault(t)
	var rfc8414, oidc map[string]any
	a.getJSON(a.root+"/.well-known/oauth-authorization-server/tenant1", &rfc8414)
	a.getJSON(a.issuer+"/.well-known/openid-configuration", &oidc)
	for _, m := range []map[string]any{rfc8414, oidc} {
		wantClaim(t, m, "issuer", a.issuer)
		wantClaim(t, m, "code_challenge_methods_supported", []string{"S256"})
		wantClaim(t, m, "token_endpoint", a.issuer+"/oauth/token")
		methods, _ := json.Marshal(m["token_endpoint_auth_methods_supported"])
		if !strings.Contains(string(methods), `"none"`) {
			t.Errorf("token_endpoint_auth_methods_supported %s lacks none", methods)
		}
	}

	b := startDefault(t, "-no-rfc8414")
	if r := b.get(b.root + "/.well-known/oauth-authorization-server/tenant1"); r.StatusCode != http.StatusNotFound {
		t.Errorf("-no-rfc8414: RFC 8414 route answers %s", r.Status)
	}
	b.getJSON(b.issuer+"/.well-known/openid-configuration", &oidc)
}

func TestCodeFlow(t *testing.T) {
	a := startDefault(t)
	tok := a.publicFlow("alice", "alice-pw", "openid blobs:read blobs:write bogus offline_access", resourceB)
	claims := a.mustVerify(tok["access_token"].(string))
	wantClaim(t, claims, "iss", a.issuer)
	wantClaim(t, claims, "sub", "alice")
	wantClaim(t, claims, "aud", []string{resourceB})
	wantClaim(t, claims, "client_id", pubClient)
	wantClaim(t, claims, "scope", "openid blobs:read blobs:write offline_access")
	wantClaim(t, claims, "org", "acme")
	now := float64(time.Now().Unix())
	for _, c := range []string{"iat", "nbf"} {
		if v, _ := claims[c].(float64); v < now-60 || v > now+1 {
			t.Errorf("%s = %v, want about %v", c, claims[c], now)
		}
	}
	if exp, _ := claims["exp"].(float64); exp < now+3500 {
		t.Errorf("exp = %v, want about an hour from %v", claims["exp"], now)
	}
	if jti, _ := claims["jti"].(string); jti == "" {
		t.Error("no jti")
	}

	// Refresh, narrowing the audience to a granted resource; the refresh
	// token rotates.
	refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)},
		"client_id": {pubClient}, "resource": {resourceB}}
	status, again := a.token(refresh, "", "")
	if status != http.StatusOK {
		t.Fatalf("refresh: %d %v", status, again)
	}
	wantClaim(t, a.mustVerify(again["access_token"].(string)), "aud", []string{resourceB})
	if status, _ := a.token(refresh, "", ""); status != http.StatusBadRequest {
		t.Errorf("reused refresh token: %d, want 400", status)
	}
	refresh.Set("refresh_token", again["refresh_token"].(string))
	refresh.Set("resource", resourceA)
	if status, m := a.token(refresh, "", ""); status != http.StatusBadRequest || m["error"] != "invalid_target" {
		t.Errorf("refresh for an ungranted resource: %d %v, want invalid_target", status, m)
	}
}

func TestDefaultsAndRestrictions(t *testing.T) {
	a := startDefault(t)
	tok := a.publicFlow("bob", "bob-pw", "blobs:read blobs:write blobs:admin")
	claims := a.mustVerify(tok["access_token"].(string))
	wantClaim(t, claims, "sub", "bob")
	wantClaim(t, claims, "aud", []string{resourceA}) // the first -resource
	wantClaim(t, claims, "scope", "blobs:read")
	if _, ok := tok["refresh_token"]; ok {
		t.Error("refresh token without offline_access")
	}

	_, challenge := pkce()
	back := a.authorize(authParams(pubClient, pubRedir, challenge, "blobs:read", "http://elsewhere/mcp"), "alice", "alice-pw")
	if back.Query().Get("error") != "invalid_target" || back.Query().Get("state") != "st-1" {
		t.Errorf("unknown resource: redirect %s, want error=invalid_target", back)
	}
	back = a.authorize(authParams(pubClient, pubRedir, "", "blobs:read"), "alice", "alice-pw")
	if back.Query().Get("error") != "invalid_request" {
		t.Errorf("public client without PKCE: redirect %s, want error=invalid_request", back)
	}

	loginURL := location(t, a.get(a.issuer+"/authorize?"+authParams(pubClient, pubRedir, challenge, "blobs:read").Encode()))
	form := url.Values{"id": {loginURL.Query().Get("id")}, "username": {"alice"}, "password": {"wrong"}}
	if r := a.postForm(a.issuer+"/login", form, "", ""); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong password: %s, want 401", r.Status)
	}
}

func TestConfidentialClient(t *testing.T) {
	a := startDefault(t)
	const redirect = "http://127.0.0.1:7777/cb"
	for _, post := range []bool{false, true} {
		verifier, challenge := pkce()
		back := a.authorize(authParams("conf", redirect, challenge, "blobs:write", resourceA), "alice", "alice-pw")
		form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")},
			"redirect_uri": {redirect}, "code_verifier": {verifier}}
		user, pass := "conf", "s3cret"
		if post {
			form.Set("client_id", user)
			form.Set("client_secret", pass)
			user, pass = "", ""
		}
		status, tok := a.token(form, user, pass)
		if status != http.StatusOK {
			t.Fatalf("post=%v: %d %v", post, status, tok)
		}
		wantClaim(t, a.mustVerify(tok["access_token"].(string)), "client_id", "conf")
	}
	_, tok := a.token(url.Values{"grant_type": {"authorization_code"}, "code": {"x"}}, "conf", "wrong")
	if tok["error"] == nil {
		t.Errorf("wrong secret: %v", tok)
	}
}

func TestMintAndRotate(t *testing.T) {
	a := startDefault(t, "-alg", "ES256")
	mint := func(body string) string {
		req, _ := http.NewRequest(http.MethodPost, a.root+"/test/mint", strings.NewReader(body))
		r := a.do(req)
		var m map[string]string
		if r.StatusCode != http.StatusOK || json.Unmarshal(r.body, &m) != nil {
			t.Fatalf("mint: %s %s", r.Status, r.body)
		}
		return m["access_token"]
	}
	old := mint(`{"sub":"carol","scope":"blobs:read","aud":"http://x/mcp","iss":"http://evil","expires_in":-30,"not_before_in":60,"claims":{"org":"acme"}}`)
	claims := a.mustVerify(old)
	wantClaim(t, claims, "iss", "http://evil")
	wantClaim(t, claims, "aud", "http://x/mcp")
	wantClaim(t, claims, "org", "acme")
	exp, nbf, iat := claims["exp"].(float64), claims["nbf"].(float64), claims["iat"].(float64)
	if exp != iat-30 || nbf != iat+60 {
		t.Errorf("exp %v nbf %v iat %v: want iat-30 and iat+60", exp, nbf, iat)
	}
	wantClaim(t, a.mustVerify(mint(`{"sub":"alice"}`)), "aud", []string{resourceA})
	forged := mint(`{"sub":"alice","kid":"nope"}`)
	if _, ok := a.verify(forged); ok {
		t.Error("a token with kid nope verified")
	}

	var keys struct{ Kids []string }
	a.getJSON(a.root+"/test/keys", &keys)
	req, _ := http.NewRequest(http.MethodPost, a.root+"/test/rotate", nil)
	out := a.do(req).body
	var rotated struct{ Kid string }
	if json.Unmarshal(out, &rotated) != nil || rotated.Kid == "" || slices.Contains(keys.Kids, rotated.Kid) {
		t.Fatalf("rotate: %s (before: %v)", out, keys.Kids)
	}
	if _, ok := a.verify(old); ok {
		t.Error("a token of the old key still verifies after rotation")
	}
	tok := a.publicFlow("alice", "alice-pw", "blobs:read")
	jws, _ := jose.ParseSignedCompact(tok["access_token"].(string), []jose.SignatureAlgorithm{jose.ES256})
	if kid := jws.Signatures[0].Header.KeyID; kid != rotated.Kid {
		t.Errorf("token kid %s, want the new %s", kid, rotated.Kid)
	}
	a.mustVerify(tok["access_token"].(string))
}

func TestListenLoopbackOnly(t *testing.T) {
	err := run(context.Background(), []string{"-listen", "0.0.0.0:0"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("run -listen 0.0.0.0:0: %v, want a loopback error", err)
	}
}
