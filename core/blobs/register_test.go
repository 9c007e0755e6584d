package blobs

import (
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// An upload limit above what the protocol server accepts is refused at
// registration, not capped silently: upload_file's schema would promise
// bytes the server refuses.
func TestRegisterRefusesUploadsOverMaxFileBytes(t *testing.T) {
	s := mcp.NewServer(mcp.Implementation{Name: "test"}, &mcp.Options{MaxFileBytes: 1 << 20})
	app, err := New(Options{Backend: &streamBackend{data: "x", mt: "text/plain"}, MaxFileBytes: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	err = app.Register(s)
	if err == nil || !strings.Contains(err.Error(), "upload_file") || !strings.Contains(err.Error(), "MaxFileBytes") {
		t.Fatalf("Register: %v", err)
	}
	app, _ = New(Options{Backend: &streamBackend{data: "x", mt: "text/plain"}, MaxFileBytes: 1 << 20})
	if err := app.Register(mcp.NewServer(mcp.Implementation{Name: "test"}, &mcp.Options{MaxFileBytes: 1 << 20})); err != nil {
		t.Fatalf("Register within the limit: %v", err)
	}
}
