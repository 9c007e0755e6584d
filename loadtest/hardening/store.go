package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
)

// object is what the store should hold under a key.
type object struct {
	size     int64
	sha      string
	baseline bool // stored by the harness before any hostile input
}

// inventory is the store's expected contents per namespace: the baseline
// objects and every object a success answer named. With per-principal
// tenancy each principal is its own namespace; otherwise all share one.
type inventory struct {
	tenancy bool
	mu      sync.Mutex
	want    map[string]map[string]object
}

func newInventory(tenancy bool) *inventory {
	return &inventory{tenancy: tenancy, want: map[string]map[string]object{}}
}

// ns is the namespace principal's objects live in; its value is also the
// principal whose key lists it.
func (inv *inventory) ns(principal string) string {
	if inv.tenancy && principal != "" {
		return principal
	}
	return "alice"
}

// expect records what key should hold. A baseline object keeps its
// expectation unless the harness itself stores it again (o.baseline): an
// answer naming it (stat_blob) or a hostile write must not redefine it.
func (inv *inventory) expect(principal, key string, o object) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	ns := inv.ns(principal)
	if inv.want[ns] == nil {
		inv.want[ns] = map[string]object{}
	}
	if old, ok := inv.want[ns][key]; ok && old.baseline && !o.baseline {
		return
	}
	inv.want[ns][key] = o
}

// spaces are the namespaces the inventory holds objects for.
func (inv *inventory) spaces() []string {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return slices.Collect(maps.Keys(inv.want))
}

func (inv *inventory) Forget(principal, key string) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	delete(inv.want[inv.ns(principal)], key)
}

// NoteStored records the objects a success answer names: every JSON
// object in it with a string key, a 64-hex sha256 and a size (the blob
// object of /v1 and /u, structuredContent of upload_file).
func (inv *inventory) NoteStored(principal string, a *wire.Answer) {
	msg, err := mcpc.Message(a.ContentType(), a.Body)
	if err != nil {
		return
	}
	var v any
	if json.Unmarshal(msg, &v) != nil {
		return
	}
	wire.WalkJSON(v, func(m map[string]any) {
		key, _ := m["key"].(string)
		sum, _ := m["sha256"].(string)
		size, ok := m["size"].(float64)
		if key != "" && len(sum) == 64 && ok {
			inv.expect(principal, key, object{size: int64(size), sha: sum})
		}
	})
}

// listed is one item of GET /v1/blobs.
type listed struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// listAll lists every object principal sees through the control API.
func (r *runner) listAll(ctx context.Context, principal string) (map[string]listed, error) {
	out := map[string]listed{}
	cursor := ""
	for page := 0; page < 50; page++ {
		q := "/v1/blobs?limit=1000"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		a := wire.Do(r.e.HTTP, r.e.Request(ctx, http.MethodGet, q, principal, nil))
		var r struct {
			Items      []listed `json:"items"`
			NextCursor string   `json:"nextCursor"`
		}
		if a.Status != http.StatusOK || json.Unmarshal(a.Body, &r) != nil {
			return out, fmt.Errorf("listing the store failed: %s", a)
		}
		for _, it := range r.Items {
			out[it.Key] = it
		}
		if cursor = r.NextCursor; cursor == "" {
			return out, nil
		}
	}
	return out, fmt.Errorf("listing the store: more than 50 pages")
}

// storeReport is what one store check found.
type storeReport struct {
	lost, half []string
	missing    []string // stored with a success answer, not listed (see explainMissing)
	err        error
}

// checkStore compares the listing with the inventory: an expected object
// missing or changed is lost (a baseline one) or half-written (one a
// success answer named with another size or sha256); an object no success
// answer named is half-written or stored despite an error. Each finding
// is reported once: the inventory is then aligned with the store.
func (r *runner) checkStore(ctx context.Context) storeReport {
	var rep storeReport
	spaces := r.inv.spaces()
	for _, ns := range spaces {
		got, err := r.listAll(ctx, ns)
		if err != nil {
			rep.err = err
			return rep
		}
		r.compare(ns, got, &rep)
		r.explainMissing(ctx, ns, &rep)
	}
	for _, ns := range spaces {
		r.checkBaselineBytes(ctx, ns, &rep)
	}
	return rep
}

