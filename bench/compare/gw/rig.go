package gw

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
)

// Options are what the G targets take from the harness: its flags, the
// binaries it built, and P6's machinery (pinned servers, its fixed-rate
// trial, nginx), so G1 measures as P6 does.
type Options struct {
	Quick bool
	Repo  string            // the repository root
	Bins  map[string]string // "mcpblob", "gosdk" → built binaries

	ServerCPU, LoadCPU string  // P6's CPUs (taskset lists)
	P99                float64 // P6's p99 bound of a fixed-rate run (ms), for the notes

	Missing     func() string // why pinned runs cannot run here ("" when they can)
	StartPinned func(dir, cpu, name, bin string, args ...string) (*proc.Proc, string, error)
	StartNginx  func(prefix, dir, addr string) (*proc.Proc, error)
	Trial       func(ctx context.Context, name, base string, p *proc.Proc, rate, seconds int, tag string) (Trial, error)
}

// Trial is one fixed-rate run of P6's method against one server.
type Trial struct {
	CPU    float64 // µs of the server's CPU time per request
	P99    float64 // ms
	Count  float64 // requests made
	Failed float64 // share of requests that failed
	OK     bool    // within P6's bounds (p99, rate)
	Why    string  // why not
}

// system is one server of a G rig.
type system struct {
	name     string
	base     string
	proc     *proc.Proc
	mcp      *mcpc.Client // set for MCP servers once a session is open
	plain    bool         // serves the raw bytes by GET (nginx)
	baseline int64        // idle RSS
}

func (s *system) pid() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.PID()
}

var plainHTTP = mcpc.NewHTTPClient()

// fetch reads blob key (size raw bytes) once: resources/read from an MCP
// server (the base64 answer read to its end), a GET from nginx. It returns
// the body bytes and the time to the first one.
func (s *system) fetch(ctx context.Context, key string, size int64, buf []byte) (int64, time.Duration, error) {
	t0 := time.Now()
	if !s.plain {
		resp, err := s.mcp.Post(ctx, "resources/read", map[string]string{"uri": "blob:///" + key})
		if err != nil {
			return 0, 0, err
		}
		return measure.Drain(resp, t0, buf, 4*((size+2)/3))
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/"+key, nil)
	resp, err := plainHTTP.Do(req)
	if err != nil {
		return 0, 0, err
	}
	return measure.Drain(resp, t0, buf, size)
}

// mib is b in MiB ("—" for nothing).
func mib(b int64) string {
	if b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}
