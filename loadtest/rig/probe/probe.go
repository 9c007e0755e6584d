// Package probe asks a running mcpblob which of the later workloads it
// answers yet, so benchmarks and load tests for them light up by themselves
// once the server grows the feature.
package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
)

// Features are the server features the load scenarios and benchmarks
// need; a server without one fails them.
type Features struct {
	UploadFile     bool // tools/list names upload_file (data-URI tool inputs)
	ResourceStream bool // initialize declares capabilities.resources.stream
	ControlAPI     bool // GET /v1/blobs answers 200 (control API and /d/ links)
	Uploads        bool // a 1-byte multipart upload to an endpoint from POST /v1/uploads is stored
}

// Probe checks base (e.g. http://127.0.0.1:8080) for each feature.
func Probe(ctx context.Context, base string) (Features, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var f Features
	c := mcpc.New(base + "/mcp")
	if err := c.Init(ctx, map[string]any{"resourceStreaming": map[string]any{"maxStreamSize": 1 << 40}}); err != nil {
		return f, err
	}
	f.ResourceStream = c.HasResourceStream()
	names, err := c.ToolNames(ctx)
	if err != nil {
		return f, err
	}
	f.UploadFile = slices.Contains(names, "upload_file")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/blobs", nil)
	if resp, err := c.HTTP.Do(req); err == nil {
		resp.Body.Close()
		f.ControlAPI = resp.StatusCode == http.StatusOK
	}
	if f.ControlAPI {
		f.Uploads = uploadWorks(ctx, c.HTTP, base)
	}
	return f, nil
}

// uploadWorks mints an upload endpoint and sends it one byte as
// multipart/form-data; a 2xx answer means upload endpoints are served.
// (It stores a 1-byte object "bench-probe/upload" in the store under test.)
func uploadWorks(ctx context.Context, hc *http.Client, base string) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/uploads",
		strings.NewReader(`{"key":"bench-probe/upload","maxSize":1,"ttlSeconds":60}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	var up struct{ URL, Method string }
	err = json.NewDecoder(resp.Body).Decode(&up)
	resp.Body.Close()
	if err != nil || resp.StatusCode/100 != 2 || up.URL == "" {
		return false
	}
	if up.Method == "" {
		up.Method = http.MethodPost
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", "probe.bin")
	part.Write([]byte{'x'})
	mw.Close()
	req, _ = http.NewRequestWithContext(ctx, up.Method, up.URL, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err = hc.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode/100 == 2
}
