package tusb

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"github.com/mcpblob/mcpblob/bench/internal/pair"
)

// plan is the sizes and counts of one run of P11 and P12.
type plan struct {
	size, chunk int64
	runs        int // P11 runs per operation and store
	resumes     int // P12 runs
}

func newPlan(quick bool) plan {
	if quick {
		return plan{size: 64 << 20, chunk: 8 << 20, runs: 1, resumes: 1}
	}
	return plan{size: 1 << 30, chunk: 8 << 20, runs: 3, resumes: 3}
}

// op is one P11 operation: size bytes to one server.
type op struct {
	name string
	tus  bool    // a tus upload (its PATCH times are kept)
	srv  *server // nil for the store's own pace (floorOp)
	run  func(ctx context.Context, r int) (cleanup func(), err error)
}

// sample is one run of one operation.
type sample struct {
	mbps       float64
	growth     float64 // MiB over the server's idle RSS
	srvWritten float64 // the server process's write_bytes ÷ size
	s3Written  float64 // SeaweedFS's write_bytes ÷ size (S3 rigs)
	patchMed   float64 // tus: the median PATCH but the last, ms
	lastPatch  float64 // tus: the last PATCH (the one that completes the upload), ms
	err        error
}

// written is the bytes that reached the store per byte uploaded: on S3
// SeaweedFS's, on the local store the server's own.
func (s sample) written(onS3 bool) float64 {
	if onS3 {
		return s.s3Written
	}
	return s.srvWritten
}

// storeResult is P11 on one store: its operations and their samples.
type storeResult struct {
	name    string
	ops     []op
	samples [][]sample
	idle    map[string]int64 // idle RSS by server name
}

// ops are mcpblob's tus upload, its PUT /v1/blobs and tusd's tus upload of
// raw, and on S3 the store's own pace (floorOp).
func ops(rig *storeRig, raw []byte, p plan) []op {
	mb, td := rig.mcpblob, rig.tusd
	o := []op{
		{name: "mcpblob tus", tus: true, srv: mb, run: func(ctx context.Context, r int) (func(), error) {
			key := fmt.Sprintf("p11/tus-%d", r)
			err := mb.tus.upload(ctx, mb.path, raw, p.chunk, map[string]string{"key": key, "filename": "p11.bin", "filetype": "application/octet-stream"})
			return func() { deleteBlob(ctx, mb, key) }, err
		}},
		{name: "mcpblob PUT /v1/blobs", srv: mb, run: func(ctx context.Context, r int) (func(), error) {
			key := fmt.Sprintf("p11/put-%d", r)
			return func() { deleteBlob(ctx, mb, key) }, putBlob(ctx, mb, key, raw)
		}},
		{name: "tusd", tus: true, srv: td, run: func(ctx context.Context, r int) (func(), error) {
			u, err := td.tus.create(ctx, td.path, int64(len(raw)), map[string]string{"filename": "p11.bin", "filetype": "application/octet-stream"})
			if err == nil {
				_, err = td.tus.send(ctx, u, raw, 0, p.chunk)
			}
			return func() { terminate(ctx, td, u) }, err
		}},
	}
	if rig.s3 != nil {
		o = append(o, floorOp(rig, raw, p))
	}
	return o
}

// runStore measures every operation on rig p.runs times, rotating their
// order from run to run, and checks that mcpblob's tus upload stored the
// exact bytes (sha256) in the first run.
func runStore(ctx context.Context, rig *storeRig, raw []byte, p plan, sum string) *storeResult {
	res := &storeResult{name: rig.name, ops: ops(rig, raw, p), idle: map[string]int64{}}
	res.samples = make([][]sample, len(res.ops))
	for _, s := range []*server{rig.mcpblob, rig.tusd} {
		res.idle[s.name] = s.idle
	}
	measure.Logf("P11 %s store: %d MiB in %d MiB chunks, %d runs", rig.name, p.size>>20, p.chunk>>20, p.runs)
	for r := range p.runs {
		for k := range res.ops {
			oi := (k + r) % len(res.ops)
			smp, cleanup := runOnce(ctx, rig, res.ops[oi], r, p.size)
			if smp.err == nil && oi == 0 && r == 0 {
				smp.err = checkSHA(ctx, rig.mcpblob, "p11/tus-0", sum)
			}
			if cleanup != nil {
				cleanup()
			}
			res.samples[oi] = append(res.samples[oi], smp)
		}
	}
	return res
}

// fresh starts o's server again (an operation without one has none).
func (o op) fresh(ctx context.Context) error {
	if o.srv == nil {
		return nil
	}
	return o.srv.fresh(ctx)
}

// pid is o's server's PID, 0 without one.
func (o op) pid() int {
	if o.srv == nil {
		return 0
	}
	return o.srv.pid()
}

// growth is o's server's RSS peak over its idle RSS, in MiB (0 without a
// server).
func (o op) growth(peak int64) float64 {
	if o.srv == nil {
		return 0
	}
	return float64(max(0, peak-o.srv.idle)) / (1 << 20)
}

