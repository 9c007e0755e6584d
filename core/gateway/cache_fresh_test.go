package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// freshUpstream serves x:big (freshSize bytes of the pattern) by
// resources/read, with the result members and content members its test
// sets (ttlMs, annotations, _meta), and lists it in resources/list with
// the same annotations; it counts the gateway's own reads (id 1).
type freshUpstream struct {
	*httptest.Server
	reads atomic.Int32
	mu    sync.Mutex
	// result holds extra members of the read result ("" or `"ttlMs":0,`),
	// content extra members of the content and of the listed resource.
	result, content string
}

const freshSize = 64 << 10

func newFreshUpstream(t *testing.T, result, content string) *freshUpstream {
	u := &freshUpstream{result: result, content: content}
	blob := base64.StdEncoding.EncodeToString(pattern(freshSize))
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &m)
		u.mu.Lock()
		result, content := u.result, u.content
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "resources/read":
			if string(m.ID) == "1" {
				u.reads.Add(1)
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{%s"contents":[{"uri":"x:big",%s"blob":"%s"}]}}`, m.ID, result, content, blob)
		case "resources/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resources":[{"uri":"x:big","name":"big",%s"size":%d}]}}`, m.ID, content, freshSize)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		}
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *freshUpstream) set(result, content string) {
	u.mu.Lock()
	u.result, u.content = result, content
	u.mu.Unlock()
}

// modernLinkFor asks the gateway for principal's downloadUrl of x:big in
// 2026-07-28.
func modernLinkFor(t *testing.T, gw, principal string) string {
	_, b := post(t, gw, map[string]string{"X-Principal": principal, "Mcp-Method": "resources/stream"},
		`{"jsonrpc":"2.0","id":9,"method":"resources/stream","params":{"uri":"x:big","_meta":{`+
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"resourceStreaming":{}}}}}`)
	return downloadURL(t, b, gw)
}

// downloads downloads x:big n times as principal, checking the bytes.
func downloads(t *testing.T, gw, principal string, n int) {
	t.Helper()
	for range n {
		if resp, b, err := fetch(t, linkFor(t, gw, principal), nil); err != nil || !bytes.Equal(b, pattern(freshSize)) {
			t.Fatalf("download: %d, %d bytes (%v), not the resource", resp.StatusCode, len(b), err)
		}
	}
}

// TestStreamCacheTTLMs: in 2026-07-28 an entry lives min(ttlMs,
// --stream-cache-ttl) and ttlMs 0 stores nothing; without ttlMs, or in
// 2025-11-25 (where go-sdk sends "ttlMs":0 all the same), the TTL alone
// counts.
func TestStreamCacheTTLMs(t *testing.T) {
	for _, tc := range []struct {
		name, result string
		modern       bool
		ttl, wait    time.Duration
		reads        int32
		entries      int
	}{
		{"ttlMs 0", `"resultType":"complete","ttlMs":0,"cacheScope":"private",`, true, time.Hour, 0, 2, 0},
		{"ttlMs shorter", `"ttlMs":20,`, true, time.Hour, 100 * time.Millisecond, 2, 1},
		{"ttlMs longer than the TTL", `"ttlMs":3600000,`, true, time.Millisecond, 100 * time.Millisecond, 2, 1},
		{"ttlMs within", `"ttlMs":3600000,"cacheScope":"public",`, true, time.Hour, 100 * time.Millisecond, 1, 1},
		{"no ttlMs", ``, true, time.Hour, 100 * time.Millisecond, 1, 1},
		{"ttlMs 0 in 2025-11-25", `"ttlMs":0,"cacheScope":"public",`, false, time.Hour, 0, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up, dc := newFreshUpstream(t, tc.result, ""), newDiskCache(t)
			gw := cachedGateway(t, up.URL, dc, tc.ttl)
			download := func() {
				t.Helper()
				link := linkFor(t, gw, "alice")
				if tc.modern {
					link = modernLinkFor(t, gw, "alice")
				}
				if resp, b, err := fetch(t, link, nil); err != nil || !bytes.Equal(b, pattern(freshSize)) {
					t.Fatalf("download: %d, %d bytes (%v), not the resource", resp.StatusCode, len(b), err)
				}
			}
			download()
			if n := dc.entries(t); n != tc.entries {
				t.Errorf("after the first download: %d entries, want %d", n, tc.entries)
			}
			time.Sleep(tc.wait)
			download()
			if n := up.reads.Load(); n != tc.reads {
				t.Errorf("the upstream answered %d reads, want %d", n, tc.reads)
			}
		})
	}
}

// TestStreamCacheVersion: an entry stored with a version (annotations.
// lastModified, else _meta) is dropped once a relayed resources/list or
// resources/read shows its principal another version; the same version,
// or another principal's, keeps it.
func TestStreamCacheVersion(t *testing.T) {
	for _, tc := range []struct {
		name, v1, v2, relay string
	}{
		{"lastModified by resources/list", `"annotations":{"lastModified":"2026-11-27T08:00:00Z"},`,
			`"annotations":{"lastModified":"2026-11-27T09:00:00Z"},`, "resources/list"},
		{"lastModified by resources/read", `"annotations":{"lastModified":"2026-11-27T08:00:00Z"},`,
			`"annotations":{"lastModified":"2026-11-27T09:00:00Z"},`, "resources/read"},
		{"_meta by resources/read", `"_meta":{"rev":1},`, `"_meta":{"rev":2},`, "resources/read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up, dc := newFreshUpstream(t, "", tc.v1), newDiskCache(t)
			gw := cachedGateway(t, up.URL, dc, time.Hour)
			relay := func(principal string) {
				t.Helper()
				_, b := post(t, gw, map[string]string{"Mcp-Session-Id": "s", "X-Principal": principal},
					`{"jsonrpc":"2.0","id":7,"method":"`+tc.relay+`","params":{"uri":"x:big"}}`)
				if !bytes.Contains(b, []byte(`"x:big"`)) {
					t.Fatalf("%s was not relayed: %.200s", tc.relay, b)
				}
			}
			downloads(t, gw, "alice", 1)
			relay("alice") // the same version
			downloads(t, gw, "alice", 1)
			if n := up.reads.Load(); n != 1 {
				t.Fatalf("same version: %d reads, want 1", n)
			}
			up.set("", tc.v2)
			relay("bob") // another principal's view
			downloads(t, gw, "alice", 1)
			if n := up.reads.Load(); n != 1 {
				t.Fatalf("bob saw a new version: alice's download made %d reads, want 1", n)
			}
			relay("alice")
			downloads(t, gw, "alice", 2)
			if n := up.reads.Load(); n != 2 {
				t.Errorf("alice saw a new version: %d reads, want 2 (one upstream, then the new entry)", n)
			}
		})
	}
}
