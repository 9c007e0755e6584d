package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/server"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadConfigDefaults(t *testing.T) {
	c, err := loadConfig(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:8080" || c.Data != "./data" || c.PublicURL != "http://127.0.0.1:8080" || c.GracePeriod != 30*time.Second {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestLoadConfigPrecedence(t *testing.T) {
	e := env(map[string]string{
		"MCPBLOB_LISTEN":               "127.0.0.1:9999",
		"MCPBLOB_DATA":                 "/from/env",
		"MCPBLOB_CONFORMANCE_FIXTURES": "true",
		"MCPBLOB_S3_ACCESS_KEY":        "AKIA",
		"MCPBLOB_SHUTDOWN_DELAY":       "2s",
	})
	c, err := loadConfig([]string{"--data", "/from/flag"}, e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Data != "/from/flag" {
		t.Errorf("flag must win over env: data=%q", c.Data)
	}
	if c.Listen != "127.0.0.1:9999" || !c.ConformanceFixtures || c.S3AccessKey != "AKIA" || c.ShutdownDelay != 2*time.Second {
		t.Errorf("env not applied: %+v", c)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--listen", "nonsense"}, nil, "--listen"},
		{[]string{"--stream-mode", "fast"}, nil, "--stream-mode"},
		{[]string{"--s3-endpoint", "ftp://x"}, nil, "--s3-endpoint"},
		{[]string{"--log-format", "xml"}, nil, "--log-format"},
		{[]string{"--download-url", "http://127.0.0.1:9000"}, nil, "--download-url"},
		{[]string{"--download-url", "https://dl.example.net/files"}, nil, "--download-url"},
		{nil, map[string]string{"MCPBLOB_DOWNLOAD_URL": "dl.example.net"}, "--download-url"},
		{nil, map[string]string{"MCPBLOB_GRACE_PERIOD": "soon"}, "MCPBLOB_GRACE_PERIOD"},
		{[]string{"extra"}, nil, "unexpected argument"},
		{[]string{"--no-such-flag"}, nil, "not defined"},
		{[]string{"--lifecycle", "uploads/=7x"}, nil, `--lifecycle: lifecycle rule "uploads/=7x": age "7x"`},
		{nil, map[string]string{"MCPBLOB_LIFECYCLE": "/abs=1d"}, "--lifecycle"},
		{[]string{"--lifecycle-sweep-every", "10ms"}, nil, "--lifecycle-sweep-every"},
	} {
		_, err := loadConfig(tc.args, env(tc.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("loadConfig(%q, %v) = %v, want error mentioning %q", tc.args, tc.env, err, tc.want)
		}
	}
}

func TestLoadConfigDownloadURL(t *testing.T) {
	c, err := loadConfig([]string{"--public-url", "https://mcp.example.com"},
		env(map[string]string{"MCPBLOB_DOWNLOAD_URL": "https://dl.example-content.net"}), io.Discard)
	if err != nil || c.DownloadURL != "https://dl.example-content.net" {
		t.Fatalf("--download-url from env: %+v %v", c, err)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:1": true, "[::1]:80": true, "127.8.9.10:1": true,
		"0.0.0.0:8080": false, ":8080": false, "10.0.0.1:80": false, "example.com:80": false,
	} {
		if got := isLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestAPIKeyLineMatchesServerHash(t *testing.T) {
	// The key printed on stdout must hash to the line printed for --auth-keys.
	code, out, errOut := captureRun(t, "apikey", "alice")
	key := strings.TrimSpace(out)
	if code != exitOK || !strings.HasPrefix(key, "mcpb_") || len(key) < 40 {
		t.Fatalf("apikey printed %q (exit %d)", key, code)
	}
	if want := server.HashKey(key) + " alice scopes=read,write"; !strings.Contains(errOut, "\n"+want+"\n") {
		t.Errorf("auth-keys line %q not in %q", want, errOut)
	}
	if runAPIKey(context.Background(), []string{"bad name"}, nil) != exitUsage {
		t.Error("a principal with a space was accepted")
	}
	if runAPIKey(context.Background(), []string{"--scopes", "read,delete", "alice"}, nil) != exitUsage {
		t.Error("an unknown scope was accepted")
	}
	code, out, errOut = captureRun(t, "apikey", "--scopes", "read", "carol")
	if want := server.HashKey(strings.TrimSpace(out)) + " carol scopes=read"; code != exitOK || !strings.Contains(errOut, "\n"+want+"\n") {
		t.Errorf("read-only key line %q not in %q (exit %d)", want, errOut, code)
	}
}

// TestLoadConfigAdmin: the admin token comes from MCPBLOB_ADMIN_TOKEN only
// (no flag: ps would show it); a weak or misplaced one is refused without
// its value in the error; --admin-hosts is a list of names.
func TestLoadConfigAdmin(t *testing.T) {
	const tok = "from-the-environment-0123"
	c, err := loadConfig([]string{"--admin-listen", "127.0.0.1:9091", "--admin-hosts", " a.internal,,b.internal "},
		env(map[string]string{"MCPBLOB_ADMIN_TOKEN": tok}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if hosts := adminHosts(c.AdminHosts); c.AdminToken != tok || len(hosts) != 2 || hosts[0] != "a.internal" || hosts[1] != "b.internal" {
		t.Errorf("admin settings: token set %t, hosts %q", c.AdminToken == tok, hosts)
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, map[string]string{"MCPBLOB_ADMIN_TOKEN": "short-token"}, "need --admin-listen"},
		{[]string{"--admin-listen", "127.0.0.1:9091", "--admin-token", "from-a-flag-0123456789"}, nil, "not defined"},
		{[]string{"--admin-hosts", "a.internal"}, nil, "need --admin-listen"},
		{[]string{"--admin-listen", "127.0.0.1:9091"}, map[string]string{"MCPBLOB_ADMIN_TOKEN": "short-token"}, "16 to 512"},
		{[]string{"--admin-listen", "127.0.0.1:9091"}, map[string]string{"MCPBLOB_ADMIN_TOKEN": "has a space in it somewhere"}, "without spaces"},
		{[]string{"--admin-listen", "127.0.0.1:9091", "--admin-hosts", "https://a.internal"}, nil, "not a host name"},
		{[]string{"--admin-listen", "127.0.0.1:9091", "--admin-hosts", "a.internal:9090"}, nil, "not a host name"},
		{[]string{"--admin-listen", "nonsense"}, nil, "--admin-listen"},
	} {
		_, err := loadConfig(tc.args, env(tc.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("loadConfig(%q, %v) = %v, want error mentioning %q", tc.args, tc.env, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "short-token") || strings.Contains(err.Error(), "a space in it")) {
			t.Errorf("the error quotes the token: %v", err)
		}
	}
}

func TestGatewayConfig(t *testing.T) {
	env := map[string]string{"MCPBLOB_UPSTREAM": "http://127.0.0.1:3000/mcp", "MCPBLOB_UPSTREAM_TOKEN": "tok",
		"MCPBLOB_UPSTREAM_PRINCIPAL_KEY": strings.Repeat("k", 32)}
	c, err := loadConfig([]string{"--upstream-single-use"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	o := gatewayOptions(c)
	if o.Upstream != env["MCPBLOB_UPSTREAM"] || o.Token != "tok" || len(o.PrincipalKey) != 32 || !o.SingleUse {
		t.Errorf("gateway options %+v", o)
	}
	for _, bad := range []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"--upstream", "ftp://x"}, nil},
		{[]string{"--upstream", "http://u:p@x/mcp"}, nil},
		{[]string{"--upstream-principal", "signed", "--upstream", "http://x/mcp"}, nil},
		{[]string{"--upstream", "http://x/mcp"}, map[string]string{"MCPBLOB_UPSTREAM_PRINCIPAL_KEY": "short"}},
		{nil, map[string]string{"MCPBLOB_UPSTREAM_TOKEN": "tok"}},
	} {
		_, err := loadConfig(bad.args, func(k string) string { return bad.env[k] }, io.Discard)
		if err == nil {
			t.Errorf("%v %v: accepted", bad.args, bad.env)
		} else if strings.Contains(err.Error(), "tok") && bad.env["MCPBLOB_UPSTREAM_TOKEN"] != "" || strings.Contains(err.Error(), "u:p") {
			t.Errorf("the error shows a secret: %v", err)
		}
	}
}

func TestGatewayOffloadConfig(t *testing.T) {
	up := map[string]string{"MCPBLOB_UPSTREAM": "http://127.0.0.1:3000/mcp"}
	c, err := loadConfig(nil, func(k string) string { return up[k] }, io.Discard)
	if err != nil || gatewayOptions(c).Offload.Over != 1<<20 {
		t.Fatalf("default --offload-over: %d (%v), want 1 MiB", gatewayOptions(c).Offload.Over, err)
	}
	up["MCPBLOB_OFFLOAD_OVER"] = "0"
	if c, err = loadConfig(nil, func(k string) string { return up[k] }, io.Discard); err != nil || gatewayOptions(c).Offload.Over != 0 {
		t.Errorf("MCPBLOB_OFFLOAD_OVER=0: %d (%v), want off", gatewayOptions(c).Offload.Over, err)
	}
	if c, err = loadConfig([]string{"--offload-over", "4194304"}, func(k string) string { return up[k] }, io.Discard); err != nil || gatewayOptions(c).Offload.Over != 4<<20 {
		t.Errorf("--offload-over 4194304: %d (%v)", gatewayOptions(c).Offload.Over, err)
	}
	if _, err = loadConfig([]string{"--offload-over", "-1"}, func(k string) string { return up[k] }, io.Discard); err == nil {
		t.Error("--offload-over -1 accepted")
	}
}

func TestLoadConfigLifecycle(t *testing.T) {
	c, err := loadConfig([]string{"--lifecycle", "uploads/=7d, tmp/=36h"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	lo := lifecycleOptions(c)
	if len(lo.Rules) != 2 || lo.Rules[0].Prefix != "uploads/" || lo.Rules[1].After != 36*time.Hour || lo.SweepEvery != time.Minute {
		t.Errorf("lifecycleOptions = %+v", lo)
	}
}

// TestPutTTLRefused: put --ttl outside 1 s to 10 years is a usage error,
// before anything is sent (no server runs here).
func TestPutTTLRefused(t *testing.T) {
	for _, ttl := range []string{"0.5s", "-1s", "87601h", "soon"} {
		if got := runPut(t.Context(), []string{"--server", "http://127.0.0.1:1", "--ttl", ttl, "no-such-file"}, env(nil)); got != exitUsage {
			t.Errorf("put --ttl %s = exit %d, want %d", ttl, got, exitUsage)
		}
	}
}
