package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Metadata is the part of the authorization server's metadata (RFC 8414,
// OpenID Connect Discovery) that a resource server needs or advertises.
type Metadata struct {
	Issuer                string
	AuthorizationEndpoint string
	TokenEndpoint         string
	JWKSURI               string
	RegistrationEndpoint  string
	ScopesSupported       []string
	// CodeChallengeMethods is code_challenge_methods_supported.
	CodeChallengeMethods []string
	// SigningAlgs is the JWS algorithm allow-list Verify enforces for
	// access tokens (not an AS metadata field: RFC 8414 has none for
	// access tokens; see the package documentation).
	SigningAlgs []string
}

// rawMetadata is the wire form of the fields [Metadata] keeps.
type rawMetadata struct {
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	TokenEndpoint         string   `json:"token_endpoint"`
	JWKSURI               string   `json:"jwks_uri"`
	RegistrationEndpoint  string   `json:"registration_endpoint"`
	ScopesSupported       []string `json:"scopes_supported"`
	CodeChallengeMethods  []string `json:"code_challenge_methods_supported"`
}

// discoveryURLs lists the metadata locations to try for issuer, in order:
// RFC 8414 path insertion, OIDC path insertion, OIDC appended (the last only
// when the issuer has a path, where it differs from the second).
func discoveryURLs(issuer *url.URL) []string {
	path := strings.TrimSuffix(issuer.EscapedPath(), "/")
	base := issuer.Scheme + "://" + issuer.Host
	urls := []string{
		base + "/.well-known/oauth-authorization-server" + path,
		base + "/.well-known/openid-configuration" + path,
	}
	if path != "" {
		urls = append(urls, base+path+"/.well-known/openid-configuration")
	}
	return urls
}

// discover fetches the metadata from the first location that serves a valid
// document for issuer. The error names every location tried and why it failed.
func discover(ctx context.Context, c *http.Client, issuer string, u *url.URL) (rawMetadata, string, error) {
	var errs []error
	for _, loc := range discoveryURLs(u) {
		var m rawMetadata
		_, err := getJSON(ctx, c, loc, &m)
		if err == nil {
			err = m.check(issuer)
		}
		if err == nil {
			return m, loc, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", loc, err))
	}
	return rawMetadata{}, "", fmt.Errorf("oauth: discover metadata for issuer %q: %w", issuer, errors.Join(errs...))
}

// check applies RFC 8414 §3.3 (issuer identical) and requires an https
// jwks_uri (loopback exempt).
func (m *rawMetadata) check(issuer string) error {
	if m.Issuer != issuer {
		return fmt.Errorf("metadata issuer %q does not equal the configured issuer", m.Issuer)
	}
	if m.JWKSURI == "" {
		return errors.New("metadata has no jwks_uri")
	}
	u, err := url.Parse(m.JWKSURI)
	if err != nil {
		return fmt.Errorf("jwks_uri: %w", err)
	}
	if err := checkSecure(u); err != nil {
		return fmt.Errorf("jwks_uri: %w", err)
	}
	return nil
}

// getJSON GETs loc and decodes a 200 response of at most maxBody bytes into
// dst, returning the response header.
func getJSON(ctx context.Context, c *http.Client, loc string, dst any) (http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultHTTPTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("body larger than %d bytes", maxBody)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	return resp.Header, nil
}
