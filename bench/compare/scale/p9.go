package scale

// P9: the S3 path. mcpblob on its S3 backend over a single SeaweedFS node
// (`weed server -s3`: master, volume server, filer and S3 gateway in one
// process), against SeaweedFS itself driven by minio-go from the harness:
// uploads (tools/call upload_file with a data URI, PUT /v1/blobs) against
// SeaweedFS's own PUT of the same bytes, reads (resources/read, /d) against
// a presigned GET of the same object, and how many bytes SeaweedFS wrote
// to its volume files (and the filer's metadata) per byte uploaded (1.0:
// each byte written once).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/bench/internal/pair"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
	"github.com/mcpblob/mcpblob/loadtest/rig/seed"
	"github.com/mcpblob/mcpblob/loadtest/rig/weed"
)

// s3Rig is a single SeaweedFS node with a bucket that an mcpblob serves
// through its S3 backend, and a minio-go client of the harness's own on
// the same bucket.
type s3Rig struct {
	weed   *weed.Service
	client *minio.Client
	bucket string
	srv    *scaleServer
}

func startS3Rig(ctx context.Context, bins map[string]string, work string) (*s3Rig, error) {
	r := &s3Rig{bucket: "scale"}
	w, creds, client, err := StartS3Node(ctx, bins["weed"], filepath.Join(work, "scale-weed"), r.bucket)
	if err != nil {
		return nil, err
	}
	r.weed, r.client = w, client
	r.srv, err = startScaleServer(ctx, bins["mcpblob"],
		[]string{"--data", filepath.Join(work, "scale-data"), "--s3-endpoint", "http://" + w.Addr.HTTP, "--s3-bucket", r.bucket},
		"MCPBLOB_S3_ACCESS_KEY="+creds.AccessKey, "MCPBLOB_S3_SECRET_KEY="+creds.SecretKey)
	if err != nil {
		w.Stop()
		return nil, err
	}
	return r, nil
}

func (r *s3Rig) stop() {
	r.srv.proc.Stop()
	r.weed.Stop()
}

// newP9Target is P9 before it runs (runP9 puts the size in its title).
func newP9Target() *pair.Target {
	return &pair.Target{ID: "P9", Title: "the S3 path, 1 GiB", Goal: "uploads ≥ 0.8× SeaweedFS's own PUT, each byte written once; reads ≥ 0.8× SeaweedFS presigned GET; RSS growth ≤ 64 MiB"}
}

// p9Op is one timed operation moving size bytes.
type p9Op struct {
	name   string
	write  bool // uploads: settle the disk first and count SeaweedFS's disk writes
	mcpblb bool // mcpblob serves it (its RSS and storage operations count)
	run    func(ctx context.Context) error
}

// p9Sample is one run of one operation.
type p9Sample struct {
	mbps    float64
	growth  float64          // MiB over mcpblob's idle RSS (mcpblob operations)
	written float64          // SeaweedFS's disk bytes written ÷ size (uploads)
	ops     map[string]int64 // mcpblob's storage operations by op during the run
	cpu     cpuUse           // mcpblob, SeaweedFS, harness
	err     error
}

func runP9(ctx context.Context, cfg *Options, rig *s3Rig, t *pair.Target, start time.Time) {
	size := int64(1 << 30)
	if cfg.Quick {
		size = 256 << 20
	}
	t.Title = fmt.Sprintf("the S3 path, %d MiB", size>>20)
	measure.Logf("P9 S3 path, %d MiB: building the bodies", size>>20)
	raw, err := io.ReadAll(seed.Reader(size))
	if err != nil {
		t.Errors = append(t.Errors, err.Error())
		return
	}
	sum := seed.SHA256(size)
	body := dataURIBody("p9/upload-file", raw)
	ops := p9Ops(rig, raw, body)
	samples := make([][]p9Sample, len(ops))
	// Uploads (ops 0–2), then reads (3–5) of the object PUT /v1/blobs
	// wrote, each group rotating its order from run to run.
	for r := range scaleRuns {
		if !anotherRun(cfg, start, r, t) {
			break
		}
		for _, group := range [][]int{{0, 1, 2}, {3, 4, 5}} {
			for k := range group {
				oi := group[(k+r)%len(group)]
				samples[oi] = append(samples[oi], p9Once(ctx, rig, ops[oi], size))
			}
		}
	}
	for _, key := range []string{"p9/upload-file", "p9/put"} {
		if err := p9Check(ctx, rig.srv, key, size, sum); err != nil {
			t.Errors = append(t.Errors, err.Error())
		}
	}
	p9Report(t, size, ops, samples, rig.srv)
}

