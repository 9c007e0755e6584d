package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

// streamCaps declares resourceStreaming, without which a server answers
// resources/stream with a refusal.
const streamCaps = `{"resourceStreaming":{}}`

// gatewayRSSGrowth bounds what streaming one blob may add to the gateway's
// peak resident memory, whatever the blob's size.
const gatewayRSSGrowth = 32 << 20

// streamed is the outcome of one resources/stream through the gateway.
type streamed struct {
	how         string // "direct", "redirect" or "downloadUrl": how the bytes came
	contentType string
	size        int64
	sha256      string
	body        []byte // the bytes, when kept
}

// streamResource calls resources/stream for uri and follows the answer to
// the bytes, whichever of the SEP's forms it takes: the raw bytes in the
// POST answer, a 302 to them, or a result with a downloadUrl. The bytes are
// hashed as they arrive and kept only when keep is set.
func streamResource(t *testing.T, ctx context.Context, mc *mcptest.Client, uri string, keep bool) streamed {
	t.Helper()
	resp, err := mc.Open(mc.NewRequest(ctx, "resources/stream", `{"uri":`+strconvQuote(uri)+`}`))
	if err != nil {
		t.Fatalf("resources/stream %s: %v", uri, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusFound:
		return fetchStreamed(t, ctx, "redirect", resp.Header.Get("Location"), keep)
	case resp.StatusCode == http.StatusOK && resp.Header.Get("MCP-Resource-Uri") != "":
		return readStreamed(t, "direct", resp, keep)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	answer, err := mcptest.ReadAnswer(resp.StatusCode, resp.Header, b)
	var res struct {
		DownloadURL string `json:"downloadUrl"`
	}
	if err != nil || answer.Result == nil || json.Unmarshal(answer.Result, &res) != nil || res.DownloadURL == "" {
		t.Fatalf("resources/stream %s: neither bytes, a redirect nor a downloadUrl: %d %v %.300s", uri, resp.StatusCode, err, b)
	}
	return fetchStreamed(t, ctx, "downloadUrl", res.DownloadURL, keep)
}

func fetchStreamed(t *testing.T, ctx context.Context, how, url string, keep bool) streamed {
	t.Helper()
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("resources/stream (%s) points off this machine: %q", how, url)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := mcptest.NewHTTPClient().Do(req)
	if err != nil {
		t.Fatalf("GET %s (%s): %v", url, how, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		t.Fatalf("GET %s (%s): %d %.300s", url, how, resp.StatusCode, b)
	}
	return readStreamed(t, how, resp, keep)
}

func readStreamed(t *testing.T, how string, resp *http.Response, keep bool) streamed {
	t.Helper()
	h := sha256.New()
	var kept bytes.Buffer
	w := io.Writer(h)
	if keep {
		w = io.MultiWriter(h, &kept)
	}
	n, err := io.CopyBuffer(w, resp.Body, make([]byte, 256<<10))
	if err != nil {
		t.Fatalf("resources/stream (%s): reading the bytes after %d: %v", how, n, err)
	}
	if cl := resp.Header.Get("Content-Length"); cl != "" && cl != strconv.FormatInt(n, 10) {
		t.Errorf("resources/stream (%s): Content-Length %s, %d bytes came", how, cl, n)
	}
	return streamed{how: how, contentType: resp.Header.Get("Content-Type"), size: n,
		sha256: hex.EncodeToString(h.Sum(nil)), body: kept.Bytes()}
}

// TestGatewayStreamsEverything puts the gateway in front of
// server-everything and streams its resources with resources/stream: every
// resource resources/list names (text documents: their UTF-8 bytes) and
// blobs of its template, each byte-identical to what server-everything's own
// resources/read returns for it. Its blobs carry the time of day to the
// second, so a blob is read directly before and after the stream, and the
// check is retried when a second ended in between. The stream cache is off:
// a retry must convert the upstream's new bytes, not be served the first
// attempt's (the cache has its own tests).
func TestGatewayStreamsEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs in the full (non -short) leg of make test")
	}
	u := startUpstream(t, upstreamEverything, 0)
	gw := startGateway(t, u.URL, "--stream-cache=false")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	direct := connectUpstream(t, ctx, u.URL, mcptest.Version20251125)
	via := mcptest.New(gw.URL, mcptest.Version20251125)
	via.Capabilities = streamCaps
	if err := via.Connect(ctx); err != nil {
		t.Fatalf("connect through the gateway: %v", err)
	}
	uris := listNames(t, ctx, direct, "resources/list", "resources", "uri")
	if len(uris) == 0 {
		t.Fatal("server-everything lists no resources")
	}
	for id := 1; id <= 3; id++ {
		uris = append(uris, everythingBlobURI(id))
	}
	for _, uri := range uris {
		checkStreamedLikeRead(t, ctx, direct, via, uri)
	}
}

// checkStreamedLikeRead streams uri through the gateway and compares its
// bytes and type with the upstream's resources/read, read just before and
// after.
func checkStreamedLikeRead(t *testing.T, ctx context.Context, direct, via *mcptest.Client, uri string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		before := readContents(t, ctx, direct, uri)
		got := streamResource(t, ctx, via, uri, true)
		after := readContents(t, ctx, direct, uri)
		if !bytes.Equal(before.bytes, after.bytes) && attempt < 3 {
			continue // the resource changed while it streamed (a new second)
		}
		if !bytes.Equal(got.body, before.bytes) {
			t.Errorf("%s: resources/stream (%s) gave %d bytes %.80q, resources/read %d bytes %.80q",
				uri, got.how, len(got.body), got.body, len(before.bytes), before.bytes)
		}
		if mt, _, _ := strings.Cut(got.contentType, ";"); before.MimeType != "" && mt != before.MimeType {
			t.Errorf("%s: Content-Type %q, the resource's mimeType is %q", uri, got.contentType, before.MimeType)
		}
		t.Logf("%s: %d bytes as %s", uri, got.size, got.how)
		return
	}
}

