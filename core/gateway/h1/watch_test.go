package h1

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"testing"
)

// A request whose context cannot end (Background) is not watched: no
// context.AfterFunc, whose registration costs allocations on every
// request. One whose context can end still is: ending it cuts the call.
func TestUnwatchedContext(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			<-r.Context().Done()
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer up.Close()
	tr := New(Options{})
	u, _ := url.Parse(up.URL)
	roundTrip := func(ctx context.Context) {
		req := (&http.Request{Method: http.MethodPost, URL: u, Host: u.Host, Header: http.Header{}}).WithContext(ctx)
		body := []byte("ping")
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Averages kept as fractions: the process's allocations include the
	// upstream's, which vary a little with timing (more under -race), and
	// an integer average could cut a difference of 3 to 2.
	watched := allocsPerCall(200, func() { roundTrip(ctx) })
	unwatched := allocsPerCall(200, func() { roundTrip(context.Background()) })
	t.Logf("allocations per call: %.2f watched, %.2f not", watched, unwatched)
	if unwatched > watched-2.5 {
		t.Errorf("%.2f allocations per call with a context that cannot end, %.2f with one that can; want 3 fewer (no AfterFunc)", unwatched, watched)
	}
	hang, _ := url.Parse(up.URL + "/hang")
	ctx2, cancel2 := context.WithCancel(context.Background())
	req := (&http.Request{Method: http.MethodGet, URL: hang, Host: hang.Host, Header: http.Header{}}).WithContext(ctx2)
	done := make(chan error, 1)
	go func() { _, err := tr.RoundTrip(req); done <- err }()
	cancel2()
	if err := <-done; err != context.Canceled {
		t.Errorf("a call whose context ended: %v, want context.Canceled", err)
	}
}

// allocsPerCall is the process's mallocs per call of f over n calls (after
// one not counted), as a fraction.
func allocsPerCall(n int, f func()) float64 {
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n)
}
