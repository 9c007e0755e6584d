package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/gateway"
)

// TestGatewayFileByReferenceThroughFront: a file argument the upstream
// takes by reference is stored in the caller's namespace and reaches the
// upstream as a /d link, whose GET (whole, and a Range) serves the
// client's bytes with the file's name, type, length and sha256 in its
// headers and query; the client's API key never reaches the upstream.
func TestGatewayFileByReferenceThroughFront(t *testing.T) {
	parallel(t)
	pdf := append([]byte("%PDF-1.7\n"), offloadImage(5 << 20)[9:]...)
	sum := sha256.Sum256(pdf)
	got := make(chan string, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if bytes.Contains(b, []byte(`"tools/list"`)) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":"mcpblob-gateway-tools-list","result":{"tools":[{"name":"upload","inputSchema":{"type":"object","properties":{"file":{"type":"string","x-mcp-file":{"accept":["application/pdf"],"delivery":"reference"}}}}}]}}`)
			return
		}
		if strings.Contains(r.Header.Get("Authorization"), "alice-key") {
			t.Error("the client's API key reached the upstream")
		}
		var m struct {
			Params struct{ Arguments struct{ File string } }
		}
		json.Unmarshal(b, &m)
		got <- m.Params.Arguments.File
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	}))
	t.Cleanup(up.Close)
	be := newLocalStore(t)
	base, _ := startTestServer(t, Options{Backend: be,
		Auth:    Auth{Keys: []string{HashKey("alice-key") + " alice"}},
		Gateway: gateway.Options{Upstream: up.URL + "/mcp"}})

	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"file":"data:application/pdf;name=report%20Q3.pdf;base64,` +
		base64.StdEncoding.EncodeToString(pdf) + `"}}}`
	if resp, b := gwPost(t, base, "alice-key", strings.NewReader(call), int64(len(call))); resp.StatusCode != http.StatusOK || bytes.Contains(b, []byte(`"error"`)) {
		t.Fatalf("tools/call: %d %.300s", resp.StatusCode, b)
	}
	link := <-got
	u, err := url.Parse(link)
	if err != nil || !strings.Contains(u.Path, "/d/") {
		t.Fatalf("the upstream got %.100q; want a /d link", link)
	}
	q := u.Query()
	if q.Get("name") != "report Q3.pdf" || q.Get("type") != "application/pdf" || q.Get("size") != fmt.Sprint(len(pdf)) ||
		q.Get("sha256") != hex.EncodeToString(sum[:]) {
		t.Errorf("link query %v; want the file's name, type, size and sha256", q)
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	h := resp.Header
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, pdf) || h.Get("Content-Type") != "application/pdf" ||
		h.Get("x-mcp-sha256") != hex.EncodeToString(sum[:]) || !strings.Contains(h.Get("Content-Disposition"), "report Q3.pdf") {
		t.Errorf("GET the link: %d, %d bytes, headers %v; want the file with its facts", resp.StatusCode, len(body), h)
	}
	req, _ := http.NewRequest(http.MethodGet, link, nil)
	req.Header.Set("Range", "bytes=1000-1999")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	part, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, pdf[1000:2000]) {
		t.Errorf("Range of the link: %d, %d bytes", resp.StatusCode, len(part))
	}
	checkLinkQuerySealed(t, u)
	page, err := be.List(context.Background(), "", "", 100)
	if err != nil || len(page.Items) != 1 || !strings.HasPrefix(page.Items[0].Key, ".ns/") ||
		!strings.Contains(page.Items[0].Key, "/gateway/files/") {
		t.Errorf("store holds %+v (%v); want the one file in alice's namespace", page.Items, err)
	}
}

// checkLinkQuerySealed: the link serves with its query as given, or
// without one; a query altered (another sha256, size or name) is refused.
func checkLinkQuerySealed(t *testing.T, u *url.URL) {
	t.Helper()
	bare := *u
	bare.RawQuery = ""
	for _, c := range []struct {
		link string
		want int
	}{
		{u.String(), http.StatusOK},
		{bare.String(), http.StatusOK},
		{strings.Replace(u.String(), "sha256=", "sha256=0", 1), http.StatusBadRequest},
		{strings.Replace(u.String(), "size=", "size=1", 1), http.StatusBadRequest},
		{strings.Replace(u.String(), "name=", "name=x", 1), http.StatusBadRequest},
	} {
		resp, err := http.Head(c.link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("HEAD %s: %d; want %d", c.link[strings.Index(c.link, "?")+1:], resp.StatusCode, c.want)
		}
	}
}