// TestGatewayStreamsBigBlob streams the 256 MiB blob of the ts2 upstream
// (in the 2026-07-28 era) and of the gosdk upstream (2025-11-25) through
// the gateway with resources/stream: the bytes must be the upstream's
// (sha256 of the pattern TestUpstreamsDirect checks their resources/read
// against), and the gateway's peak resident memory (VmHWM) may grow by at
// most gatewayRSSGrowth over what it held before the stream.
func TestGatewayStreamsBigBlob(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs in the full (non -short) leg of make test")
	}
	t.Parallel() // beside TestPutGet2GiB, which waits on the disk
	want := patternSum(gatewayBigSize)
	for _, c := range []struct{ kind, era string }{
		{upstreamTS2, mcptest.Version20260728},
		{upstreamGoSDK, mcptest.Version20251125},
	} {
		t.Run(c.kind, func(t *testing.T) {
			u := startUpstream(t, c.kind, gatewayBigSize)
			gw := startGateway(t, u.URL)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			via := mcptest.New(gw.URL, c.era)
			via.Capabilities = streamCaps
			if err := via.Connect(ctx); err != nil {
				t.Fatalf("connect through the gateway: %v", err)
			}
			// Warm the relay path with a small blob before the baseline.
			if small := streamResource(t, ctx, via, u.SmallURI, false); small.sha256 != patternSum(upstreamSmallSize) {
				t.Fatalf("%s: %d bytes, sha256 %s: not the upstream's", u.SmallURI, small.size, small.sha256)
			}
			before := procStatusKB(t, gw.Proc.Pid, "VmRSS")
			got := streamResource(t, ctx, via, u.BigURI, false)
			peak := procStatusKB(t, gw.Proc.Pid, "VmHWM")
			if got.size != gatewayBigSize || got.sha256 != want {
				t.Fatalf("%s (%s): %d bytes, sha256 %s; want %d bytes, %s", u.BigURI, got.how, got.size, got.sha256, int64(gatewayBigSize), want)
			}
			growth := (peak - before) << 10
			t.Logf("%s: %d bytes as %s; gateway RSS %d KiB before, peak %d KiB after (+%d KiB)", u.BigURI, got.size, got.how, before, peak, growth>>10)
			if growth > gatewayRSSGrowth {
				t.Errorf("streaming %d bytes grew the gateway's peak RSS by %d MiB, over %d MiB", got.size, growth>>20, gatewayRSSGrowth>>20)
			}
		})
	}
}

// procStatusKB reads a kB field (VmRSS, VmHWM) of /proc/PID/status.
func procStatusKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("/proc/%d/status %s: %v", pid, field, err)
			}
			return n
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}
