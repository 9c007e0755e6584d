// Package probe asks a running mcpblob which of the later workloads it
// answers yet, so benchmarks and load tests for them light up by themselves
// once the server grows the feature.
package probe

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/mcpblob/mcpblob/bench/internal/mcpc"
)

// Features are the server features that later issues add.
type Features struct {
	UploadFile     bool // tools/list names upload_file (data-URI tool inputs, issue 6)
	ResourceStream bool // initialize declares capabilities.resources.stream (issue 5)
	ControlAPI     bool // GET /v1/blobs answers 200 (control API, /d/ and /u/ tokens: issue 5)
}

// Issue numbers that bring each feature, for "not available yet" lines.
const (
	IssueUploadFile     = 6
	IssueResourceStream = 5
	IssueControlAPI     = 5
)

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
	return f, nil
}
