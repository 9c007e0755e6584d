package gateway

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// patternReader yields n deterministic bytes.
type patternReader struct{ i, n int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	if p.i >= p.n {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n-p.i)]
	for k := range b {
		b[k] = byte((p.i + int64(k)) * 31 >> 3)
	}
	p.i += int64(len(b))
	return len(b), nil
}

// readUpstream answers resources/read with a blob of size pattern bytes,
// encoded as it is written, in JSON or in an SSE event after a
// notification; corruptAt > 0 puts a non-base64 byte at that offset of the
// blob string.
func readUpstream(t *testing.T, size int64, sse bool, corruptAt int) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		head := `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"x:big","mimeType":"application/x-test","blob":"`
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\ndata: ")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		io.WriteString(w, head)
		enc := base64.NewEncoder(base64.StdEncoding, &corrupter{w: w, at: corruptAt})
		io.CopyBuffer(enc, &patternReader{n: size}, make([]byte, 48<<10))
		enc.Close()
		io.WriteString(w, `"}]}}`)
		if sse {
			io.WriteString(w, "\n\n")
		}
	}))
	t.Cleanup(up.Close)
	return up
}

// corrupter writes through, replacing the byte at offset at (if > 0) by '!'.
type corrupter struct {
	w   io.Writer
	at  int
	off int
}

func (c *corrupter) Write(p []byte) (int, error) {
	if c.at > 0 && c.off <= c.at && c.at < c.off+len(p) {
		q := append([]byte(nil), p...)
		q[c.at-c.off] = '!'
		p = q
	}
	c.off += len(p)
	return c.w.Write(p)
}

// streamLink asks the gateway in front of up for a downloadUrl.
func streamLink(t *testing.T, gw string) string {
	_, b := post(t, gw, map[string]string{"Mcp-Session-Id": "s"}, `{"jsonrpc":"2.0","id":9,"method":"resources/stream","params":{"uri":"x:big"}}`)
	return downloadURL(t, b, gw)
}

func TestDownloadDecodesAsItArrives(t *testing.T) {
	size := int64(64 << 20)
	if testing.Short() || raceEnabled {
		size = 8 << 20
	}
	for _, sse := range []bool{false, true} {
		gw := serveGateway(t, newGateway(t, readUpstream(t, size, sse, 0).URL, nil)).URL
		link := streamLink(t, gw)
		heap := storagetest.StartHeapMonitor()
		resp, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		n, err := io.Copy(h, resp.Body)
		resp.Body.Close()
		grew := heap.Stop()
		want := sha256.New()
		io.Copy(want, &patternReader{n: size})
		if err != nil || n != size || string(h.Sum(nil)) != string(want.Sum(nil)) || resp.Header.Get("Content-Type") != "application/x-test" {
			t.Fatalf("sse=%v: %d bytes of %d (%v), type %q: not the upstream's blob", sse, n, size, err, resp.Header.Get("Content-Type"))
		}
		if grew > 8<<20 {
			t.Errorf("sse=%v: heap grew %d bytes decoding %d; bound 8 MiB", sse, grew, size)
		}
		t.Logf("sse=%v: %d MiB decoded through the gateway, heap grew %.2f MiB", sse, size>>20, float64(grew)/(1<<20))
	}
}

func TestDownloadCorruptBlob(t *testing.T) {
	// Corrupt at once: an error status, no byte of the resource.
	gw := serveGateway(t, newGateway(t, readUpstream(t, 1<<20, false, 1).URL, nil)).URL
	resp, err := http.Get(streamLink(t, gw))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), `"code":"bad_gateway"`) {
		t.Errorf("corrupt blob: %d %s, want 502", resp.StatusCode, b)
	}
	// Corrupt halfway: the response is cut, never a whole-looking body.
	gw = serveGateway(t, newGateway(t, readUpstream(t, 4<<20, false, 3<<20).URL, nil)).URL
	resp, err = http.Get(streamLink(t, gw))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Errorf("corrupt halfway: the body ended cleanly after %d bytes; want it cut", n)
	}
}