// runOnce runs o once, on a server process started for it and a settled
// disk, with the server's RSS peak and the bytes it (and SeaweedFS, on S3)
// wrote measured around it.
func runOnce(ctx context.Context, rig *storeRig, o op, r int, size int64) (sample, func()) {
	if err := o.fresh(ctx); err != nil {
		return sample{err: err}, nil
	}
	measure.SettleDisk()
	weedPID := 0
	if rig.weed != nil {
		weedPID = rig.weed.PID()
	}
	srvPID := o.pid()
	srv0, weed0 := ioWritten(srvPID), ioWritten(weedPID)
	w := measure.WatchPeak(srvPID)
	rctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	t0 := time.Now()
	cleanup, err := o.run(rctx, r)
	el := time.Since(t0)
	cancel()
	smp := sample{err: err, growth: o.growth(w.End())}
	smp.srvWritten = float64(ioWritten(srvPID)-srv0) / float64(size)
	if weedPID != 0 {
		smp.s3Written = float64(ioWritten(weedPID)-weed0) / float64(size)
	}
	if err == nil {
		smp.mbps = measure.MBps(size, el)
	}
	if o.tus && len(o.srv.tus.patches) > 1 {
		ps := o.srv.tus.patches
		smp.patchMed = float64(measure.MedianDur(ps[:len(ps)-1])) / 1e6
		smp.lastPatch = float64(ps[len(ps)-1]) / 1e6
	}
	measure.Logf("  P11 %s %s run %d: %.0f MB/s, RSS +%.0f MiB, server wrote %.2f×, SeaweedFS wrote %.2f×, PATCH median %.0f ms, last %.0f ms, %v",
		rig.name, o.name, r+1, smp.mbps, smp.growth, smp.srvWritten, smp.s3Written, smp.patchMed, smp.lastPatch, err)
	return smp, cleanup
}

// ioWritten is write_bytes of /proc/PID/io: the bytes the process caused
// to be written to storage, counted when the page is dirtied (so a
// temporary file deleted before writeback counts too); 0 for pid 0.
func ioWritten(pid int) int64 {
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "write_bytes:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return n
		}
	}
	return 0
}

// checkSHA compares the sha256 mcpblob reports for key with want.
func checkSHA(ctx context.Context, s *server, key, want string) error {
	got, err := blobSHA256(ctx, s, key)
	if err == nil && got != want {
		err = fmt.Errorf("blob %s: sha256 %s, want %s", key, got, want)
	}
	return err
}

// deleteBlob removes a blob a run stored (outside the timing), so the runs
// do not fill the disk.
func deleteBlob(ctx context.Context, s *server, key string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, s.base()+"/v1/blobs/"+key, nil)
	s.tus.do(req, http.StatusNoContent)
}

// terminate removes a tusd upload (the termination extension).
func terminate(ctx context.Context, s *server, u string) {
	if u == "" {
		return
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, u, nil)
	req.Header.Set("Tus-Resumable", "1.0.0")
	s.tus.do(req, http.StatusNoContent)
}

// p11Target builds P11 from both stores' results.
func p11Target(p plan, stores []*storeResult, errs []string) *pair.Target {
	t := &pair.Target{Errors: errs, ID: "P11", Title: fmt.Sprintf("tus upload of %d MiB in %d MiB chunks", p.size>>20, p.chunk>>20),
		Goal: "≥ 0.9× PUT /v1/blobs and ≥ 1.0× tusd on the same store (local, S3); RSS growth ≤ 64 MiB; ≤ 1.05 bytes written to the store per byte uploaded"}
	for _, st := range stores {
		tus, put, td := mbpsOf(st.samples[0]), mbpsOf(st.samples[1]), mbpsOf(st.samples[2])
		vsPut := pair.Runs{Label: st.name + ": tus ÷ PUT /v1/blobs", Unit: "MB/s", Ours: tus, Ref: put, RefName: "PUT /v1/blobs", Want: 0.9}
		vsTusd := pair.Runs{Label: st.name + ": tus ÷ tusd", Unit: "MB/s", Ours: tus, Ref: td, RefName: "tusd", Want: 1.0}
		t.Pairs = append(t.Pairs, vsPut, vsTusd)
		growth := pair.Bound{Label: st.name + ": mcpblob RSS growth, tus (worst run)", Limit: 64, Unit: "MiB"}
		written := pair.Bound{Label: st.name + ": bytes written to the store per byte uploaded, tus (worst run)", Limit: 1.05, Unit: "×"}
		for _, s := range st.samples[0] {
			growth.Value = max(growth.Value, s.growth)
			written.Value = max(written.Value, s.written(st.name == "S3"))
		}
		t.Bounds = append(t.Bounds, growth, written)
		for i, o := range st.ops {
			for r, s := range st.samples[i] {
				if s.err != nil {
					t.Errors = append(t.Errors, fmt.Sprintf("%s %s run %d: %.200s", st.name, o.name, r+1, s.err))
				}
			}
		}
		t.Why = append(t.Why, p11Why(st, p, vsPut, vsTusd, growth, written)...)
	}
	t.Detail = p11Detail(p, stores)
	return t
}

func mbpsOf(s []sample) []float64 {
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = x.mbps
	}
	return v
}
