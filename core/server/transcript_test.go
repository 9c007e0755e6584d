package server

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/conformance"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/core/token"
)

var update = flag.Bool("update", false, "rewrite the expected responses of testdata/conformance/*.txtar")

// Transcripts are txtar files (go-sdk style golden files): a comment, then
// pairs of "request N" / "response N" sections. A request section is
//
//	METHOD PATH
//	Header: value
//	…
//	<blank line>
//	body
//
// A response section is the status code, the headers the test records, a
// blank line and the body (SSE bodies verbatim). $SESSION and $STATE stand
// for the last session id and requestState the server issued; "@oversize"
// as a body sends a message just over the body limit. Run with -update to
// rewrite the responses.
func TestTranscripts(t *testing.T) {
	parallel(t)
	files, err := filepath.Glob("testdata/conformance/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runTranscript(t, file)
		})
	}
}

type section struct{ name, body string }

func parseTxtar(data string) (comment string, secs []section) {
	lines := strings.SplitAfter(data, "\n")
	var cur *section
	var buf strings.Builder
	flush := func() {
		if cur == nil {
			comment = buf.String()
		} else {
			cur.body = buf.String()
			secs = append(secs, *cur)
		}
		buf.Reset()
	}
	for _, l := range lines {
		trimmed := strings.TrimRight(l, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			flush()
			cur = &section{name: trimmed[3 : len(trimmed)-3]}
			continue
		}
		buf.WriteString(l)
	}
	flush()
	return comment, secs
}

func formatTxtar(comment string, secs []section) string {
	var b strings.Builder
	b.WriteString(comment)
	for _, s := range secs {
		fmt.Fprintf(&b, "-- %s --\n", s.name)
		b.WriteString(s.body)
		if s.body != "" && !strings.HasSuffix(s.body, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// recordedHeaders are the response headers transcripts show.
var recordedHeaders = []string{"Allow", "Content-Type", "Mcp-Session-Id", "WWW-Authenticate"}

var stateRE = regexp.MustCompile(`"requestState":"([^"]+)"`)

// startTestServer starts a server with opts (a memory backend and a fixed
// keyring unless given) on a free loopback port; it shuts down when the
// test ends.
func startTestServer(t *testing.T, opts Options) (string, *Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startTestServerOn(t, opts, ln)
}

// startTestServerOn is startTestServer on ln, for a test that wraps the
// listener (to watch the server's connections).
func startTestServerOn(t *testing.T, opts Options, ln net.Listener) (string, *Server) {
	t.Helper()
	if opts.Backend == nil {
		opts.Backend = newMemBackend()
	}
	if opts.Keyring == nil {
		kr, err := token.NewKeyring(token.Key{ID: "test", Secret: bytes.Repeat([]byte{7}, 32)})
		if err != nil {
			t.Fatal(err)
		}
		opts.Keyring = kr
	}
	opts.Front.Listen = ln.Addr().String()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		// A test that ends before Serve has started (an early t.Fatal)
		// shuts down a server with no listener yet, which fasthttp takes
		// as nothing to do; Serve would then start and never return.
		// Closing ln makes its first Accept end it.
		ln.Close()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String(), s
}

func runTranscript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	comment, secs := parseTxtar(string(data))
	opts := Options{}
	if strings.Contains(comment, "fixtures: on") {
		opts.Extend = conformance.Register
	}
	if strings.Contains(comment, "auth: on") {
		opts.Auth.Keys = []string{HashKey("secret-key") + " alice"}
	}
	base, _ := startTestServer(t, opts)
	client := &http.Client{Timeout: 10 * time.Second}
	vars := map[string]string{}
	subst := func(s string) string {
		for k, v := range vars {
			s = strings.ReplaceAll(s, k, v)
		}
		return s
	}
	unsubst := func(s string) string {
		keys := make([]string, 0, len(vars))
		for k := range vars {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s = strings.ReplaceAll(s, vars[k], k)
		}
		return s
	}
	changed := false
	for i := 0; i < len(secs); i++ {
		if !strings.HasPrefix(secs[i].name, "request") {
			continue
		}
		req := secs[i]
		got := doTranscriptRequest(t, client, base, subst(req.body))
		if sid := got.header.Get("Mcp-Session-Id"); sid != "" {
			vars["$SESSION"] = sid
		}
		if m := stateRE.FindAllStringSubmatch(got.body, -1); m != nil {
			vars["$STATE"] = m[len(m)-1][1]
		}
		rendered := unsubst(got.render())
		respName := "response" + strings.TrimPrefix(req.name, "request")
		if i+1 < len(secs) && secs[i+1].name == respName {
			if secs[i+1].body != rendered {
				if *update {
					secs[i+1].body = rendered
					changed = true
				} else {
					t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", file, req.name, rendered, secs[i+1].body)
				}
			}
			i++
			continue
		}
		if !*update {
			t.Errorf("%s: %s has no %s section (run with -update)", file, req.name, respName)
			continue
		}
		secs = append(secs[:i+1], append([]section{{name: respName, body: rendered}}, secs[i+1:]...)...)
		changed = true
		i++
	}
	if changed {
		if err := os.WriteFile(file, []byte(formatTxtar(comment, secs)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type transcriptResponse struct {
	status int
	header http.Header
	body   string
}

func (r transcriptResponse) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", r.status)
	for _, h := range recordedHeaders {
		if v := r.header.Get(h); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", h, v)
		}
	}
	b.WriteString("\n")
	b.WriteString(r.body)
	if !strings.HasSuffix(r.body, "\n") {
		b.WriteString("\n")
	}
	return b.String()
}

func doTranscriptRequest(t *testing.T, client *http.Client, base, spec string) transcriptResponse {
	t.Helper()
	br := bufio.NewReader(strings.NewReader(spec))
	line, _ := br.ReadString('\n')
	method, path, ok := strings.Cut(strings.TrimSpace(line), " ")
	if !ok {
		t.Fatalf("bad request line %q", line)
	}
	hdr := http.Header{}
	host := ""
	for {
		l, err := br.ReadString('\n')
		l = strings.TrimRight(l, "\r\n")
		if l == "" || err != nil {
			break
		}
		k, v, _ := strings.Cut(l, ":")
		k, v = strings.TrimSpace(k), strings.TrimLeft(v, " ")
		if strings.EqualFold(k, "Host") {
			host = v
			continue
		}
		hdr.Add(k, v)
	}
	rest, _ := io.ReadAll(br)
	body := strings.TrimRight(string(rest), "\n")
	if body == "@oversize" {
		body = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", front.DefaultMaxBodyBytes) + `"}}`
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr
	if host != "" {
		req.Host = host
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return transcriptResponse{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

var _ = mcp.CodeParseError
