package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/server/front"
	"github.com/mcpblob/mcpblob/core/server/gate"
)

// TestLoadConfigLimits: the limit flags default to the server's defaults,
// read their environment variables, and refuse nonsense; --body-min-rate 0
// turns the rate rule off.
func TestLoadConfigLimits(t *testing.T) {
	c, err := loadConfig(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxConns != front.DefaultMaxConns || c.MaxConnsPerIP != 0 || c.MaxUploads != gate.DefaultMaxUploads ||
		c.MaxUploadsPerPrincipal != gate.DefaultMaxUploadsPerPrincipal || c.BodyMinRate != gate.DefaultBodyMinRate ||
		c.BodyGrace != gate.DefaultBodyGrace {
		t.Errorf("limit defaults differ from the server's: %+v", c)
	}
	c, err = loadConfig([]string{"--max-uploads", "7"}, env(map[string]string{"MCPBLOB_MAX_CONNS_PER_IP": "50",
		"MCPBLOB_BODY_GRACE": "3s", "MCPBLOB_MAX_UPLOADS": "9"}), io.Discard)
	if err != nil || c.MaxUploads != 7 || c.MaxConnsPerIP != 50 || c.BodyGrace != 3*time.Second {
		t.Errorf("flags and env: %v %+v", err, c)
	}
	for _, args := range [][]string{{"--max-conns", "0"}, {"--max-conns-per-ip", "-1"}, {"--max-uploads", "0"},
		{"--max-uploads-per-principal", "-3"}, {"--body-min-rate", "-1"}, {"--body-grace", "0s"}} {
		if _, err := loadConfig(args, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("loadConfig(%q) = %v, want an error naming %s", args, err, args[0])
		}
	}
	if bodyMinRate(0) >= 0 || bodyMinRate(8192) != 8192 {
		t.Error("--body-min-rate 0 must turn the rule off")
	}
}
