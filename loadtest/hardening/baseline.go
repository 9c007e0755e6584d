package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// seedStore stores the baseline objects for every namespace.
func (r *runner) seedStore(ctx context.Context) error {
	owners := []string{"alice"}
	if r.inv.tenancy {
		owners = principals
	}
	text := make([]byte, hostile.BaseSize)
	for i := range text {
		text[i] = "abcdefghijklmnopqrstuvwxyz0123456789 \n"[i%38]
	}
	bin := make([]byte, 4096)
	for i := range bin {
		bin[i] = byte(r.e.Intn(256))
	}
	for _, p := range owners {
		for _, o := range []struct {
			key, ctype string
			data       []byte
		}{{hostile.BaseText, "text/plain", text}, {hostile.BaseBin, "application/octet-stream", bin}} {
			if err := r.putBaseline(ctx, p, o.key, o.ctype, o.data); err != nil {
				return err
			}
		}
	}
	return r.putBaseline(ctx, "alice", hostile.BaseAlice, "text/plain", text[:100])
}

func (r *runner) putBaseline(ctx context.Context, principal, key, ctype string, data []byte) error {
	sum := sha256.Sum256(data)
	req := r.e.Request(ctx, http.MethodPut, "/v1/blobs/"+key, principal, data)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("x-mcp-sha256", hex.EncodeToString(sum[:]))
	if a := wire.Do(r.e.HTTP, req); a.Status != http.StatusCreated {
		return fmt.Errorf("storing baseline %s: %s", key, a)
	}
	r.inv.expect(principal, key, object{size: int64(len(data)), sha: hex.EncodeToString(sum[:]), baseline: true})
	return nil
}

// healthy sends two normal requests (a GET of a baseline object and a
// 2026-07-28 tools/list) and returns what went wrong, or "".
func (r *runner) healthy(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if a := wire.Do(r.e.HTTP, r.e.Request(ctx, http.MethodGet, "/v1/blobs/"+hostile.BaseText, "alice", nil)); a.Status != http.StatusOK || len(a.Body) != hostile.BaseSize {
		return "GET /v1/blobs/" + hostile.BaseText + ": " + a.String()
	}
	a := wire.Do(r.e.HTTP, r.e.ModernReq(ctx, "alice", "tools/list", "", hostile.RPC("tools/list", hostile.WithMeta(nil, nil))))
	var list struct {
		Result *struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if a.Status != http.StatusOK || json.Unmarshal(a.Body, &list) != nil || list.Result == nil || len(list.Result.Tools) == 0 {
		return "2026-07-28 tools/list: " + a.String()
	}
	return ""
}
