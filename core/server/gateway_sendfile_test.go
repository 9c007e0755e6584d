package server

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/gateway"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

// gatewaySendfileChildEnv names the local store folder the child process
// of TestGatewayCacheHitSendfile keeps its stream cache in.
const gatewaySendfileChildEnv = "MCPBLOB_GATEWAY_SENDFILE_CHILD_DIR"

// gatewaySendfileSize is the blob TestGatewayCacheHitSendfile downloads.
const gatewaySendfileSize = 8 << 20

// TestGatewaySendfileChild is the server half of
// TestGatewayCacheHitSendfile: a gateway with the stream cache on the
// local store in front of an upstream of its own; it runs only in the
// child process.
func TestGatewaySendfileChild(t *testing.T) {
	dir := os.Getenv(gatewaySendfileChildEnv)
	if dir == "" {
		t.Skip("helper process for TestGatewayCacheHitSendfile")
	}
	be, err := localfs.Open(dir, localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	answer := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"x:img","mimeType":"image/png","blob":"%s"}]}}`,
		base64.StdEncoding.EncodeToString(offloadImage(gatewaySendfileSize)))
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
	defer up.Close()
	base, _ := startTestServer(t, Options{Backend: be, Auth: Auth{Keys: []string{HashKey("alice-key") + " alice"}},
		Gateway: gateway.Options{Upstream: up.URL + "/mcp", Cache: gateway.CacheOptions{On: true}}})
	fmt.Printf("BASE %s\n", base)
	io.Copy(io.Discard, os.Stdin) // the parent closes stdin when done
}

// TestGatewayCacheHitSendfile runs a gateway with the stream cache in a
// child process under `strace -f -e trace=sendfile` and checks that a
// download served from the cache, whole and with a Range, moved its bytes
// through sendfile(2), not through user space (G2's cache hit against
// nginx sendfile).
func TestGatewayCacheHitSendfile(t *testing.T) {
	parallel(t)
	base, finish := tracedChild(t, "TestGatewaySendfileChild", gatewaySendfileChildEnv+"="+t.TempDir(), "BASE ")

	blob := offloadImage(gatewaySendfileSize)
	if resp, b := cacheGet(t, base, "alice-key", nil); resp.StatusCode != 200 || !bytes.Equal(b, blob) {
		t.Fatalf("the download that fills the cache: %d, %d bytes", resp.StatusCode, len(b))
	}
	if resp, b := cacheGet(t, base, "alice-key", nil); resp.StatusCode != 200 || !bytes.Equal(b, blob) || !strings.Contains(resp.Request.URL.Path, "/d/") {
		t.Fatalf("cache hit: %d, %d bytes from %s", resp.StatusCode, len(b), resp.Request.URL.Path)
	}
	if resp, b := cacheGet(t, base, "alice-key", map[string]string{"Range": "bytes=1000-"}); resp.StatusCode != 206 || !bytes.Equal(b, blob[1000:]) {
		t.Fatalf("cache hit with a Range: %d, %d bytes", resp.StatusCode, len(b))
	}
	log := finish()
	want := int64(2*gatewaySendfileSize - 1000)
	if _, moved := sendfileMoved(log); moved < want {
		t.Fatalf("sendfile moved %d bytes of the cache hits, want at least %d; strace log:\n%s", moved, want, tail(log, 2000))
	}
}
