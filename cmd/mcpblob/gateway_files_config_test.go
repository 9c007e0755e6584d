package main

import (
	"io"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway"
)

func TestGatewayFileLinkTTLConfig(t *testing.T) {
	up := map[string]string{"MCPBLOB_UPSTREAM": "http://127.0.0.1:3000/mcp"}
	env := func(k string) string { return up[k] }
	c, err := loadConfig(nil, env, io.Discard)
	if ttl := gatewayOptions(c).Files.LinkTTL; err != nil || ttl != gateway.DefaultFileLinkTTL {
		t.Fatalf("default: %v (%v), want %v", ttl, err, gateway.DefaultFileLinkTTL)
	}
	up["MCPBLOB_UPSTREAM_FILE_LINK_TTL"] = "1h"
	if c, err = loadConfig(nil, env, io.Discard); err != nil || gatewayOptions(c).Files.LinkTTL != time.Hour {
		t.Errorf("MCPBLOB_UPSTREAM_FILE_LINK_TTL=1h: %v (%v)", gatewayOptions(c).Files.LinkTTL, err)
	}
	if c, err = loadConfig([]string{"--upstream-file-link-ttl", "2m"}, env, io.Discard); err != nil || gatewayOptions(c).Files.LinkTTL != 2*time.Minute {
		t.Errorf("--upstream-file-link-ttl 2m: %v (%v)", gatewayOptions(c).Files.LinkTTL, err)
	}
	for _, bad := range []string{"0s", "25h"} {
		if _, err = loadConfig([]string{"--upstream-file-link-ttl", bad}, env, io.Discard); err == nil {
			t.Errorf("--upstream-file-link-ttl %s accepted", bad)
		}
	}
}