// dataURIBody is the tools/call upload_file request carrying raw as a
// base64 data URI, built once so the harness spends no CPU on it while
// timed.
func dataURIBody(key string, raw []byte) []byte {
	prefix := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file","arguments":{"key":"` + key + `","filename":"bench.bin","file":"data:application/octet-stream;base64,`
	suffix := `"}}}`
	body := make([]byte, 0, len(prefix)+base64.StdEncoding.EncodedLen(len(raw))+len(suffix))
	body = append(body, prefix...)
	body = base64.StdEncoding.AppendEncode(body, raw)
	return append(body, suffix...)
}

func p9Ops(rig *s3Rig, raw, body []byte) []p9Op {
	srv := rig.srv
	size := int64(len(raw))
	var mcp *mcpc.Client
	var link string
	return []p9Op{
		{name: "tools/call upload_file", write: true, mcpblb: true, run: func(ctx context.Context) error {
			if mcp == nil {
				c, err := srv.mcpClient(ctx)
				if err != nil {
					return err
				}
				mcp = c
			}
			return measure.UploadOnce(ctx, mcp, body)
		}},
		{name: "PUT /v1/blobs", write: true, mcpblb: true, run: func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.base+"/v1/blobs/p9/put", bytes.NewReader(raw))
			req.Header.Set("Content-Type", "application/octet-stream")
			resp, err := srv.hc.Do(req)
			if err != nil {
				return err
			}
			ans, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				return fmt.Errorf("PUT /v1/blobs: http %d: %.200s", resp.StatusCode, ans)
			}
			return nil
		}},
		// minio-go v7.4.1 over plain HTTP, given an io.ReaderAt of known
		// size: 64 parts of 16 MiB, four uploading at once, each with a
		// streaming SigV4 signature (a SHA-256 of every 64 KiB chunk, which
		// the server checks); no CRC32C trailer, as the client does not
		// enable TrailingHeaders. mcpblob's parts carry a CRC32C instead,
		// and it hashes the object once with SHA-256 for its record.
		{name: "SeaweedFS PUT (minio-go)", write: true, run: func(ctx context.Context) error {
			_, err := rig.client.PutObject(ctx, rig.bucket, "p9/weed-put", bytes.NewReader(raw), size,
				minio.PutObjectOptions{ContentType: "application/octet-stream"})
			return err
		}},
		{name: "resources/read", mcpblb: true, run: func(ctx context.Context) error {
			if mcp == nil {
				c, err := srv.mcpClient(ctx)
				if err != nil {
					return err
				}
				mcp = c
			}
			resp, err := mcp.Post(ctx, "resources/read", map[string]string{"uri": "blob:///p9/put"})
			if err != nil {
				return err
			}
			_, _, err = measure.Drain(resp, time.Now(), make([]byte, 256<<10), 4*((size+2)/3))
			return err
		}},
		{name: "/d link", mcpblb: true, run: func(ctx context.Context) error {
			if link == "" {
				u, err := srv.link(ctx, "p9/put")
				if err != nil {
					return err
				}
				link = u
			}
			return getAll(ctx, srv.hc, link, size)
		}},
		{name: "SeaweedFS presigned GET", run: func(ctx context.Context) error {
			u, err := rig.client.PresignedGetObject(ctx, rig.bucket, "p9/put", time.Hour, nil)
			if err != nil {
				return err
			}
			return getAll(ctx, srv.hc, u.String(), size)
		}},
	}
}

