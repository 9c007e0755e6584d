package main

// Workloads whose server side arrives with later issues. Each runs only when
// the probe finds the feature; otherwise the report carries a "not available
// yet" row with the reason. The client side follows docs/protocol.md.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
	"github.com/mcpblob/mcpblob/loadtest/rig/probe"
	"github.com/mcpblob/mcpblob/loadtest/rig/seed"
)

// laterResult is a P3/P4/P5 outcome: a table, or why there is none.
type laterResult struct {
	id, title, target string
	table             *table
	unavailable       string // "the server lacks …": the target is missed, not skipped
}

func later(ctx context.Context, cfg *config, work string, bins map[string]string, systems []*system, feat probe.Features, rep *report, start time.Time) {
	byName := map[string]*system{}
	for _, s := range systems {
		byName[s.name] = s
	}
	// P3
	if !feat.ResourceStream {
		rep.p3 = &p3Result{unavailable: "the server lacks a feature: it does not declare capabilities.resources.stream"}
	} else if time.Since(start) < cfg.budget {
		rep.p3 = runP3(ctx, cfg, work, bins, byName)
	}
	// P4
	p4 := &laterResult{id: "P4", title: "tools/call upload_file with a 256 MiB data URI", target: "≥ 30× go-sdk and mcp-go; RSS growth ≤ 32 MiB"}
	if !feat.UploadFile {
		p4.unavailable = "the server lacks a feature: tools/list has no upload_file"
	} else if time.Since(start) < cfg.budget {
		p4.table = runP4(ctx, cfg, byName)
	}
	// P5
	p5 := &laterResult{id: "P5", title: "multipart upload, 1 GiB", target: "≥ 0.8× raw disk write; RSS growth ≤ 32 MiB"}
	if !feat.Uploads {
		p5.unavailable = "the server lacks a feature: a 1-byte multipart upload to an endpoint minted by POST /v1/uploads is not stored (upload endpoints /u/{token})"
	} else if time.Since(start) < cfg.budget {
		p5.table = runP5(ctx, cfg, work, byName)
	}
	rep.later = []*laterResult{p4, p5}
}

