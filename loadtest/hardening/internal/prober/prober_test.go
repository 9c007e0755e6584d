package prober

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain lets the test binary serve as the prober process, as the
// harness's own binary does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		os.Exit(Run(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// The prober process times each GET and reports it: 200s as ok, a server
// that went away as failures, each on a new connection; it ends with ctx.
func TestProberProcess(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		_, _ = w.Write([]byte("ok\n"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	results, err := Start(ctx, srv.URL+"/healthz", 10*time.Millisecond, false)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r := <-results
		if !r.OK || r.Took < 5*time.Millisecond {
			t.Fatalf("probe of a 200 after 5 ms: %+v", r)
		}
	}
	srv.Close()
	if got := conns.Load(); got < 3 {
		t.Errorf("%d connections for 3 probes, want one per probe", got)
	}
	failed := false
	for r := range results {
		if failed = !r.OK; failed {
			break
		}
	}
	if !failed {
		t.Fatal("no failed probe reported once the server was closed")
	}
	cancel()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, open := <-results:
			if !open {
				return
			}
		case <-deadline:
			t.Fatal("the prober's results did not end after its context did")
		}
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		line string
		want Result
		ok   bool
	}{
		{"ok 1500000", Result{Took: 1500 * time.Microsecond, OK: true}, true},
		{"fail 7", Result{Took: 7}, true},
		{"ok", Result{}, false},
		{"maybe 5", Result{}, false},
		{"ok -1", Result{}, false},
	} {
		got, ok := parse(c.line)
		if ok != c.ok || got != c.want {
			t.Errorf("parse(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}
