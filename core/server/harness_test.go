package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// heapMu keeps heap measurements alone in the process. A test that samples
// the heap (heapWatch, TestSlowBodyStorm's memWatch) calls heapTest and
// holds it exclusively; every other top-level test calls parallel and holds
// it shared, except the few whose checks are wall-clock bounds
// (TestPaceReader) or that are helper processes (TestSendfileChild): they
// call neither and run alone, as a test without t.Parallel does. The
// testing package already runs a test that never calls t.Parallel only
// while no parallel test runs; heapMu keeps that true should a heap test
// ever be marked parallel, and makes the rule visible where it matters.
var heapMu sync.RWMutex

// parallel marks a top-level test that shares no state with other tests
// t.Parallel and keeps it away from heap measurements. Subtests call
// t.Parallel directly: their parent already holds heapMu, and taking the
// read lock twice can deadlock against a waiting heap test.
func parallel(t *testing.T) {
	t.Parallel() // first: a paused test must not hold heapMu
	heapMu.RLock()
	t.Cleanup(heapMu.RUnlock)
}

// heapTest runs a heap-growth test with no other test in the process. It
// must not call t.Parallel, and its subtests run one at a time.
func heapTest(t *testing.T) {
	heapMu.Lock()
	t.Cleanup(heapMu.Unlock)
}

// heapWatch samples HeapInuse until stopped and returns the peak growth.
// Only heap tests (heapTest) may call it.
func heapWatch(t testing.TB) func() int64 {
	t.Helper()
	if heapMu.TryRLock() {
		heapMu.RUnlock()
		t.Fatal("bug: heapWatch outside a heapTest: other tests may be running")
	}
	return storagetest.WatchPeak(10*time.Millisecond, storagetest.HeapInuse).Stop
}

// eventually polls cond until it holds, failing the test after timeout.
// It replaces a sleep before a check of state that changes on its own.
func eventually(t testing.TB, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// logBuffer is a goroutine-safe sink for a test server's log.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// sendRefused sends req, whose body the server may stop reading and hang up
// on (a refused upload of unknown length, or one past the drain limit), on a
// connection of its own: the body is written on another goroutine while the
// response is read, so the reset under the write cannot hide the answer.
// (net/http's client returns the write error instead whenever it sees it
// before it has parsed the response, which a loaded machine makes common.)
func sendRefused(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	// The server may close with request bytes still unread, and the RST
	// that follows can, rarely, take the answer with it: try again then.
	// A body is sent once, so only body-less requests are retried.
	var err error
	for range 3 {
		var resp *http.Response
		var body []byte
		if resp, body, err = trySendRefused(req); err == nil || req.Body != nil {
			if err == nil {
				return resp, body
			}
			break
		}
	}
	t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	return nil, nil
}

func trySendRefused(req *http.Request) (*http.Response, []byte, error) {
	conn, err := net.Dial("tcp", req.URL.Host)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	go req.Write(conn) // ends with an error if the server hangs up first
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("reading the response: %w", err)
	}
	return resp, body, nil
}

// isTimeout reports a read deadline that passed.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
