package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

// gatewayBigSize is the size of the big blob of the ts2 and gosdk upstreams.
const gatewayBigSize = 256 << 20

// TestUpstreamsDirect holds the gateway tests' upstreams to what those tests
// expect of them, called directly with mcptest (no gateway), so a fault of
// an upstream is not blamed on the gateway: initialize (or server/discover),
// tools/list with the x-mcp-file argument, the file tool, a prompt, and
// resources/read of the blobs, whose bytes must be the pattern the gateway
// tests check streams against (the 256 MiB one in the 2025-11-25 era).
func TestUpstreamsDirect(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs in the full (non -short) leg of make test")
	}
	t.Run(upstreamEverything, testEverythingDirect)
	for _, kind := range []string{upstreamTS2, upstreamGoSDK} {
		t.Run(kind, func(t *testing.T) {
			u := startUpstream(t, kind, gatewayBigSize)
			for _, era := range []string{mcptest.Version20251125, mcptest.Version20260728} {
				t.Run(era, func(t *testing.T) { testSDKUpstreamDirect(t, u, era) })
			}
		})
	}
}

func testEverythingDirect(t *testing.T) {
	u := startUpstream(t, upstreamEverything, 0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mc := connectUpstream(t, ctx, u.URL, mcptest.Version20251125)
	tools := listNames(t, ctx, mc, "tools/list", "tools", "name")
	for _, want := range []string{"echo", "get-tiny-image", "trigger-elicitation-request", "gzip-file-as-resource"} {
		if !slices.Contains(tools, want) {
			t.Errorf("tools/list of server-everything has no %s: %v", want, tools)
		}
	}
	for id := 1; id <= 3; id++ {
		uri := everythingBlobURI(id)
		c := readContents(t, ctx, mc, uri)
		if want := "Resource " + itoa(int64(id)) + ": This is a base64 blob"; !strings.HasPrefix(string(c.bytes), want) {
			t.Errorf("%s: %q, want it to start with %q", uri, c.bytes, want)
		}
	}
}

// everythingBlobURI is a blob resource of server-everything's template.
func everythingBlobURI(id int) string { return "demo://resource/dynamic/blob/" + itoa(int64(id)) }

func testSDKUpstreamDirect(t *testing.T, u *upstream, era string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mc := connectUpstream(t, ctx, u.URL, era)
	tools := listNames(t, ctx, mc, "tools/list", "tools", "name")
	slices.Sort(tools)
	if want := []string{"attach", "confirm", "echo", "file_info", "file_ref"}; !slices.Equal(tools, want) {
		t.Errorf("tools/list: %v, want %v", tools, want)
	}
	if res := call(t, ctx, mc, "tools/list", ""); !strings.Contains(string(res.Result), `"x-mcp-file":{"maxSize":`) {
		t.Errorf("tools/list has no x-mcp-file argument: %.600s", res.Result)
	}
	checkFileInfo(t, ctx, mc)
	if prompt := call(t, ctx, mc, "prompts/get", `{"name":"greet","arguments":{"name":"Ada"}}`); !strings.Contains(string(prompt.Result), `"text":"Hello, Ada"`) {
		t.Errorf("prompts/get greet: %.300s", prompt.Result)
	}
	if got := readContents(t, ctx, mc, u.TextURI); !strings.HasPrefix(string(got.bytes), "hello from the "+u.Kind) {
		t.Errorf("%s: %q", u.TextURI, got.bytes)
	}
	checkPatternBlob(t, ctx, mc, u.SmallURI, upstreamSmallSize)
	if era == mcptest.Version20251125 {
		checkPatternBlob(t, ctx, mc, u.BigURI, u.BigSize)
	}
}

// checkFileInfo calls file_info with a named data URI and checks the name,
// type, size and sha256 the upstream reports.
func checkFileInfo(t *testing.T, ctx context.Context, mc *mcptest.Client) {
	t.Helper()
	body := strings.Repeat("file bytes\n", 1000)
	sum := sha256.Sum256([]byte(body))
	res, err := mc.CallToolArgs(ctx, "file_info", mcptest.FileArg("file", mcptest.File{
		MediaType: "text/plain", Name: "notes.txt", Size: int64(len(body)), Body: strings.NewReader(body)}))
	if err != nil {
		t.Fatalf("file_info: %v", err)
	}
	tr, err := res.ToolResult()
	if err != nil {
		t.Fatalf("file_info: %v: %.300s", err, res.Body)
	}
	var got struct {
		Name, MediaType, SHA256 string
		Size                    int
	}
	if err := json.Unmarshal([]byte(tr.Text()), &got); err != nil {
		t.Fatalf("file_info: %v: %q", err, tr.Text())
	}
	if got.Name != "notes.txt" || got.MediaType != "text/plain" || got.Size != len(body) || got.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("file_info: %+v, want notes.txt text/plain %d %x", got, len(body), sum)
	}
}

