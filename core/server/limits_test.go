package server

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestUploadSlots(t *testing.T) {
	parallel(t)
	u := uploadSlots{max: 3, perMax: 2}
	a1, _ := u.acquire("a")
	a2, _ := u.acquire("a")
	if _, st := u.acquire("a"); st != http.StatusTooManyRequests {
		t.Fatalf("third of a's: %d, want 429", st)
	}
	b1, _ := u.acquire("b")
	if _, st := u.acquire("c"); st != http.StatusServiceUnavailable {
		t.Fatalf("fourth in all: %d, want 503", st)
	}
	a1()
	a1() // twice is once
	if r, st := u.acquire("c"); r == nil {
		t.Fatalf("after a release: %d", st)
	}
	a2()
	b1()
	if u.n != 1 || len(u.per) != 1 {
		t.Fatalf("left: %d in all, %v", u.n, u.per)
	}
}

// loopbackPair returns both ends of a loopback TCP connection.
func loopbackPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// TestPaceReader: a body below the rate is cut off with a timeout soon
// after its grace; a steady one at twice the rate is not; time the server
// spends not reading is not charged to the client. Not parallel: its
// bounds are wall-clock times, kept clear of the package's other tests.
func TestPaceReader(t *testing.T) {
	newPace := func(conn net.Conn) *paceReader {
		return &paceReader{r: conn, conn: conn, perByte: time.Second / (64 << 10), bank: time.Second, budget: 300 * time.Millisecond}
	}
	t.Run("trickle", func(t *testing.T) {
		client, server := loopbackPair(t)
		go func() {
			for range 40 {
				if _, err := client.Write([]byte("x")); err != nil {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		p, start := newPace(server), time.Now()
		_, err := io.Copy(io.Discard, p)
		if !isTimeout(err) || !p.expired {
			t.Fatalf("trickle: %v, want a timeout", err)
		}
		if d := time.Since(start); d < 250*time.Millisecond || d > time.Second {
			t.Errorf("trickle cut off after %v, want about the 300 ms grace", d)
		}
	})
	t.Run("steady", func(t *testing.T) {
		client, server := loopbackPair(t)
		data := randomBytes(128 << 10)
		go func() {
			client.Write(bytes.Repeat([]byte("y"), 0))
			_, _ = io.Copy(client, &steadyBody{data: data, rate: 128 << 10})
			client.(*net.TCPConn).CloseWrite()
		}()
		got, err := io.ReadAll(newPace(server))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("steady: %v after %d bytes", err, len(got))
		}
	})
	t.Run("server pause", func(t *testing.T) {
		client, server := loopbackPair(t)
		client.Write(make([]byte, 100))
		p := newPace(server)
		time.Sleep(600 * time.Millisecond) // longer than the grace: not the client's fault
		if n, err := p.Read(make([]byte, 100)); n != 100 || err != nil {
			t.Fatalf("after the server's pause: %d, %v", n, err)
		}
		if _, err := p.Read(make([]byte, 1)); !isTimeout(err) {
			t.Fatalf("a client that sends nothing more: %v, want a timeout", err)
		}
	})
}

// holdUpload starts a PUT whose body does not come, so it holds an upload
// slot until the connection closes.
func holdUpload(t *testing.T, addr, key, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// More than the 8 KiB fasthttp reads ahead before the handler runs.
	io.WriteString(c, "PUT "+path+" HTTP/1.1\r\nHost: "+addr+"\r\nAuthorization: Bearer "+key+"\r\nContent-Length: 1000000\r\n\r\n"+strings.Repeat("x", 9<<10))
	return c
}

// uploadsInProgress reports whether srv counts n uploads holding a slot.
func uploadsInProgress(srv *Server, n int) func() bool {
	return func() bool {
		srv.uploads.mu.Lock()
		defer srv.uploads.mu.Unlock()
		return srv.uploads.n == n
	}
}

// TestUploadLimits: a principal's second upload in progress is refused
// with 429, another principal's beyond the global limit with 503; both with
// Retry-After and the surface's JSON error, on /v1, /u and /mcp.
func TestUploadLimits(t *testing.T) {
	parallel(t)
	ka, kb := "mcpb_a"+rand.Text(), "mcpb_b"+rand.Text()
	c := newBPClient(t, Options{Backend: newLocalStore(t), AuthKeys: []string{HashKey(ka) + " a", HashKey(kb) + " b"},
		MaxUploads: 2, MaxUploadsPerPrincipal: 1})
	addr := strings.TrimPrefix(c.base, "http://")
	holdUpload(t, addr, ka, "/v1/blobs/held/a")
	eventually(t, 5*time.Second, uploadsInProgress(c.srv, 1)) // the PUT has its slot
	check := func(what string, r httpResp, status int, code string) {
		t.Helper()
		if r.status != status || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), code) {
			t.Errorf("%s: %d Retry-After %q %s, want %d with %s", what, r.status, r.header.Get("Retry-After"), r.body, status, code)
		}
	}
	authA := map[string]string{"Authorization": "Bearer " + ka}
	check("a's second PUT", c.put("x", []byte("x"), authA), 429, `"too_many_uploads"`)
	r := c.do("POST", "/v1/uploads", strings.NewReader(`{"maxSize":1000,"ttlSeconds":60}`), authA)
	var up struct{ URL string }
	json.Unmarshal(r.body, &up)
	check("a's /u", c.do("PUT", up.URL, strings.NewReader("x"), nil), 429, `"too_many_uploads"`)
	big, _ := http.NewRequest("POST", c.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"`+strings.Repeat("z", 70<<10)+`"}}`))
	big.Header = http.Header{"Authorization": {"Bearer " + ka}, "Content-Type": {"application/json"}, "Accept": {"application/json"}}
	resp, body := sendRefused(t, big) // refused unread: the server hangs up under the write
	check("a's large MCP body", httpResp{resp.StatusCode, resp.Header, body}, 429, `"code":-32000`)
	// Small MCP bodies are no uploads.
	small := c.do("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), map[string]string{
		"Authorization": "Bearer " + ka, "Content-Type": "application/json", "Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"})
	if small.status == 429 || small.status == 503 {
		t.Errorf("a small MCP request was refused: %d %s", small.status, small.body)
	}
	holdUpload(t, addr, kb, "/v1/blobs/held/b")
	eventually(t, 5*time.Second, uploadsInProgress(c.srv, 2))
	check("beyond the global limit", c.put("y", []byte("y"), map[string]string{"Authorization": "Bearer " + kb}), 503, `"busy"`)
}

// TestConnLimits: one connection over MaxConns is answered 503, one over
// MaxConnsPerIP 429 with Retry-After, and closed; files still go out
// through the per-address wrapper.
func TestConnLimits(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		opts   Options
		status int
	}{{Options{MaxConns: 2}, 503}, {Options{MaxConnsPerIP: 2, Backend: newLocalStore(t)}, 429}} {
		c := newBPClient(t, tc.opts)
		addr := strings.TrimPrefix(c.base, "http://")
		held := []net.Conn{healthConn(t, addr, 200), healthConn(t, addr, 200)}
		over := healthConn(t, addr, tc.status)
		if _, err := over.Read(make([]byte, 1)); err == nil || isTimeout(err) { // EOF or a reset
			t.Errorf("%d: the connection over the limit was not closed: %v", tc.status, err)
		}
		for _, h := range held {
			h.Close()
		}
		if tc.opts.MaxConnsPerIP == 0 {
			continue
		}
		data := randomBytes(1 << 20)
		deadline := time.Now().Add(5 * time.Second)
		// Until the server has seen the closes: a PUT still over the limit
		// may be reset under its write, so it is tried, not required.
		for !putOnce(c, "/v1/blobs/big.bin", data) {
			if time.Now().After(deadline) {
				t.Fatal("the per-address count did not go down after the connections closed")
			}
			time.Sleep(10 * time.Millisecond)
		}
		if r := c.do("GET", "/v1/blobs/big.bin", nil, nil); r.status != 200 || !bytes.Equal(r.body, data) {
			t.Fatalf("GET through the per-address wrapper: %d, %d bytes", r.status, len(r.body))
		}
	}
}

// putOnce tries one PUT of data and reports whether it answered 201.
func putOnce(c *bpClient, path string, data []byte) bool {
	req, _ := http.NewRequest("PUT", c.base+path, bytes.NewReader(data))
	resp, err := c.hc.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusCreated
}

// healthConn opens a connection, asks for /healthz on it and checks the
// answer's status (and Retry-After on 429); the connection stays open.
func healthConn(t *testing.T, addr string, status int) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != status {
		t.Fatalf("GET /healthz: %v, want %d", err, status)
	}
	if status == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	return conn
}
