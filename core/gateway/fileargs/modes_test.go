package fileargs

import (
	"encoding/json"
	"testing"
)

// TestAdvertiseUploadNoFileArguments: a tools/list result with no
// x-mcp-file argument (most upstreams' lists) comes back as it was,
// without being decoded: no allocation per answer.
func TestAdvertiseUploadNoFileArguments(t *testing.T) {
	list := json.RawMessage(`{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}`)
	var out json.RawMessage
	var changed bool
	allocs := testing.AllocsPerRun(100, func() { out, changed = AdvertiseUpload(list) })
	if changed || string(out) != string(list) || allocs != 0 {
		t.Fatalf("changed %v, %s, %.0f allocations per answer; want it unchanged with none", changed, out, allocs)
	}
}
