package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/mcpblob/mcpblob/loadtest/rig/load"
)

// The cluster check's load, all through the load balancer; one node is
// killed while it runs. Three open-model scenarios (vegeta, constant
// arrival rates), started together:
//
//	mcp      resources/read of a 4 KiB blob and tools/list in turn, on one
//	         2025-11-25 session (nginx hashes it to one node);
//	uploads  unique bodies of 64 KiB to 3 MiB, stored by PUT /v1/blobs (two
//	         in three) or through an upload endpoint (POST /v1/uploads, then
//	         a multipart POST to /u/…); the node checks x-mcp-sha256 on PUT;
//	links    256 KiB ranges of a 1 MiB blob through one /d/ link.
//
// Each upload logs "TRY key size sha256" before it starts and "ACK key size
// sha256" once it was answered 201: the runner reads both back afterwards
// (readLoadLog). No thresholds: the runner judges every failure against
// the kill.

var uploadSizes = []int{64 << 10, 256 << 10, 1 << 20, 3 << 20}

const linkRange = 256 << 10

// loadSummary is what the cluster load's requests saw, all scenarios together.
type loadSummary struct {
	mu                   sync.Mutex
	all                  vegeta.Metrics
	requests, failed     int // failed: no HTTP answer, or 4xx/5xx
	checksOK, checksBad  int
	dropped              int // asked for and not sent in the load's time
	errors               map[string]int
	median, p99, longest time.Duration
}

func (s *loadSummary) add(r *vegeta.Result, class string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if r.Code == 0 || r.Code >= 400 {
		s.failed++
	}
	if class == "" {
		s.checksOK++
	} else {
		s.checksBad++
		s.errors[class]++
	}
	s.all.Add(r)
}

// clusterLoad runs the three scenarios through base for d, the upload
// lines going to logPath; it returns when all have ended.
func clusterLoad(ctx context.Context, base, apiKey, logPath string, d time.Duration) (*loadSummary, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	session, err := load.Open(ctx, base+"/mcp", apiKey, nil)
	if err != nil {
		return nil, err
	}
	var link struct{ URL string }
	if err := postJSON(ctx, base+"/v1/links", apiKey, map[string]any{"key": largeKey, "ttlSeconds": 900}, &link); err != nil {
		return nil, err
	}
	sum := &loadSummary{errors: map[string]int{}}
	scenarios := []load.Scenario{
		mcpScenario(session), uploadScenario(base, apiKey, &lockedWriter{w: log}), linkScenario(link.URL),
	}
	rates := []int{mcpRate, uploadRate, linkRate}
	workers := []uint64{8, 6, 4}
	var wg sync.WaitGroup
	for i, s := range scenarios {
		s.Rate, s.Duration, s.Workers, s.MaxWorkers = rates[i], d, workers[i], workers[i]*10
		s.OnResult = func(r *vegeta.Result, _ *load.Body, class string) { sum.add(r, class) }
		wg.Go(func() {
			rep := load.Run(ctx, s)
			sum.mu.Lock()
			sum.dropped += max(0, int(float64(s.Rate)*d.Seconds())-rep.Requests())
			sum.mu.Unlock()
		})
	}
	wg.Wait()
	sum.all.Close()
	sum.median, sum.p99, sum.longest = sum.all.Latencies.P50, sum.all.Latencies.P99, sum.all.Latencies.Max
	return sum, nil
}

func mcpScenario(s *load.Session) load.Scenario {
	read := load.ReadClass(smallSize)
	return load.Scenario{
		Name: "mcp",
		Target: s.Call(func(seq uint64) (string, any) {
			if seq%2 == 0 {
				return "resources/read", load.Read(smallKey)
			}
			return "tools/list", nil
		}),
		Check: func(r *vegeta.Result, b *load.Body) string {
			if b.Kind == "resources/read" {
				return read(r, b)
			}
			return load.RPCClass(r, b)
		},
	}
}

