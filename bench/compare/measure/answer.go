package measure

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
)

// Logf prints one line of the harness's progress on stderr.
func Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "compare: "+format+"\n", args...)
}

// Drain reads the body to the end, timing the first byte, and checks that
// at least want bytes arrived with status 200.
func Drain(resp *http.Response, t0 time.Time, buf []byte, want int64) (int64, time.Duration, error) {
	defer resp.Body.Close()
	n, err := io.ReadAtLeast(resp.Body, buf[:1], 1)
	ttfb := time.Since(t0)
	total := int64(n)
	if err == nil {
		var m int64
		m, err = io.CopyBuffer(io.Discard, struct{ io.Reader }{resp.Body}, buf)
		total += m
	}
	if err != nil {
		return total, ttfb, err
	}
	if resp.StatusCode != http.StatusOK {
		return total, ttfb, fmt.Errorf("http %d", resp.StatusCode)
	}
	if total < want {
		return total, ttfb, fmt.Errorf("short answer: %d bytes, want ≥ %d", total, want)
	}
	return total, ttfb, nil
}

// UploadOnce POSTs body (a tools/call upload_file) on c's session and
// checks that the tool stored it.
func UploadOnce(ctx context.Context, c *mcpc.Client, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	resp, err := c.PostBody(ctx, bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	ans, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("http %d: %.200s", resp.StatusCode, ans)
	}
	if bytes.Contains(ans, []byte(`"isError":true`)) || bytes.Contains(ans, []byte(`"error":{`)) {
		return fmt.Errorf("tool error: %.200s", ans)
	}
	return nil
}

// SettleDisk flushes every dirty page (sync(2)) before a run that writes,
// so no run pays for the writeback of an earlier one's bytes, the seeding's
// included.
func SettleDisk() { syscall.Sync() }
