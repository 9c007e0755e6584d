package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
)

// p6OAuthScope is what the bench principal's token grants: the read
// needs blobs:read, seeding the blob blobs:write.
const p6OAuthScope = "blobs:read blobs:write"

// startOAuth serves the blob again with `--oauth-issuer`, in front of the
// test authorization server (cmd/mcpblob-testas, a real one: JWKS,
// discovery, signed JWTs), and reads it with a bearer access token the AS
// minted for the bench principal. The AS runs unpinned: mcpblob fetches
// its keys once and then verifies every request on its own core, which is
// what the row measures (the verifier's cache makes a bearer nearly free,
// or it does not).
func (g *p6Rig) startOAuth(ctx context.Context, bins map[string]string, blob readSize) error {
	asAddr, err := proc.FreeAddr()
	if err != nil {
		return err
	}
	addr, err := proc.FreeAddr()
	if err != nil {
		return err
	}
	issuer, resource := "http://"+asAddr, "http://"+addr+"/mcp"
	as, err := proc.Start("mcpblob-testas", issuer+"/.well-known/oauth-authorization-server", bins["testas"],
		[]string{"-listen", asAddr, "-resource", resource})
	if err != nil {
		return err
	}
	g.procs = append(g.procs, as)
	token, err := mintToken(ctx, issuer, "bench", p6OAuthScope)
	if err != nil {
		return err
	}
	p, base, err := startPinnedAt(g.dir, p6ServerCPU, "mcpblob-oauth", bins["mcpblob"], addr, nil,
		"serve", "--data", filepath.Join(g.dir, "data-oauth"), "--oauth-issuer", issuer)
	if err != nil {
		return err
	}
	g.procs = append(g.procs, p)
	return g.bearerRead(ctx, p6RowOAuth, &system{name: "mcpblob (OAuth)", proc: p, base: base}, token, blob)
}

// mintToken asks the test AS (POST /test/mint) for an access token of sub
// with scope, for its default audience, valid for its token lifetime (an
// hour: longer than P6 runs).
func mintToken(ctx context.Context, issuer, sub, scope string) (string, error) {
	body, _ := json.Marshal(map[string]string{"sub": sub, "scope": scope})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, issuer+"/test/mint", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := plainHTTP.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || out.AccessToken == "" {
		return "", fmt.Errorf("mint a token: http %d, %v", resp.StatusCode, err)
	}
	return out.AccessToken, nil
}