func linkScenario(url string) load.Scenario {
	var seq atomic.Int64
	return load.Scenario{
		Name: "links",
		Target: func(t *vegeta.Target) error {
			start := (seq.Add(1) * 7 % 4) * linkRange
			t.Method, t.URL = http.MethodGet, url
			t.Header = http.Header{"Range": {fmt.Sprintf("bytes=%d-%d", start, start+linkRange-1)}}
			return nil
		},
		Check: func(r *vegeta.Result, b *load.Body) string {
			if r.Code != http.StatusPartialContent || b.N != linkRange {
				return fmt.Sprintf("range: http %d, %d bytes", r.Code, b.N)
			}
			return ""
		},
		KeepBody: -1,
	}
}

// uploadScenario stores a unique body per request: a random pattern with
// the key stamped over its first bytes.
func uploadScenario(base, apiKey string, log io.Writer) load.Scenario {
	pattern := make([]byte, uploadSizes[len(uploadSizes)-1])
	rand.Read(pattern) //nolint:errcheck // never fails
	var seq atomic.Int64
	return load.Scenario{
		Name: "uploads",
		Target: func(t *vegeta.Target) error {
			i := seq.Add(1) - 1
			size := uploadSizes[i%int64(len(uploadSizes))]
			viaEndpoint := i%3 == 2
			kind := map[bool]string{true: "u", false: "put"}[viaEndpoint]
			key := fmt.Sprintf("cluster/load/%s-%d", kind, i)
			body := append([]byte(nil), pattern[:size]...)
			copy(body, key)
			h := sha256.Sum256(body)
			sha := hex.EncodeToString(h[:])
			fmt.Fprintf(log, "TRY %s %d %s\n", key, size, sha)
			t.Header = http.Header{load.TagHeader: {fmt.Sprintf("%s %d %s", key, size, sha)}}
			if apiKey != "" {
				t.Header.Set("Authorization", "Bearer "+apiKey)
			}
			if !viaEndpoint {
				t.Method, t.URL, t.Body = http.MethodPut, base+"/v1/blobs/"+key, body
				t.Header.Set("Content-Type", "application/octet-stream")
				t.Header.Set("x-mcp-sha256", sha)
				t.Header.Set(load.KindHeader, "upload_put")
				return nil
			}
			t.Header.Set(load.KindHeader, "upload_endpoint")
			var up struct{ URL string }
			if err := postJSON(context.Background(), base+"/v1/uploads", apiKey, map[string]any{"key": key, "maxSize": size, "ttlSeconds": 300}, &up); err != nil {
				t.Method, t.URL = http.MethodPost, base+"/v1/uploads"
				t.Header.Set(load.FailHeader, "upload endpoint not minted: "+err.Error())
				return nil
			}
			var form bytes.Buffer
			mw := multipart.NewWriter(&form)
			fw, _ := mw.CreateFormFile("file", "load.bin")
			fw.Write(body) //nolint:errcheck // a bytes.Buffer
			mw.Close()
			t.Method, t.URL, t.Body = http.MethodPost, up.URL, form.Bytes()
			t.Header.Set("Content-Type", mw.FormDataContentType())
			return nil
		},
		Check: func(r *vegeta.Result, b *load.Body) string {
			if r.Code != http.StatusCreated {
				return fmt.Sprintf("upload: http %d", r.Code)
			}
			fmt.Fprintf(log, "ACK %s\n", b.Tag)
			return ""
		},
		Timeout: 60 * time.Second,
	}
}

// postJSON POSTs body to url and decodes a 201 answer into out.
func postJSON(ctx context.Context, url, apiKey string, body, out any) error {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != http.StatusCreated {
		return fmt.Errorf("POST %s: http %d: %.200s", req.URL.Path, res.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// classes lists the check failures by class, for the report.
func classes(errs map[string]int) string {
	if len(errs) == 0 {
		return ""
	}
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(errs)) {
		parts = append(parts, fmt.Sprintf("%s: %d", c, errs[c]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// vegetaVersion is the vegeta module this binary was built with.
func vegetaVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/tsenart/vegeta/v12" {
				return m.Version
			}
		}
	}
	return "(version unknown)"
}
