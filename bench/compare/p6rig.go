package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/seed"
)

// P6's servers are its own: each pinned to CPU p6ServerCPU (taskset; the Go
// servers with GOMAXPROCS=1, nginx with one worker), so that a figure is what
// one core serves, while wrk runs on p6LoadCPU. The same servers take the
// fixed-rate runs (p6.go).
const (
	p6ServerCore = 0
	p6ServerCPU  = "0" // p6ServerCore, for taskset
	p6LoadCPU    = "1"
)

// p6Rig is P6's pinned servers, their sessions and the saturation rows.
type p6Rig struct {
	dir     string
	procs   []*proc.Proc
	systems []*system // mcpblob, go-sdk, nginx, the floor: for the fixed-rate runs
	rows    []*p6Row
	skipped []string       // rows that could not be set up, and why
	closers []func() error // in-harness servers (the OTLP receiver)
}

func (g *p6Rig) stop() {
	for _, p := range g.procs {
		p.Stop()
	}
	for _, c := range g.closers {
		c()
	}
}

// p6Missing says why P6 at saturation cannot run here ("" when it can).
func p6Missing(cores int) string {
	for _, tool := range []string{"wrk", "taskset"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " not installed (make tools-apt)"
		}
	}
	if cores < 2 {
		return fmt.Sprintf("%d CPU: the servers and wrk need a CPU each", cores)
	}
	return ""
}

// startP6Rig seeds the 4 KiB blob and starts every P6 server pinned. A
// server that does not start costs its rows (named in skipped), not P6.
func startP6Rig(ctx context.Context, work string, bins map[string]string) (*p6Rig, error) {
	g := &p6Rig{dir: filepath.Join(work, "p6")}
	files := filepath.Join(g.dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		return nil, err
	}
	blob := readSizes[0]
	if _, err := seed.File(filepath.Join(files, blob.key()), blob.n); err != nil {
		return nil, err
	}
	if err := g.startMCPBlob(ctx, bins["mcpblob"], blob); err != nil {
		g.stop()
		return nil, err
	}
	if err := g.startOAuth(ctx, bins, blob); err != nil {
		g.skipped = append(g.skipped, p6RowOAuth+": "+err.Error())
	}
	g.startPeers(ctx, bins, files, blob)
	return g, nil
}

// pinned starts bin on the server CPU with GOMAXPROCS=1 (startPinned).
func (g *p6Rig) pinned(name, bin string, args ...string) (*proc.Proc, string, error) {
	p, base, err := startPinned(g.dir, p6ServerCPU, name, bin, args...)
	if err == nil {
		g.procs = append(g.procs, p)
	}
	return p, base, err
}

// startPinned starts bin on CPU cpu (taskset) with GOMAXPROCS=1, listening
// on a free loopback address, its output in dir/name.log (not a pipe the
// harness would have to drain during a run), and returns its base URL.
func startPinned(dir, cpu, name, bin string, args ...string) (*proc.Proc, string, error) {
	return startPinnedEnv(dir, cpu, name, bin, nil, args...)
}

// startPinnedEnv is startPinned with env added to the process's
// environment.
func startPinnedEnv(dir, cpu, name, bin string, env []string, args ...string) (*proc.Proc, string, error) {
	addr, err := proc.FreeAddr()
	if err != nil {
		return nil, "", err
	}
	return startPinnedAt(dir, cpu, name, bin, addr, env, args...)
}

// startPinnedAt is startPinnedEnv on a loopback address the caller chose
// (one it had to name to another process first).
func startPinnedAt(dir, cpu, name, bin, addr string, env []string, args ...string) (*proc.Proc, string, error) {
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, "", err
	}
	defer logf.Close()
	args = append(args, "--listen", addr) // the Go flag package takes -listen and --listen alike
	cmd := exec.Command("taskset", append([]string{"-c", cpu, bin}, args...)...)
	cmd.Env = append(append(os.Environ(), "GOMAXPROCS=1"), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	p, err := proc.StartCmd(name, "http://"+addr+"/readyz", cmd)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w (log %s)", name, err, logf.Name())
	}
	return p, "http://" + addr, nil
}

