package main

import (
	"io"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/gateway"
)

func TestGatewayStreamCacheConfig(t *testing.T) {
	up := map[string]string{"MCPBLOB_UPSTREAM": "http://127.0.0.1:3000/mcp"}
	env := func(k string) string { return up[k] }
	c, err := loadConfig(nil, env, io.Discard)
	if o := gatewayOptions(c).Cache; err != nil || !o.On || o.TTL != gateway.DefaultCacheTTL {
		t.Fatalf("default: %+v (%v), want on with a TTL of %v", o, err, gateway.DefaultCacheTTL)
	}
	up["MCPBLOB_STREAM_CACHE"], up["MCPBLOB_STREAM_CACHE_TTL"] = "false", "1h"
	if c, err = loadConfig(nil, env, io.Discard); err != nil || gatewayOptions(c).Cache.On || gatewayOptions(c).Cache.TTL != time.Hour {
		t.Errorf("MCPBLOB_STREAM_CACHE=false, MCPBLOB_STREAM_CACHE_TTL=1h: %+v (%v)", gatewayOptions(c).Cache, err)
	}
	if c, err = loadConfig([]string{"--stream-cache=true", "--stream-cache-ttl", "30s"}, env, io.Discard); err != nil ||
		!gatewayOptions(c).Cache.On || gatewayOptions(c).Cache.TTL != 30*time.Second {
		t.Errorf("--stream-cache=true --stream-cache-ttl 30s: %+v (%v)", gatewayOptions(c).Cache, err)
	}
	if _, err = loadConfig([]string{"--stream-cache-ttl", "0s"}, env, io.Discard); err == nil {
		t.Error("--stream-cache-ttl 0s accepted")
	}
}
