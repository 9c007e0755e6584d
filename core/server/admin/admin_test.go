package admin

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/metrics"
)

// get sends GET path to h with Host host and the Authorization authz.
func get(h http.Handler, path, host, authz string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", path, nil)
	r.Host = host
	if authz != "" {
		r.Header.Set("Authorization", authz)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// errorCode is the code of a {"error":{"code",...}} body, "" for another body.
func errorCode(w *httptest.ResponseRecorder) string {
	var e struct{ Error struct{ Code string } }
	_ = json.Unmarshal(w.Body.Bytes(), &e)
	return e.Error.Code
}

// TestHostCheck: a DNS-rebinding page (Host: its own name) gets 403 on
// every admin route; localhost, IP addresses and the configured names get
// through, any port. 71946bf served /debug/pprof/cmdline to Host
// attacker.example.
func TestHostCheck(t *testing.T) {
	h := Handler(metrics.New(metrics.Build{}), Options{Hosts: []string{"mcpblob-admin.mcpblob.svc"}})
	for _, host := range []string{"localhost:9090", "LOCALHOST", "127.0.0.1:9090", "[::1]:9090", "::1",
		"10.42.0.7:9090", "[fd00::7]:9090", "mcpblob-admin.mcpblob.svc:9090", "mcpblob-admin.mcpblob.svc.", "localhost."} {
		if w := get(h, "/metrics", host, ""); w.Code != http.StatusOK {
			t.Errorf("GET /metrics with Host %q: %d %s", host, w.Code, w.Body)
		}
	}
	for _, host := range []string{"attacker.example", "attacker.example:9090", "localhost.attacker.example",
		"127.0.0.1.nip.io:9090", "mcpblob-admin.mcpblob.svc.attacker.example", ""} {
		for _, path := range []string{"/metrics", "/debug/pprof/cmdline", "/debug/pprof/", "/debug/pprof/goroutine?debug=1"} {
			w := get(h, path, host, "")
			if w.Code != http.StatusForbidden || errorCode(w) != "forbidden" || w.Header().Get("Content-Type") != "application/json" {
				t.Errorf("GET %s with Host %q: %d %q; want 403 forbidden", path, host, w.Code, w.Body)
			}
		}
	}
}

// TestToken: with a token every admin route needs it as a bearer (401 with
// a challenge otherwise); the Host check still comes first.
func TestToken(t *testing.T) {
	const tok = "s3cret-admin-token-0123456789"
	h := Handler(metrics.New(metrics.Build{}), Options{Token: tok})
	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/cmdline", "/nothing"} {
		for _, authz := range []string{"", "Bearer", "Bearer ", "Bearer wrong", "Bearer " + tok + "x", "Bearer " + tok[:len(tok)-1],
			"Basic " + tok, tok} {
			w := get(h, path, "127.0.0.1:9090", authz)
			if w.Code != http.StatusUnauthorized || errorCode(w) != "unauthorized" ||
				!strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer ") {
				t.Errorf("GET %s with Authorization %q: %d %q, WWW-Authenticate %q; want 401", path, authz, w.Code, w.Body, w.Header().Get("WWW-Authenticate"))
			}
			if strings.Contains(w.Body.String(), tok) {
				t.Errorf("the refusal quotes the token: %s", w.Body)
			}
		}
	}
	for _, authz := range []string{"Bearer " + tok, "bearer " + tok} {
		if w := get(h, "/debug/pprof/cmdline", "localhost:9090", authz); w.Code != http.StatusOK {
			t.Errorf("GET /debug/pprof/cmdline with %q: %d %s", authz, w.Code, w.Body)
		}
	}
	if w := get(h, "/metrics", "attacker.example", "Bearer "+tok); w.Code != http.StatusForbidden {
		t.Errorf("the token from a rebinding page's Host: %d; want 403", w.Code)
	}
}

// TestExposedWarning: the start log warns when the listener is reachable
// from other machines without a token, and only then.
func TestExposedWarning(t *testing.T) {
	for _, tc := range []struct {
		ip    net.IP
		token string
		warn  bool
	}{
		{net.IPv4zero, "", true}, {net.IPv6unspecified, "", true}, {net.IPv4(10, 0, 0, 7), "", true},
		{net.IPv4(127, 0, 0, 1), "", false}, {net.IPv6loopback, "", false},
		{net.IPv4zero, "s3cret-admin-token-0123456789", false},
	} {
		var buf bytes.Buffer
		logStart(slog.New(slog.NewTextHandler(&buf, nil)), &net.TCPAddr{IP: tc.ip, Port: 9090}, Options{Token: tc.token})
		out := buf.String()
		if got := strings.Contains(out, "level=WARN") && strings.Contains(out, "SECURITY"); got != tc.warn {
			t.Errorf("bind %s, token %t: warned %t, want %t: %s", tc.ip, tc.token != "", got, tc.warn, out)
		}
		if tc.token != "" && strings.Contains(out, tc.token) {
			t.Errorf("the token reached the log: %s", out)
		}
	}
}

// TestListenServes: Listen serves the guarded handler on its address.
func TestListenServes(t *testing.T) {
	var buf bytes.Buffer
	s, err := Listen("127.0.0.1:0", metrics.New(metrics.Build{}), Options{Token: "s3cret-admin-token-0123456789"},
		slog.New(slog.NewTextHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	url := "http://" + s.Addr().String() + "/metrics"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET %s without the token: %d", url, resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer s3cret-admin-token-0123456789")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s with the token: %d", url, resp.StatusCode)
	}
	if strings.Contains(buf.String(), "WARN") || strings.Contains(buf.String(), "s3cret") {
		t.Errorf("start log: %s", buf.String())
	}
}

// TestListenNoSmuggling: a request framed two ways (Transfer-Encoding and
// Content-Length) is answered, and the connection closed, without the
// bytes after its chunked body being served as a request of their own.
func TestListenNoSmuggling(t *testing.T) {
	s, err := Listen("127.0.0.1:0", metrics.New(metrics.Build{}), Options{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	host := s.Addr().String()
	smuggled := "GET /debug/pprof/cmdline HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
	body := "0\r\n\r\n" + smuggled
	req := "POST /metrics HTTP/1.1\r\nHost: " + host + "\r\nTransfer-Encoding: chunked\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(c) // ends when the server closes the connection
	if err != nil {
		t.Fatalf("reading the answers: %v (the connection stayed open)", err)
	}
	if n := strings.Count(string(all), "HTTP/1.1 "); n != 1 {
		t.Fatalf("%d answers on one connection, want 1 (the smuggled request was served):\n%s", n, all)
	}
}