// startMCPBlob starts `mcpblob serve` open (the session and 2026-07-28
// rows, and the fixed-rate runs) and a second one with an API key.
func (g *p6Rig) startMCPBlob(ctx context.Context, bin string, blob readSize) error {
	if _, err := seed.Store(filepath.Join(g.dir, "data"), seed.Blob{Key: blob.key(), Size: blob.n}); err != nil {
		return err
	}
	p, base, err := g.pinned("mcpblob", bin, "serve", "--data", filepath.Join(g.dir, "data"))
	if err != nil {
		return err
	}
	s := &system{name: "mcpblob", note: "`mcpblob serve`, local store", proc: p, base: base}
	g.systems = append(g.systems, s)
	sid, err := p6Session(ctx, base, "")
	if err != nil {
		return fmt.Errorf("mcpblob: %w", err)
	}
	read := `{"uri":"blob:///` + blob.key() + `"}`
	g.rows = append(g.rows,
		g.mcpRow(p6RowRead, s, "resources/read", read, mcpc.Protocol, sid, ""),
		g.mcpRow(p6RowList, s, "tools/list", "-", mcpc.Protocol, sid, ""),
		g.mcpRow(p6RowModern, s, "resources/read", read, p6Modern, "", ""))
	if err := g.startKeyed(ctx, bin, blob); err != nil {
		g.skipped = append(g.skipped, p6RowKey+": "+err.Error())
	}
	if err := g.startTraced(ctx, bin, blob); err != nil {
		g.skipped = append(g.skipped, p6RowTraced+": "+err.Error())
	}
	return nil
}

// startTraced serves the blob again with tracing on (OTEL_* as an operator
// sets them: every request sampled, OTLP/HTTP), exporting to a receiver in
// the harness that takes the batches and answers 200: the server pays
// what tracing costs it (spans, batching, export), the receiver's work is
// not on its CPU.
func (g *p6Rig) startTraced(ctx context.Context, bin string, blob readSize) error {
	data := filepath.Join(g.dir, "data-traced")
	if _, err := seed.Store(data, seed.Blob{Key: blob.key(), Size: blob.n}); err != nil {
		return err
	}
	sink, err := startOTLPSink()
	if err != nil {
		return err
	}
	g.closers = append(g.closers, sink.Close)
	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + sink.Addr, "OTEL_TRACES_SAMPLER=always_on", "OTEL_SERVICE_NAME=bench-p6"}
	p, base, err := startPinnedEnv(g.dir, p6ServerCPU, "mcpblob-traced", bin, env, "serve", "--data", data)
	if err != nil {
		return err
	}
	g.procs = append(g.procs, p)
	sid, err := p6Session(ctx, base, "")
	if err != nil {
		return err
	}
	s := &system{name: "mcpblob (tracing on)", proc: p, base: base}
	g.rows = append(g.rows, g.mcpRow(p6RowTraced, s, "resources/read", `{"uri":"blob:///`+blob.key()+`"}`, mcpc.Protocol, sid, ""))
	return nil
}

// startOTLPSink is a loopback OTLP/HTTP receiver that reads each export
// request whole and answers 200 with an empty body.
func startOTLPSink() (*http.Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Addr: ln.Addr().String(), ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-protobuf")
		})}
	go srv.Serve(ln)
	return srv, nil
}

