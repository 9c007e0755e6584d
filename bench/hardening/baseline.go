package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Baseline objects: stored before any hostile input and read back after
// every batch. Range inputs use baseText (1,000 bytes).
const (
	baseText = "hard/base/text.txt"
	baseBin  = "hard/base/blob.bin"
	baseSize = 1000
)

// seedStore stores the baseline objects for every namespace.
func (e *env) seedStore(ctx context.Context) error {
	owners := []string{"alice"}
	if e.feats.tenancy {
		owners = principals
	}
	text := make([]byte, baseSize)
	for i := range text {
		text[i] = "abcdefghijklmnopqrstuvwxyz0123456789 \n"[i%38]
	}
	bin := make([]byte, 4096)
	for i := range bin {
		bin[i] = byte(e.intn(256))
	}
	for _, p := range owners {
		for _, o := range []struct {
			key, ctype string
			data       []byte
		}{{baseText, "text/plain", text}, {baseBin, "application/octet-stream", bin}} {
			if err := e.putBaseline(ctx, p, o.key, o.ctype, o.data); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *env) putBaseline(ctx context.Context, principal, key, ctype string, data []byte) error {
	sum := sha256.Sum256(data)
	req := e.request(ctx, http.MethodPut, "/v1/blobs/"+key, principal, data)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("x-mcp-sha256", hex.EncodeToString(sum[:]))
	if a := do(e.hc, req); a.status != http.StatusCreated {
		return fmt.Errorf("storing baseline %s: %s", key, a)
	}
	e.inv.expect(principal, key, object{size: int64(len(data)), sha: hex.EncodeToString(sum[:]), baseline: true})
	return nil
}

// healthy sends two normal requests (a GET of a baseline object and a
// 2026-07-28 tools/list) and returns what went wrong, or "".
func (e *env) healthy(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if a := do(e.hc, e.request(ctx, http.MethodGet, "/v1/blobs/"+baseText, "alice", nil)); a.status != http.StatusOK || len(a.body) != baseSize {
		return "GET /v1/blobs/" + baseText + ": " + a.String()
	}
	a := do(e.hc, e.modernReq(ctx, "alice", "tools/list", "", rpc("tools/list", modern(nil, nil))))
	var r struct {
		Result *struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if a.status != http.StatusOK || json.Unmarshal(a.body, &r) != nil || r.Result == nil || len(r.Result.Tools) == 0 {
		return "2026-07-28 tools/list: " + a.String()
	}
	return ""
}
