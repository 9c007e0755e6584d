package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

// TestGatewayFileInputs puts the gateway in front of the real upstreams,
// in both eras, and sends file_info (x-mcp-file, maxSize 4 MiB in the
// TypeScript SDK v2 upstream, 64 MiB in the Go SDK one) a file in a body
// over the upstream's body limit (4 MiB by default in both SDKs): the
// client gets the upstream's body limit named (413, -32603
// data.upstream "body_limit"), and the next request on the gateway still
// reaches the upstream (the connection the upstream left with an unread
// body is not reused), also for a client still sending when the upstream
// refused. Then file_ref, whose file argument the upstream takes by
// reference, gets a 9.3 MB file (inline, a body the upstream refuses) as a
// link to the stored file, which the upstream fetches: it reports the
// client's name, type, size and sha256.
func TestGatewayFileInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs in the full (non -short) leg of make test")
	}
	for _, kind := range []string{upstreamTS2, upstreamGoSDK} {
		u := startUpstream(t, kind, upstreamSmallSize)
		gw := startGateway(t, u.URL)
		for _, era := range []string{mcptest.Version20251125, mcptest.Version20260728} {
			t.Run(kind+"/"+era, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				mc := connectUpstream(t, ctx, gw.URL, era)
				size := 7 << 19 // 3.5 MiB: within maxSize, in a body over 4 MiB
				if kind == upstreamGoSDK {
					size = 10 << 20 // the client still sending when the upstream refused
				}
				checkFileOverBodyLimit(t, fileCall(t, ctx, mc, size))
			})
			t.Run(kind+"/"+era+"/by-reference", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				fileRefCall(t, ctx, connectUpstream(t, ctx, gw.URL, era), 9_300_000)
			})
		}
		// Both eras' by-reference files are counted, with their bytes.
		if n, b := gatewayMetric(t, gw, "mcpblob_gateway_files_by_reference_total"),
			gatewayMetric(t, gw, "mcpblob_gateway_files_by_reference_bytes_total"); n != 2 || b != 2*9_300_000 {
			t.Errorf("%s: mcpblob_gateway_files_by_reference_total %v, _bytes_total %v; want 2 and %d", kind, n, b, 2*9_300_000)
		}
	}
}

// checkFileOverBodyLimit checks the answer to a file_info call whose body
// was over the upstream's 4 MiB body limit.
func checkFileOverBodyLimit(t *testing.T, res *mcptest.Response) {
	t.Helper()
	if res.Status != 413 || !strings.Contains(string(res.Error), `"upstream":"body_limit"`) ||
		!strings.Contains(string(res.Error), "4 MiB") {
		t.Errorf("a file in a body over 4 MiB: %d %.400s; want 413 naming the upstream's body limit", res.Status, res.Body)
	}
}

// fileCall calls file_info with a text file of size bytes.
func fileCall(t *testing.T, ctx context.Context, mc *mcptest.Client, size int) *mcptest.Response {
	t.Helper()
	res, err := mc.CallToolArgs(ctx, "file_info", mcptest.FileArg("file", mcptest.File{
		MediaType: "text/plain", Size: int64(size), Body: bytes.NewReader(bytes.Repeat([]byte("x"), size))}))
	if err != nil {
		t.Fatalf("file_info of %d bytes: %v", size, err)
	}
	return res
}

// fileRefCall calls file_ref with a named CSV file of size bytes and
// checks what the upstream read from its link.
func fileRefCall(t *testing.T, ctx context.Context, mc *mcptest.Client, size int) {
	t.Helper()
	body := bytes.Repeat([]byte("a,b,c\n1,2,3\n"), size/12+1)[:size]
	sum := sha256.Sum256(body)
	res, err := mc.CallToolArgs(ctx, "file_ref", mcptest.FileArg("file", mcptest.File{
		MediaType: "text/csv", Name: "big table.csv", Size: int64(size), Body: bytes.NewReader(body)}))
	if err != nil {
		t.Fatalf("file_ref of %d bytes: %v", size, err)
	}
	tr, err := res.ToolResult()
	if err != nil {
		t.Fatalf("file_ref of %d bytes: %v: %d %.400s", size, err, res.Status, res.Body)
	}
	var got struct {
		Name, MediaType, SHA256 string
		Size                    int
	}
	if err := json.Unmarshal([]byte(tr.Text()), &got); err != nil {
		t.Fatalf("file_ref: %v: %.400q", err, tr.Text())
	}
	if got.Name != "big table.csv" || got.MediaType != "text/csv" || got.Size != size ||
		got.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("the upstream read %+v from its link; want big table.csv, text/csv, %d bytes, sha256 %x", got, size, sum)
	}
}
