package server

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

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
	if testing.Short() {
		t.Skip("spawns a traced child process")
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed (make tools installs it): cannot observe sendfile")
	}
	logf := t.TempDir() + "/strace.log"
	cmd := exec.Command(strace, "-f", "-qq", "-e", "trace=sendfile", "-o", logf,
		os.Args[0], "-test.run=^TestGatewaySendfileChild$", "-test.v")
	cmd.Env = append(os.Environ(), gatewaySendfileChildEnv+"="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	}()
	sc := bufio.NewScanner(stdout)
	var base string
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "BASE "); ok {
			base = a
			break
		}
	}
	if base == "" {
		t.Fatal("the child printed no address")
	}
	go io.Copy(io.Discard, stdout)

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
	stdin.Close()
	cmd.Wait()

	log, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(2*gatewaySendfileSize - 1000)
	if moved := sendfileMoved(string(log)); moved < want {
		t.Fatalf("sendfile moved %d bytes of the cache hits, want at least %d; strace log:\n%s", moved, want, tail(string(log), 2000))
	}
}

// sendfileMoved sums the bytes the sendfile calls of an strace log moved.
func sendfileMoved(log string) int64 {
	var moved int64
	for line := range strings.SplitSeq(log, "\n") {
		if !sendfileRE.MatchString(line) || strings.HasSuffix(line, "<unfinished ...>") {
			continue
		}
		if m := retRE.FindAllStringSubmatch(line, -1); m != nil {
			if n, _ := strconv.ParseInt(m[len(m)-1][1], 10, 64); n > 0 {
				moved += n
			}
		}
	}
	return moved
}