func (r *runner) compare(ns string, got map[string]listed, rep *storeReport) {
	r.inv.mu.Lock()
	defer r.inv.mu.Unlock()
	want := r.inv.want[ns]
	for key, o := range want {
		l, ok := got[key]
		switch {
		case !ok && o.baseline:
			rep.lost = append(rep.lost, fmt.Sprintf("baseline object %q is gone", key))
		case !ok:
			rep.missing = append(rep.missing, key)
		case l.Size != o.size || !strings.EqualFold(l.SHA256, o.sha):
			what := &rep.half
			if o.baseline {
				what = &rep.lost
			}
			*what = append(*what, fmt.Sprintf("object %q is listed with size %d sha256 %.12s…, want %d %.12s…", key, l.Size, l.SHA256, o.size, o.sha))
		}
		if !ok {
			delete(want, key)
		} else {
			want[key] = object{size: l.Size, sha: l.SHA256, baseline: o.baseline}
		}
	}
	for key, l := range got {
		if _, ok := want[key]; !ok {
			rep.half = append(rep.half, fmt.Sprintf("object %q (%d bytes) is in the store though no success answer named it", key, l.Size))
			want[key] = object{size: l.Size, sha: l.SHA256}
		}
	}
}

// explainMissing reads each object that a success answer named but the
// listing lacks: gone (lost), or there but not listed (half-written: the
// store and its listing disagree).
func (r *runner) explainMissing(ctx context.Context, ns string, rep *storeReport) {
	for _, key := range rep.missing {
		if _, n, err := r.readSHA(ctx, ns, key); err == nil {
			rep.half = append(rep.half, fmt.Sprintf("object %q, stored with a success answer, reads back (%d bytes) but is missing from the listing", key, n))
		} else {
			rep.lost = append(rep.lost, fmt.Sprintf("object %q, stored with a success answer, is gone (%v)", key, err))
		}
	}
	rep.missing = nil
}

// checkBaselineBytes reads the baseline objects back and compares their
// bytes with what the harness stored.
func (r *runner) checkBaselineBytes(ctx context.Context, ns string, rep *storeReport) {
	r.inv.mu.Lock()
	baseline := map[string]object{}
	for k, o := range r.inv.want[ns] {
		if o.baseline {
			baseline[k] = o
		}
	}
	r.inv.mu.Unlock()
	for k, o := range baseline {
		if sum, n, err := r.readSHA(ctx, ns, k); err != nil || sum != o.sha || n != o.size {
			rep.lost = append(rep.lost, fmt.Sprintf("baseline object %q reads back wrong (%d bytes, sha256 %.12s…, %v)", k, n, sum, err))
		}
	}
}

// readSHA reads key through GET /v1/blobs as principal and hashes it.
func (r *runner) readSHA(ctx context.Context, principal, key string) (string, int64, error) {
	resp, err := r.e.HTTP.Do(r.e.Request(ctx, http.MethodGet, "/v1/blobs/"+hostile.EscapeKey(key), principal, nil))
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// verifyAll reads every listed object (up to limit) and compares its bytes
// with its listed sha256: a mismatch is a half-written object.
func (r *runner) verifyAll(ctx context.Context, limit int) []string {
	var bad []string
	for _, ns := range r.inv.spaces() {
		got, err := r.listAll(ctx, ns)
		if err != nil {
			return append(bad, err.Error())
		}
		for key, l := range got {
			if limit--; limit < 0 || ctx.Err() != nil {
				return bad
			}
			sum, n, err := r.readSHA(ctx, ns, key)
			if err != nil || n != l.Size || !strings.EqualFold(sum, l.SHA256) {
				bad = append(bad, fmt.Sprintf("object %q reads back as %d bytes sha256 %.12s… (%v); listed %d %.12s…", key, n, sum, err, l.Size, l.SHA256))
			}
		}
	}
	return bad
}