// getAll GETs url and reads the body to the end, checking it has size bytes.
func getAll(ctx context.Context, hc *http.Client, url string, size int64) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	n, _, err := measure.Drain(resp, time.Now(), make([]byte, 256<<10), size)
	if err == nil && n != size {
		err = fmt.Errorf("GET: %d bytes, want %d", n, size)
	}
	return err
}

// p9Once runs op once: on a settled disk for an upload, with mcpblob's RSS
// peak, the processes' CPU, SeaweedFS's disk writes and mcpblob's storage
// operations measured around it.
func p9Once(ctx context.Context, rig *s3Rig, op p9Op, size int64) p9Sample {
	if op.write {
		measure.SettleDisk()
	}
	ops0 := storageOps(ctx, rig.srv)
	written0 := diskWritten(rig.weed.PID())
	w := measure.WatchPeak(rig.srv.pid())
	cpu := startCPU(rig.srv.pid(), rig.weed.PID(), os.Getpid())
	rctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	t0 := time.Now()
	err := op.run(rctx)
	el := time.Since(t0)
	cancel()
	smp := p9Sample{cpu: cpu.end(), err: err}
	peak := w.End()
	if op.mcpblb {
		smp.growth = growthMiB(peak, rig.srv.idle)
	}
	if op.write {
		smp.written = float64(diskWritten(rig.weed.PID())-written0) / float64(size)
	}
	smp.ops = subOps(storageOps(ctx, rig.srv), ops0)
	if err == nil {
		smp.mbps = measure.MBps(size, el)
	}
	measure.Logf("  P9 %s: %.0f MB/s, RSS +%.0f MiB, SeaweedFS wrote %.2f× the bytes, storage ops %v, %v", op.name, smp.mbps, smp.growth, smp.written, smp.ops, err)
	return smp
}

// diskWritten is write_bytes of /proc/PID/io: the bytes the process caused
// to be written to storage (page cache writes count when dirtied).
func diskWritten(pid int) int64 {
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

// storageOps sums mcpblob_storage_operations_total on the admin listener's
// /metrics by op (every outcome).
func storageOps(ctx context.Context, s *scaleServer) map[string]int64 {
	ops := map[string]int64{}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.admin+"/metrics", nil)
	resp, err := s.hc.Do(req)
	if err != nil {
		return ops
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "mcpblob_storage_operations_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(line, "} ")
		_, op, ok2 := strings.Cut(labels, `op="`)
		if !ok || !ok2 {
			continue
		}
		op, _, _ = strings.Cut(op, `"`)
		n, _ := strconv.ParseFloat(strings.TrimSpace(value), 64)
		ops[op] += int64(n)
	}
	return ops
}

func subOps(after, before map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for op, n := range after {
		if n-before[op] > 0 {
			d[op] = n - before[op]
		}
	}
	return d
}

// p9Check compares the stored blob's size and SHA-256 with the uploaded
// bytes' (HEAD /v1/blobs/{key}).
func p9Check(ctx context.Context, s *scaleServer, key string, size int64, sum string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodHead, s.base+"/v1/blobs/"+key, nil)
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if got := resp.Header.Get("x-mcp-sha256"); resp.StatusCode != http.StatusOK || resp.ContentLength != size || got != sum {
		return fmt.Errorf("%s after the uploads: http %d, %d bytes, sha256 %q; want %d bytes, %s", key, resp.StatusCode, resp.ContentLength, got, size, sum)
	}
	return nil
}

