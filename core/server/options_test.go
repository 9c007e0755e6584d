package server

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/blobs"
	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/token"
)

// TestOptionsOneSource: a setting the server passes to its components
// itself is refused where a component's options repeat it, instead of
// being overridden in silence.
func TestOptionsOneSource(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name string
		set  func(*Options)
	}{
		{"MCP.Keyring", func(o *Options) { o.MCP.Keyring = token.NewRandomKeyring() }},
		{"MCP.Logger", func(o *Options) { o.MCP.Logger = slog.New(slog.DiscardHandler) }},
		{"MCP.MaxBodyBytes", func(o *Options) { o.MCP = mcp.Options{MaxBodyBytes: 1 << 20} }},
		{"Blobs.Backend", func(o *Options) { o.Blobs = blobs.Options{Backend: newMemBackend()} }},
		{"Blobs.PublicURL", func(o *Options) { o.Blobs.PublicURL = "http://elsewhere.example" }},
	} {
		opts := Options{Backend: newMemBackend()}
		tc.set(&opts)
		if _, err := New(opts); err == nil || !strings.Contains(err.Error(), "Options."+tc.name) {
			t.Errorf("%s set: New returned %v, want a refusal naming Options.%s", tc.name, err, tc.name)
		}
	}
	if _, err := New(Options{Backend: newMemBackend()}); err != nil {
		t.Fatalf("New with nothing repeated: %v", err)
	}
}
