package oauth

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	rfc8414   = "/.well-known/oauth-authorization-server"
	oidc      = "/.well-known/openid-configuration"
	jwksPath  = "/jwks"
	noNetwork = "http://as.example" // refused before any I/O
)

func TestDiscoveryOrder(t *testing.T) {
	keys(t)
	for _, tc := range []struct {
		name, issuerPath string
		serve            []string // paths serving metadata
		want             []string // paths requested, in order
	}{
		{"path RFC 8414", "/tenant1", []string{rfc8414 + "/tenant1"},
			[]string{rfc8414 + "/tenant1", jwksPath}},
		{"path OIDC inserted", "/tenant1", []string{oidc + "/tenant1"},
			[]string{rfc8414 + "/tenant1", oidc + "/tenant1", jwksPath}},
		{"path OIDC appended", "/tenant1", []string{"/tenant1" + oidc},
			[]string{rfc8414 + "/tenant1", oidc + "/tenant1", "/tenant1" + oidc, jwksPath}},
		{"path trailing slash", "/tenant1/", []string{rfc8414 + "/tenant1"},
			[]string{rfc8414 + "/tenant1", jwksPath}},
		{"deep path", "/a/b", []string{"/a/b" + oidc},
			[]string{rfc8414 + "/a/b", oidc + "/a/b", "/a/b" + oidc, jwksPath}},
		{"no path RFC 8414", "", []string{rfc8414}, []string{rfc8414, jwksPath}},
		{"no path OIDC", "", []string{oidc}, []string{rfc8414, oidc, jwksPath}},
		{"slash only OIDC", "/", []string{oidc}, []string{rfc8414, oidc, jwksPath}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := newFakeAS(t, tc.issuerPath, keyRSA.jwk(true))
			as.set(func(as *fakeAS) { as.metaPaths = tc.serve })
			v := verifier(t, as, &clock{t: epoch}, nil)
			if got := as.paths(); !slices.Equal(got, tc.want) {
				t.Fatalf("requests = %q, want %q", got, tc.want)
			}
			if v.Metadata().Issuer != as.issuer() {
				t.Fatalf("Metadata().Issuer = %q", v.Metadata().Issuer)
			}
		})
	}
}

// newErr runs New against as after f changed it and returns the error.
func newErr(t *testing.T, as *fakeAS, f func(as *fakeAS)) error {
	t.Helper()
	as.set(f)
	_, err := New(context.Background(), Config{Issuer: as.issuer(), Audience: testAudience})
	if err == nil {
		t.Fatal("New succeeded")
	}
	return err
}

