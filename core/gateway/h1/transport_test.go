package h1

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// counting is a Transport whose dials are counted.
func counting(o Options, dials *atomic.Int64) *Transport {
	o.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	return New(o)
}

func get(t *testing.T, tr *Transport, ctx context.Context, url string, body io.Reader, n int64) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Body, req.ContentLength = io.NopCloser(body), n
	}
	return tr.RoundTrip(req)
}

// Requests one after another share one connection; one the upstream
// closed while idle is not reused, and the next request still succeeds.
func TestKeepAliveAndClosedIdle(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	}))
	defer up.Close()
	var dials atomic.Int64
	tr := counting(Options{}, &dials)
	for i := range 4 {
		if i == 2 {
			up.CloseClientConnections()
			time.Sleep(10 * time.Millisecond)
		}
		resp, err := get(t, tr, t.Context(), up.URL, strings.NewReader("ping"), -1)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != "ping" {
			t.Fatalf("request %d: %q %v", i, b, err)
		}
	}
	if n := dials.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (one, then one after the upstream closed it)", n)
	}
}

// A streamed body of unknown length arrives whole (chunked).
func TestStreamedBody(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, _ := io.Copy(h, r.Body)
		_, _ = io.WriteString(w, hex.EncodeToString(h.Sum(nil))+" "+r.TransferEncoding[0]+" "+string(rune('0'+n%10)))
	}))
	defer up.Close()
	const size = 5<<20 + 3
	pr, pw := io.Pipe()
	go func() {
		chunk := make([]byte, 7000)
		for sent := 0; sent < size; sent += len(chunk) {
			_, _ = pw.Write(chunk[:min(len(chunk), size-sent)])
		}
		pw.Close()
	}()
	resp, err := get(t, New(Options{}), t.Context(), up.URL, pr, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	want := sha256.Sum256(make([]byte, size))
	if string(b) != hex.EncodeToString(want[:])+" chunked 3" {
		t.Fatalf("the upstream got %q", b)
	}
}

// An upstream that answers 413 before reading a large body is heard.
func TestEarlyAnswer(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
	}))
	defer up.Close()
	resp, err := get(t, New(Options{}), t.Context(), up.URL, io.LimitReader(zeros{}, 64<<20), 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// The context ending stops a body read of a stream that never ends.
func TestCancelBody(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer up.Close()
	ctx, cancel := context.WithCancel(t.Context())
	resp, err := get(t, New(Options{}), ctx, up.URL, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = resp.Body.Read(make([]byte, 10))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("read: %v, want context.Canceled", err)
	}
}

// Response headers are bounded in size and in time.
func TestHeaderBounds(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(300 * time.Millisecond)
		} else {
			w.Header().Set("X-Big", strings.Repeat("a", 8<<10))
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer up.Close()
	tr := New(Options{MaxHeaderBytes: 4 << 10, HeaderTimeout: 50 * time.Millisecond})
	if _, err := get(t, tr, t.Context(), up.URL+"/big", nil, 0); err == nil || !strings.Contains(err.Error(), "response headers exceeded") {
		t.Errorf("big headers: %v", err)
	}
	var ne net.Error
	if _, err := get(t, tr, t.Context(), up.URL+"/slow", nil, 0); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("slow headers: %v, want a timeout", err)
	}
}

// dropSecond serves HTTP/1.1 on ln and closes the connection, without an
// answer, on the second request it reads in all.
func dropSecond(t *testing.T, ln net.Listener) {
	var n atomic.Int64
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer nc.Close()
			br := bufio.NewReader(nc)
			for {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				if n.Add(1) == 2 {
					return
				}
				_, _ = io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			}
		}()
	}
}

// A reused connection that fails before any byte of an answer: a GET goes
// again on a fresh one; a POST that went out whole is not sent twice.
func TestRetryOnlyWhatIsSafe(t *testing.T) {
	for _, tc := range []struct {
		method string
		retry  bool
	}{{http.MethodGet, true}, {http.MethodPost, false}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go dropSecond(t, ln)
		tr := New(Options{})
		var last error
		for range 2 {
			req, _ := http.NewRequestWithContext(t.Context(), tc.method, "http://"+ln.Addr().String()+"/", nil)
			if tc.method == http.MethodPost {
				req.Body, req.ContentLength = io.NopCloser(strings.NewReader("x")), 1
				req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("x")), nil }
			}
			resp, err := tr.RoundTrip(req)
			if last = err; err == nil {
				_, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
		}
		ln.Close()
		if (last == nil) != tc.retry {
			t.Errorf("%s: second request's error %v; want a retry: %v", tc.method, last, tc.retry)
		}
	}
}

// The wait for the response headers is timed from the end of a streamed
// body, on a new connection and on a reused one: an upload slower than
// HeaderTimeout is not cut.
func TestHeaderWaitAfterBody(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, strings.Repeat("x", int(n%7)))
	}))
	defer up.Close()
	var dials atomic.Int64
	tr := counting(Options{HeaderTimeout: 100 * time.Millisecond}, &dials)
	for i := range 2 {
		pr, pw := io.Pipe()
		go func() {
			for range 6 {
				time.Sleep(50 * time.Millisecond)
				_, _ = pw.Write([]byte("abc"))
			}
			pw.Close()
		}()
		resp, err := get(t, tr, t.Context(), up.URL, pr, -1)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "xxxx" {
			t.Fatalf("request %d: %q", i, b)
		}
	}
	if dials.Load() != 1 {
		t.Errorf("%d connections, want one kept alive", dials.Load())
	}
}

// An https upstream: the handshake checks its certificate, and the
// connection is kept alive.
func TestHTTPS(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Method+" "+r.URL.Path)
	}))
	defer up.Close()
	var dials atomic.Int64
	tr := counting(Options{TLS: up.Client().Transport.(*http.Transport).TLSClientConfig}, &dials)
	for range 2 {
		resp, err := get(t, tr, t.Context(), up.URL+"/mcp", nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "POST /mcp" {
			t.Fatalf("%q", b)
		}
	}
	if dials.Load() != 1 {
		t.Errorf("%d connections, want one kept alive", dials.Load())
	}
	if _, err := get(t, New(Options{}), t.Context(), up.URL, nil, 0); err == nil {
		t.Error("an unknown certificate was accepted")
	}
}