// startKeyed mints an API key with `mcpblob apikey`, serves with it and
// uploads the blob as the key's principal (each principal has a namespace
// of its own: the blob a seeded store holds is not in it).
func (g *p6Rig) startKeyed(ctx context.Context, bin string, blob readSize) error {
	cmd := exec.CommandContext(ctx, bin, "apikey", "bench")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("mcpblob apikey: %w: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	keys := filepath.Join(g.dir, "keys")
	if err := os.WriteFile(keys, []byte(lines[len(lines)-1]+"\n"), 0o600); err != nil {
		return err
	}
	key := strings.TrimSpace(string(out))
	p, base, err := g.pinned("mcpblob-key", bin, "serve", "--data", filepath.Join(g.dir, "data-key"), "--auth-keys", keys)
	if err != nil {
		return err
	}
	return g.bearerRead(ctx, p6RowKey, &system{name: "mcpblob (API key)", proc: p, base: base}, key, blob)
}

// bearerRead uploads the blob as the bearer's principal (each principal
// has a namespace of its own), opens a session with the bearer and adds
// the row that reads the blob with it.
func (g *p6Rig) bearerRead(ctx context.Context, row string, s *system, bearer string, blob readSize) error {
	if err := putBlob(ctx, s.base, bearer, blob); err != nil {
		return err
	}
	sid, err := p6Session(ctx, s.base, bearer)
	if err != nil {
		return err
	}
	g.rows = append(g.rows, g.mcpRow(row, s, "resources/read", `{"uri":"blob:///`+blob.key()+`"}`, mcpc.Protocol, sid, bearer))
	return nil
}

// startPeers starts go-sdk, the fasthttp floor and nginx, pinned.
func (g *p6Rig) startPeers(ctx context.Context, bins map[string]string, files string, blob readSize) {
	if p, base, err := g.pinned("go-sdk", bins["gosdk"], "-dir", files); err != nil {
		g.skipped = append(g.skipped, p6RowGoSDK+": "+err.Error())
	} else {
		s := &system{name: "go-sdk", note: "bench/peers/gosdk on modelcontextprotocol/go-sdk", proc: p, base: base}
		g.systems = append(g.systems, s)
		if sid, err := p6Session(ctx, base, ""); err != nil {
			g.skipped = append(g.skipped, p6RowGoSDK+": "+err.Error())
		} else {
			g.rows = append(g.rows, g.mcpRow(p6RowGoSDK, s, "resources/read", `{"uri":"blob:///`+blob.key()+`"}`, mcpc.Protocol, sid, ""))
		}
	}
	addr, err := proc.FreeAddr()
	if err == nil {
		var p *proc.Proc
		if p, err = startNginx(filepath.Join(g.dir, "nginx"), files, addr, "taskset", "-c", p6ServerCPU); err == nil {
			g.procs = append(g.procs, p)
			s := &system{name: "nginx", note: "nginx, one worker, sendfile", proc: p, base: "http://" + addr, plain: true}
			g.systems = append(g.systems, s)
			g.rows = append(g.rows, g.getRow(p6RowNginx, s, blob))
		}
	}
	if err != nil {
		g.skipped = append(g.skipped, p6RowNginx+": "+err.Error())
	}
	if p, base, err := g.pinned("fasthttpfile", bins["fasthttpfile"], "-dir", files); err != nil {
		g.skipped = append(g.skipped, p6RowFloor+": "+err.Error())
	} else {
		s := &system{name: p6Floor, note: "bench/peers/fasthttpfile: fasthttp alone, reading the file per request", proc: p, base: base, plain: true}
		g.systems = append(g.systems, s)
		g.rows = append(g.rows, g.getRow(p6RowFloor, s, blob))
	}
}

func (g *p6Rig) mcpRow(name string, s *system, method, params, protocol, sid, key string) *p6Row {
	era, dash := "session", func(v string) string {
		if v == "" {
			return "-"
		}
		return v
	}
	if protocol == p6Modern {
		era = "modern"
	}
	return &p6Row{name: name, system: s, url: s.base + "/mcp", args: []string{"mcp", method, params, protocol, dash(sid), dash(key), era}}
}

func (g *p6Rig) getRow(name string, s *system, blob readSize) *p6Row {
	return &p6Row{name: name, system: s, url: s.base + "/" + blob.key(), args: []string{"get"}}
}

// putBlob stores blob's generated bytes through PUT /v1/blobs/{key} as key.
func putBlob(ctx context.Context, base, key string, blob readSize) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+"/v1/blobs/"+blob.key(), io.LimitReader(seed.Reader(blob.n), blob.n))
	if err != nil {
		return err
	}
	req.ContentLength = blob.n
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := plainHTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("PUT /v1/blobs/%s: http %d: %s", blob.key(), resp.StatusCode, b)
	}
	return nil
}

// p6Session opens a 2025-11-25 session on base (with the bearer key when
// set) and returns its id.
func p6Session(ctx context.Context, base, key string) (string, error) {
	c := mcpc.New(base + "/mcp")
	if key != "" {
		c.Client = c.Client.WithBearer(key)
	}
	if err := c.Init(ctx, nil); err != nil {
		return "", err
	}
	if c.Session == "" {
		return "", errors.New("initialize gave no Mcp-Session-Id")
	}
	return c.Session, nil
}
