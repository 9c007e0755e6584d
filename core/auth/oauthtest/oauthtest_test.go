package oauthtest

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

const resource = "http://127.0.0.1:9000/mcp"

// claims decodes a JWT's payload, unverified.
func claims(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q: want 3 dot-separated parts", jwt)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func audience(c map[string]any) []string {
	var aud []string
	switch v := c["aud"].(type) {
	case string:
		aud = []string{v}
	case []any:
		for _, a := range v {
			s, _ := a.(string)
			aud = append(aud, s)
		}
	}
	return aud
}

func TestToken(t *testing.T) {
	s := Start(t, Options{
		Issuer:    "/t1",
		Resources: []string{resource},
		Clients:   []string{"cli=http://127.0.0.1/cb"},
	})
	if !strings.HasSuffix(s.Issuer, "/t1") {
		t.Errorf("issuer %s: want the /t1 path", s.Issuer)
	}
	c := claims(t, s.Token(t, "cli", "http://127.0.0.1:4567/cb", resource, "alice", "alice-pw", "blobs:read", "blobs:write"))
	if c["sub"] != "alice" || c["scope"] != "blobs:read blobs:write" || !slices.Equal(audience(c), []string{resource}) {
		t.Errorf("claims %v: want sub alice, aud [%s], scope blobs:read blobs:write", c, resource)
	}
	if c["iss"] != s.Issuer {
		t.Errorf("iss %v, want %s", c["iss"], s.Issuer)
	}
}

func TestMintRotateLogin(t *testing.T) {
	s := Start(t, Options{Resources: []string{resource}, Clients: []string{"cli=http://127.0.0.1/cb"}})
	c := claims(t, s.Mint(t, MintRequest{Sub: "bob", Scope: "blobs:admin", ExpiresIn: -time.Minute}))
	if c["sub"] != "bob" || c["scope"] != "blobs:admin" || c["exp"].(float64) >= float64(time.Now().Unix()) {
		t.Errorf("minted claims %v: want sub bob, scope blobs:admin, exp in the past", c)
	}
	if kid := s.Rotate(t); kid == "" {
		t.Error("Rotate: empty kid")
	}
	back := s.Login(t, s.Issuer+"/authorize?response_type=code&client_id=cli&redirect_uri=http://127.0.0.1:1/cb&scope=blobs:read&state=x&code_challenge=abcdefghijklmnopqrstuvwxyzabcdefghijklmnopq&code_challenge_method=S256&resource=http://other/", "alice", "alice-pw")
	if back.Query().Get("error") != "invalid_target" {
		t.Errorf("Login with an unknown resource: %s, want error=invalid_target", back)
	}
}
