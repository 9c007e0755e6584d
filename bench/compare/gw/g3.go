package gw

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/compare/render"
	"github.com/mcpblob/mcpblob/bench/internal/pair"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
)

// G3, offload: the upstream's tool image returns the seeded image as one
// image content (base64 in its JSON); through a gateway with the default
// --offload-over (1 MiB) the client's result must hold a resource_link
// instead, the gateway's RSS stay flat while it stores the image, and the
// linked bytes, read back with resources/stream (every run) and
// resources/read (the first), have the upstream's sha256.

// g3Run is one run's figures.
type g3Run struct {
	answer   int           // bytes of the client's answer
	call     time.Duration // tools/call, request to the end of the answer
	link     bool          // the result's content is one resource_link
	uri      string
	growth   int64 // the gateway's RSS growth over the call and the read-backs
	sameSHA  int   // read-backs with the upstream's sha256
	readBack int   // read-backs made
}

// runG3 runs G3 on rig's offload gateway and fills t.
func runG3(ctx context.Context, rig *g23Rig, plan gPlan, sum string, t *pair.Target) {
	gw := rig.offload
	measure.Logf("G3 offload of a %d MiB image: %d runs", plan.image>>20, plan.runs)
	var runs []g3Run
	for r := range plan.runs {
		w := measure.WatchPeak(gw.pid())
		run, err := g3Once(ctx, gw.mcp, plan.image, sum, r == 0)
		run.growth = max(0, w.End()-gw.baseline)
		if err != nil {
			t.Errors = append(t.Errors, fmt.Sprintf("run %d: %s", r+1, render.Trunc(err.Error(), 200)))
		}
		runs = append(runs, run)
		measure.Logf("  G3 run %d: answer %d bytes in %v, resource_link %v, RSS growth %s, %d of %d read-backs sha256-equal", r+1, run.answer, run.call.Round(time.Millisecond), run.link, mib(run.growth), run.sameSHA, run.readBack)
	}
	var growth []int64
	noLink, badSHA := 0, 0
	for _, run := range runs {
		growth = append(growth, run.growth)
		if !run.link {
			noLink++
		}
		badSHA += run.readBack - run.sameSHA
	}
	t.Bounds = []pair.Bound{
		{Label: "RSS growth (worst run)", Value: maxMiB(growth), Limit: 32, Unit: "MiB"},
		{Label: "answers without a resource_link", Value: float64(noLink), Limit: 0, Unit: "runs"},
		{Label: "read-backs whose sha256 differs", Value: float64(badSHA), Limit: 0, Unit: "read-backs"},
	}
	if !t.Bounds[0].Met() {
		t.Why = append(t.Why, fmt.Sprintf("G3: RSS grew %.0f MiB > 32 MiB while the gateway stored the image: a heap profile of the gateway during the call says what holds it.", t.Bounds[0].Value))
	}
	t.Detail = g3Detail(runs)
}

// g3Once calls the tool, checks the answer's resource_link and reads the
// linked bytes back, hashing them.
func g3Once(ctx context.Context, c *mcpc.Client, size int64, sum string, readToo bool) (g3Run, error) {
	var run g3Run
	t0 := time.Now()
	resp, err := c.Post(ctx, "tools/call", map[string]any{"name": "image", "arguments": map[string]string{"key": gKeyImage}})
	if err != nil {
		return run, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	run.call, run.answer = time.Since(t0), len(body)
	if err != nil {
		return run, err
	}
	msg, err := mcpc.Message(resp.Header.Get("Content-Type"), body)
	if err != nil {
		return run, err
	}
	var ans struct {
		Result struct {
			Content []struct {
				Type string `json:"type"`
				URI  string `json:"uri"`
				Size int64  `json:"size"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &ans); err != nil {
		return run, fmt.Errorf("tools/call answer: %w", err)
	}
	cs := ans.Result.Content
	if len(cs) != 1 || cs[0].Type != "resource_link" || cs[0].URI == "" {
		return run, fmt.Errorf("tools/call answer (%d bytes) holds no resource_link: %.200s", len(body), msg)
	}
	run.link, run.uri = true, cs[0].URI
	h := sha256.New()
	run.readBack++
	if _, err := gStream(ctx, c, run.uri, size, make([]byte, 256<<10), h); err != nil {
		return run, fmt.Errorf("resources/stream of %s: %w", run.uri, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got == sum {
		run.sameSHA++
	}
	if readToo {
		run.readBack++
		n, got, err := c.ReadSHA256(ctx, run.uri)
		if err != nil {
			return run, fmt.Errorf("resources/read of %s: %w", run.uri, err)
		}
		if int64(n) == size && got == sum {
			run.sameSHA++
		}
	}
	return run, nil
}

// g3Detail is G3's table.
func g3Detail(runs []g3Run) string {
	var b strings.Builder
	b.WriteString("Each run: `tools/call image` through a gateway with the default `--offload-over` (1 MiB), the client's answer read whole, then the linked resource read back with `resources/stream` (its downloadUrl, a /d link of the store) and, in the first run, with `resources/read` (base64 streamed from the store), each hashed. RSS growth: the gateway's peak over the call and the read-backs minus its idle RSS after start.\n\n")
	b.WriteString("| run | answer to the client | tools/call time | resource_link | gateway RSS growth | read-backs sha256-equal |\n|--:|--:|--:|---|--:|---|\n")
	for i, r := range runs {
		fmt.Fprintf(&b, "| %d | %d bytes | %.0f ms | %v | %s | %d of %d |\n", i+1, r.answer, float64(r.call)/1e6, r.link, mibOrLess(r.growth), r.sameSHA, r.readBack)
	}
	return b.String()
}

// mibOrLess is mib, with "< 1 MiB" for growth under 1 MiB.
func mibOrLess(b int64) string {
	if b < 1<<20 {
		return "< 1 MiB"
	}
	return mib(b)
}