func p9Report(t *pair.Target, size int64, ops []p9Op, samples [][]p9Sample, srv *scaleServer) {
	pairs := []struct {
		ours, ref int
		want      float64
	}{{0, 2, 0.8}, {1, 2, 0.8}, {3, 5, 0.8}, {4, 5, 0.8}}
	for _, pr := range pairs {
		p := pair.Runs{Label: ops[pr.ours].name + " ÷ " + ops[pr.ref].name, Unit: "MB/s", RefName: ops[pr.ref].name, Want: pr.want}
		for r := range samples[pr.ours] {
			p.Ours = append(p.Ours, samples[pr.ours][r].mbps)
			p.Ref = append(p.Ref, samples[pr.ref][r].mbps)
		}
		t.Pairs = append(t.Pairs, p)
		if !p.Met() {
			t.Why = append(t.Why, p9Why(p, ops[pr.ours], samples[pr.ours], samples[pr.ref]))
		}
	}
	var growth, written []float64
	var d strings.Builder
	fmt.Fprintf(&d, "mcpblob idle RSS %.0f MiB. \"SeaweedFS wrote\" is the SeaweedFS process's write_bytes (/proc/PID/io: its volume files and the filer's metadata) over the run ÷ %d MiB: 1.0 means each byte reached the disk once. Storage operations are mcpblob's (/metrics on --admin-listen) during the run.\n\n", inMiB(srv.idle), size>>20)
	d.WriteString("| operation | run | MB/s | mcpblob RSS growth MiB | SeaweedFS wrote | mcpblob storage ops | cores: mcpblob / SeaweedFS / harness / other processes | error |\n|---|---|---|---|---|---|---|---|\n")
	for oi, op := range ops {
		for r, s := range samples[oi] {
			if op.mcpblb {
				growth = append(growth, s.growth)
			}
			if op.write && op.mcpblb {
				written = append(written, s.written)
			}
			errText := ""
			if s.err != nil {
				errText = s.err.Error()
				t.Errors = append(t.Errors, fmt.Sprintf("%s run %d: %v", op.name, r+1, s.err))
			}
			wrote := "–"
			if op.write {
				wrote = fmt.Sprintf("%.2f×", s.written)
			}
			fmt.Fprintf(&d, "| %s | %d | %.0f | %s | %s | %s | %.2f / %.2f / %.2f / %.2f | %s |\n", op.name, r+1, s.mbps, growthCell(op, s), wrote, opsText(s.ops),
				s.cpu.cores(0), s.cpu.cores(1), s.cpu.cores(2), s.cpu.others(), errText)
		}
	}
	worstBound(t, "mcpblob RSS growth", "MiB", 64, growth)
	if b := t.Bounds[len(t.Bounds)-1]; !b.Met() {
		t.Why = append(t.Why, p9MemoryWhy(b.Value, ops, samples))
	}
	worstBound(t, "SeaweedFS disk bytes written per byte uploaded through mcpblob", "×", 1.15, written)
	if b := t.Bounds[len(t.Bounds)-1]; !b.Met() {
		t.Why = append(t.Why, fmt.Sprintf("each uploaded byte reached SeaweedFS's disk %.2f times (SeaweedFS's own PUT: %.2f×): the S3 store stages the upload under .mcpblob/tmp/ and copies it server side at commit (a second pass, see the \"copy\"/put counts in the table); writing the final key in one pass (metadata known up front, or a multipart upload of the final key) would close it.",
			b.Value, maxWritten(samples[2])))
	}
	t.Detail = d.String() + t.Detail
}

func growthCell(op p9Op, s p9Sample) string {
	if !op.mcpblb {
		return "–"
	}
	return fmt.Sprintf("%.0f", s.growth)
}

func maxWritten(s []p9Sample) float64 {
	var m float64
	for _, x := range s {
		m = max(m, x.written)
	}
	return m
}