// checkPatternBlob reads uri and checks it is size bytes of blobPattern.
func checkPatternBlob(t *testing.T, ctx context.Context, mc *mcptest.Client, uri string, size int64) {
	t.Helper()
	c := readContents(t, ctx, mc, uri)
	sum := sha256.Sum256(c.bytes)
	if int64(len(c.bytes)) != size || hex.EncodeToString(sum[:]) != patternSum(size) {
		t.Errorf("%s: %d bytes sha256 %x, want %d bytes of the pattern", uri, len(c.bytes), sum, size)
	}
	if c.MimeType != "application/octet-stream" {
		t.Errorf("%s: mimeType %q", uri, c.MimeType)
	}
}

func connectUpstream(t *testing.T, ctx context.Context, url, era string) *mcptest.Client {
	t.Helper()
	mc := mcptest.New(url, era)
	mc.Capabilities = `{"elicitation":{"form":{}}}`
	if err := mc.Connect(ctx); err != nil {
		t.Fatalf("connect %s (%s): %v", url, era, err)
	}
	return mc
}

// listNames calls a list method and returns field of each entry of member.
func listNames(t *testing.T, ctx context.Context, mc *mcptest.Client, method, member, field string) []string {
	t.Helper()
	res := call(t, ctx, mc, method, "")
	var list map[string]json.RawMessage
	var entries []map[string]any
	err := json.Unmarshal(res.Result, &list)
	if err == nil {
		err = json.Unmarshal(list[member], &entries)
	}
	if err != nil {
		t.Fatalf("%s: %v: %.300s", method, err, res.Result)
	}
	var names []string
	for _, e := range entries {
		names = append(names, fmt.Sprint(e[field]))
	}
	return names
}

// contents is the first entry of a resources/read answer, decoded.
type contents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
	Blob     string `json:"blob"`
	bytes    []byte // Blob decoded, or Text
}

func readContents(t *testing.T, ctx context.Context, mc *mcptest.Client, uri string) contents {
	t.Helper()
	res := call(t, ctx, mc, "resources/read", `{"uri":`+strconvQuote(uri)+`}`)
	var r struct{ Contents []contents }
	err := json.Unmarshal(res.Result, &r)
	if err != nil || len(r.Contents) == 0 {
		t.Fatalf("resources/read %s: %v %.300s", uri, err, res.Result)
	}
	c := r.Contents[0]
	c.bytes = []byte(c.Text)
	if c.Blob != "" {
		if c.bytes, err = base64.StdEncoding.DecodeString(c.Blob); err != nil {
			t.Fatalf("resources/read %s: blob: %v", uri, err)
		}
	}
	return c
}

// call sends a request and fails the test unless it is answered with a result.
func call(t *testing.T, ctx context.Context, mc *mcptest.Client, method, params string) *mcptest.Response {
	t.Helper()
	res, err := mc.Call(ctx, method, params)
	if err != nil {
		t.Fatalf("%s %s: %v", method, params, err)
	}
	if res.Result == nil {
		t.Fatalf("%s %s: no result: %d %.300s", method, params, res.Status, res.Body)
	}
	return res
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