// streamOnce runs resources/stream and reads the bytes in whichever mode
// the server answers: direct (200, non-JSON), redirect (followed by the
// HTTP client), or downloadUrl (200 JSON naming a URL to GET).
func streamOnce(ctx context.Context, c *mcpc.Client, key string, size int64, buf []byte) (time.Duration, error) {
	t0 := time.Now()
	resp, err := c.Post(ctx, "resources/stream", map[string]string{"uri": "blob:///" + key})
	if err != nil {
		return 0, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && resp.StatusCode == http.StatusOK {
		var env struct {
			Result struct {
				DownloadURL string `json:"downloadUrl"`
			} `json:"result"`
			Error *mcpc.RPCError `json:"error"`
		}
		err := json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
		if err != nil {
			return 0, err
		}
		if env.Error != nil {
			return 0, env.Error
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, env.Result.DownloadURL, nil)
		if resp, err = c.HTTP.Do(req); err != nil {
			return 0, err
		}
	}
	n, ttfb, err := measure.Drain(resp, t0, buf, size)
	if err == nil && n != size {
		err = fmt.Errorf("streamed %d bytes, want %d", n, size)
	}
	return ttfb, err
}

// runP4 sends the same tools/call upload_file request (a data URI of the
// seeded bytes, built once in memory) to mcpblob and the peers.
func runP4(ctx context.Context, cfg *config, by map[string]*system) *table {
	size := int64(256 << 20)
	if cfg.quick {
		size = 16 << 20
	}
	measure.Logf("P4 tools/call data URI %d MiB", size>>20)
	raw, _ := io.ReadAll(seed.Reader(size))
	prefix := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file","arguments":{"key":"bench-upload","filename":"bench.bin","file":"data:application/octet-stream;base64,`
	suffix := `"}}}`
	body := make([]byte, 0, len(prefix)+base64.StdEncoding.EncodedLen(len(raw))+len(suffix))
	body = append(body, prefix...)
	body = base64.StdEncoding.AppendEncode(body, raw)
	body = append(body, suffix...)
	raw = nil
	var list []*system
	for _, n := range []string{"mcpblob", "go-sdk", "mcp-go"} {
		if s := by[n]; s != nil {
			list = append(list, s)
		}
	}
	// mcpblob's three runs come first, then three per peer (each takes
	// ~20 s and GiBs of RSS); run i of each pairs with mcpblob's run i. Not
	// alternated: an mcpblob upload right after a go-sdk run ran 2–3×
	// slower in every trial on the 2-core VM, the idle peer using no CPU
	// meanwhile (likely the page cache waiting for memory the VM gets back
	// from the host).
	var order []int
	for si := range list {
		for range 3 {
			order = append(order, si)
		}
	}
	samples := make([][]sample, len(list))
	for _, si := range order {
		s := list[si]
		samples[si] = append(samples[si], timedWrite("P4", s, size, func() error { return measure.UploadOnce(ctx, s.mcp, body) }))
	}
	return summarize("P4", "tools/call upload_file", size, list, samples)
}

// runP5 uploads 1 GiB as multipart/form-data to an upload endpoint minted
// with POST /v1/uploads, against writing the same bytes to a file (with
// fsync) in the same folder tree.
func runP5(ctx context.Context, cfg *config, work string, by map[string]*system) *table {
	size := int64(1 << 30)
	if cfg.quick {
		size = 64 << 20
	}
	measure.Logf("P5 multipart upload %d MiB", size>>20)
	mb := by["mcpblob"]
	disk := &system{name: "raw disk write"}
	list := []*system{mb, disk}
	samples := make([][]sample, 2)
	for r := range 3 {
		for i := range list {
			si := (i + r) % 2
			run := func() error { return multipartOnce(ctx, mb, fmt.Sprintf("bench-mp-%d", r), size) }
			if si == 1 {
				run = func() error { return diskWrite(filepath.Join(work, fmt.Sprintf("disk-%d.bin", r)), size) }
			}
			samples[si] = append(samples[si], timedWrite("P5", list[si], size, run))
		}
	}
	return summarize("P5", "multipart upload", size, list, samples)
}

func multipartOnce(ctx context.Context, s *system, key string, size int64) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	mint, _ := json.Marshal(map[string]any{"key": key, "maxSize": size, "ttlSeconds": 600})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/v1/uploads", bytes.NewReader(mint))
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.mcp.HTTP.Do(req)
	if err != nil {
		return err
	}
	var up struct{ URL, Method string }
	err = json.NewDecoder(resp.Body).Decode(&up)
	resp.Body.Close()
	if err != nil || resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST /v1/uploads: http %d %v", resp.StatusCode, err)
	}
	if up.Method == "" {
		up.Method = http.MethodPost
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		part, err := mw.CreateFormFile("file", "bench.bin")
		if err == nil {
			_, err = io.CopyBuffer(part, seed.Reader(size), make([]byte, 1<<20))
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, _ = http.NewRequestWithContext(ctx, up.Method, up.URL, pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err = s.mcp.HTTP.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("upload: http %d", resp.StatusCode)
	}
	return nil
}

func diskWrite(path string, size int64) error {
	defer os.Remove(path)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.CopyBuffer(f, seed.Reader(size), make([]byte, 1<<20)); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// timedWrite is one run of a workload that writes size bytes through s:
// on a settled disk, timed, with the peak RSS of s's process, and logged.
func timedWrite(id string, s *system, size int64, run func() error) sample {
	measure.SettleDisk()
	w := measure.WatchPeak(s.pid())
	t0 := time.Now()
	err := run()
	el := time.Since(t0)
	smp := sample{peak: w.End(), err: err}
	if err == nil {
		smp.mbps = measure.MBps(size, el)
	}
	measure.Logf("  %s %s: %.0f MB/s %v", id, s.name, smp.mbps, err)
	return smp
}