func opsText(ops map[string]int64) string {
	if len(ops) == 0 {
		return "–"
	}
	var parts []string
	for _, op := range []string{"put", "copy", "get", "stat", "list", "delete", "presign"} {
		if n := ops[op]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", op, n))
		}
	}
	for op, n := range ops {
		if !strings.Contains("put copy get stat list delete presign", op) {
			parts = append(parts, fmt.Sprintf("%s %d", op, n))
		}
	}
	return strings.Join(parts, ", ")
}

// p9Why explains a ratio below 0.8× from the runs' CPU: where the two
// cores went in mcpblob's run against the reference's.
func p9Why(p pair.Runs, op p9Op, ours, ref []p9Sample) string {
	_, med, _, _ := p.Spread()
	avg := func(s []p9Sample, i int) float64 {
		var v float64
		for _, x := range s {
			v += x.cpu.cores(i) / float64(len(s))
		}
		return v
	}
	others := func(s []p9Sample) float64 {
		var v float64
		for _, x := range s {
			v += x.cpu.others() / float64(len(s))
		}
		return v
	}
	msg := fmt.Sprintf("%s reached %.2f×: in its runs mcpblob used %.2f cores, SeaweedFS %.2f, the harness %.2f and other processes %.2f; in %s's runs SeaweedFS used %.2f, the harness %.2f and other processes %.2f",
		p.Label, med, avg(ours, 0), avg(ours, 1), avg(ours, 2), others(ours), p.RefName, avg(ref, 1), avg(ref, 2), others(ref))
	if op.write {
		var w float64
		for _, x := range ours {
			w += x.written / float64(len(ours))
		}
		if w > 1.3 {
			return msg + fmt.Sprintf("; SeaweedFS wrote %.2f× the bytes, so the upload pays a second pass over the data (staging, then a server-side copy): writing the final object once would close most of the gap.", w)
		}
		return msg + "; the bytes reach the drive once, so the gap is mcpblob's own CPU per byte on cores SeaweedFS also needs (a profile of PUT /v1/blobs: the object's SHA-256 about half of it, copies into the part buffers and socket I/O most of the rest; upload_file adds the base64 decoding): less CPU per byte, such as decoding base64 straight into the part buffers, would close it."
	}
	return msg + "; a read through mcpblob is a second hop (SeaweedFS → mcpblob → client, plus base64 for resources/read) on the same two cores: a larger read buffer from S3, or the redirect mode (--download-redirect) for /d, would close it."
}

// p9MemoryWhy explains RSS growth over 64 MiB: which operation peaked, and
// whether the peak climbed from run to run (memory kept between requests)
// or stood at the same height (what one request holds).
func p9MemoryWhy(worst float64, ops []p9Op, samples [][]p9Sample) string {
	perRun := make([]float64, len(samples[0]))
	worstOp := ""
	for oi, op := range ops {
		if !op.mcpblb {
			continue
		}
		for r, s := range samples[oi] {
			perRun[r] = max(perRun[r], s.growth)
			if s.growth == worst && worstOp == "" {
				worstOp = op.name
			}
		}
	}
	msg := fmt.Sprintf("mcpblob's RSS grew up to %.0f MiB on the S3 path (limit 64), worst during %s; by run: %s MiB", worst, worstOp, msList(perRun))
	if perRun[0] > 0 && perRun[len(perRun)-1] > 1.3*perRun[0] {
		return msg + ". It climbs from run to run, so memory stays held between requests: the S3 store keeps three part buffers (24 MiB with 8 MiB parts) between uploads by design, and the Go heap's headroom (GOGC=100) over the request path's garbage is not returned to the OS at once; a GOMEMLIMIT, or fewer allocations per request, would close it."
	}
	return msg + ". It is the same in every run, so one request holds it: the S3 writer holds three parts (8 MiB each by default: two in flight, one filling) per upload plus the request's buffers; smaller parts, or one part in flight (slower: see storage/s3 BenchmarkThroughput), would close it."
}