func TestDiscoveryFailures(t *testing.T) {
	keys(t)
	big := `{"issuer":"` + strings.Repeat("x", maxBody) + `"}`
	var many []string
	for i := range maxKeys + 1 {
		many = append(many, fmt.Sprintf(`{"kty":"OKP","crv":"Ed25519","kid":"k%d","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}`, i))
	}
	for _, tc := range []struct {
		name string
		f    func(as *fakeAS)
		want []string // substrings of the error
	}{
		{"nothing served", func(as *fakeAS) { as.metaPaths = nil },
			[]string{rfc8414 + "/t", oidc + "/t", "/t" + oidc, "HTTP status 404"}},
		{"issuer mismatch", func(as *fakeAS) { as.metaIssuer = as.srv.URL + "/other" },
			[]string{"does not equal the configured issuer"}},
		{"issuer trailing slash", func(as *fakeAS) { as.metaIssuer = as.issuer() + "/" },
			[]string{"does not equal the configured issuer"}},
		{"jwks_uri http", func(as *fakeAS) { as.jwksURI = "http://jwks.example/keys" },
			[]string{"jwks_uri", "not https"}},
		{"no jwks_uri", func(as *fakeAS) { as.override[rfc8414+"/t"] = `{"issuer":"` + as.issuer() + `"}` },
			[]string{"no jwks_uri"}},
		{"metadata not JSON", func(as *fakeAS) { as.override[rfc8414+"/t"] = `<html>` },
			[]string{"decode JSON"}},
		{"metadata too large", func(as *fakeAS) { as.override[rfc8414+"/t"] = big },
			[]string{"body larger than"}},
		{"redirect to http", func(as *fakeAS) { as.redirect[rfc8414+"/t"] = "http://as.example/meta" },
			[]string{"redirect refused"}},
		{"jwks 404", func(as *fakeAS) { as.redirect[jwksPath] = "/missing" },
			[]string{"fetch jwks", "HTTP status 404"}},
		{"jwks not JSON", func(as *fakeAS) { as.override[jwksPath] = "{" },
			[]string{"fetch jwks", "decode JSON"}},
		{"jwks too many keys", func(as *fakeAS) { as.override[jwksPath] = `{"keys":[` + strings.Join(many, ",") + `]}` },
			[]string{"101 keys"}},
		{"jwks only encryption keys", func(as *fakeAS) {
			k := keyRSA.jwk(false)
			k["use"] = "enc"
			as.jwks = map[string]any{"keys": []any{k}}
		}, []string{"no usable signing key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := newFakeAS(t, "/t", keyRSA.jwk(true))
			err := newErr(t, as, tc.f)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestRedirectWithinLoopback(t *testing.T) {
	keys(t)
	as := newFakeAS(t, "", keyRSA.jwk(true))
	as.set(func(as *fakeAS) {
		as.redirect[rfc8414] = "/moved"
		as.metaPaths = []string{"/moved"}
	})
	verifier(t, as, &clock{t: epoch}, nil)
}

func TestMetadata(t *testing.T) {
	keys(t)
	as := newFakeAS(t, "/t", keyRSA.jwk(true))
	v := verifier(t, as, &clock{t: epoch}, func(c *Config) { c.Algorithms = []string{"ES256", "RS256", "ES256"} })
	m := v.Metadata()
	if m.TokenEndpoint != as.srv.URL+"/token" || m.AuthorizationEndpoint != as.srv.URL+"/authorize" ||
		m.RegistrationEndpoint != as.srv.URL+"/register" || m.JWKSURI != as.srv.URL+"/jwks" ||
		!slices.Equal(m.ScopesSupported, []string{"blob:read", "blob:write"}) ||
		!slices.Equal(m.CodeChallengeMethods, []string{"S256"}) ||
		!slices.Equal(m.SigningAlgs, []string{"ES256", "RS256"}) {
		t.Fatalf("Metadata() = %+v", m)
	}
	m.ScopesSupported[0] = "changed"
	if v.Metadata().ScopesSupported[0] != "blob:read" {
		t.Fatal("Metadata() shares its slices")
	}
}

func TestParseIssuer(t *testing.T) {
	for _, tc := range []struct {
		issuer string
		ok     bool
	}{
		{"https://as.example", true},
		{"https://as.example/tenant1", true},
		{"https://as.example:8443/a/b/", true},
		{"http://as.example", false},
		{"http://as.example.", false},
		{"http://127.0.0.1:8080", true},
		{"http://127.1.2.3", true},
		{"http://[::1]:9000/x", true},
		{"http://[::ffff:127.0.0.1]", true},
		{"http://localhost", true},
		{"http://LocalHost:1234", true},
		{"http://localhost.evil.example", false},
		{"http://127.0.0.1.nip.io", false},
		{"http://10.0.0.1", false},
		{"http://[::2]", false},
		{"ftp://as.example", false},
		{"https://as.example?x=1", false},
		{"https://as.example/?", false},
		{"https://as.example#frag", false},
		{"https://user:pw@as.example", false},
		{"as.example", false},
		{"https:as.example", false},
		{"", false},
		{"https://", false},
	} {
		_, err := parseIssuer(tc.issuer)
		if (err == nil) != tc.ok {
			t.Errorf("parseIssuer(%q) = %v, want ok=%v", tc.issuer, err, tc.ok)
		}
	}
}

func TestConfigRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"http issuer", Config{Issuer: noNetwork, Audience: testAudience}, "not https"},
		{"no audience", Config{Issuer: "https://as.example"}, "Audience is required"},
		{"leeway too large", Config{Issuer: "https://as.example", Audience: "a", Leeway: 6 * time.Minute}, "Leeway"},
		{"leeway negative", Config{Issuer: "https://as.example", Audience: "a", Leeway: -time.Second}, "Leeway"},
		{"max age below min refresh", Config{Issuer: "https://as.example", Audience: "a", MaxAge: time.Second}, "MaxAge"},
		{"negative min refresh", Config{Issuer: "https://as.example", Audience: "a", MinRefresh: -1}, "negative"},
		{"HS256", Config{Issuer: "https://as.example", Audience: "a", Algorithms: []string{"RS256", "HS256"}}, `"HS256"`},
		{"none", Config{Issuer: "https://as.example", Audience: "a", Algorithms: []string{"none"}}, `"none"`},
		{"quote in tenant claim", Config{Issuer: "https://as.example", Audience: "a", TenantClaim: `a"b`}, "TenantClaim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want error containing %q", err, tc.want)
			}
		})
	}
}
