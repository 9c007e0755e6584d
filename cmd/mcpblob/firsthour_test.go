package main

// What a new user meets first, tried as the README shows it: flags after the
// arguments, `curl "$(mcpblob link KEY)"`, a client with no server to talk
// to, and `make run` stopped by its PID.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseAnywhere(t *testing.T) {
	for _, tc := range []struct {
		args, want []string
		server     string
		json       bool
	}{
		{[]string{"f", "k", "--server", "U"}, []string{"f", "k"}, "U", false},
		{[]string{"--server=U", "f", "--json", "k"}, []string{"f", "k"}, "U", true},
		{[]string{"f", "-json", "--", "--server", "-k"}, []string{"f", "--server", "-k"}, "", true},
		{[]string{"-", "k", "-server", "--"}, []string{"-", "k"}, "--", false}, // a value may look like a flag
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		server := fs.String("server", "", "")
		asJSON := fs.Bool("json", false, "")
		got, err := parseAnywhere(fs, tc.args)
		if err != nil || !reflect.DeepEqual(got, tc.want) || *server != tc.server || *asJSON != tc.json {
			t.Errorf("parseAnywhere(%q) = %q, %v; server %q json %v, want %q, server %q json %v",
				tc.args, got, err, *server, *asJSON, tc.want, tc.server, tc.json)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseAnywhere(fs, []string{"k", "--nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown flag after an argument: %v, want an error naming it", err)
	}
}

// cli runs the mcpblob binary with args and returns stdout, stderr and the
// exit code.
func cli(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mcpblobBin, args...)
	cmd.Env = append(os.Environ(), "MCPBLOB_SERVER=", "MCPBLOB_API_KEY=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("mcpblob %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

// TestCLIFlagsAfterArguments: `mcpblob put FILE KEY --server URL`, the order
// the usage lines print, works for every client subcommand.
func TestCLIFlagsAfterArguments(t *testing.T) {
	base := startServer(t, t.TempDir())
	file := filepath.Join(t.TempDir(), "hello.txt")
	if err := os.WriteFile(file, []byte("hello, world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"put", file, "docs/hello.txt", "--server", base, "--type", "text/plain"},
		{"ls", "docs/", "--server", base},
		{"get", "docs/hello.txt", "-", "--server", base},
		{"link", "docs/hello.txt", "--server", base, "--ttl", "1m"},
		{"rm", "docs/hello.txt", "--server=" + base},
	} {
		if out, errOut, code := cli(t, args...); code != 0 {
			t.Errorf("mcpblob %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
		}
	}
	if _, errOut, code := cli(t, "rm", "docs/hello.txt", "--server", base, "--bogus"); code != exitUsage || !strings.Contains(errOut, "bogus") {
		t.Errorf("an unknown flag after the argument: exit %d, stderr %q; want %d naming the flag", code, errOut, exitUsage)
	}
}

// TestCLILinkPrintsOnlyTheURL: stdout of `mcpblob link` is the URL alone, so
// `curl "$(mcpblob link KEY)"` fetches the blob; the expiry goes to stderr,
// and --json prints {"url","expires"}.
func TestCLILinkPrintsOnlyTheURL(t *testing.T) {
	base := startServer(t, t.TempDir())
	file := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(file, []byte("linked bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := cli(t, "put", "--server", base, file, "a.txt"); code != 0 {
		t.Fatalf("put: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code := cli(t, "link", "--server", base, "a.txt")
	if code != 0 {
		t.Fatalf("link: exit %d: %s", code, errOut)
	}
	u := strings.TrimSuffix(out, "\n") // what $(...) keeps
	if strings.ContainsAny(u, " \t\n") || !strings.HasPrefix(u, base+"/d/") {
		t.Fatalf("link printed %q on stdout, want the URL alone", out)
	}
	if got := httpGet(t, u); got != "linked bytes" {
		t.Errorf("GET of the printed URL: %q", got)
	}
	if !strings.HasPrefix(errOut, "expires 20") {
		t.Errorf("link stderr %q, want the expiry", errOut)
	}

	out, _, code = cli(t, "link", "a.txt", "--json", "--server", base)
	var l struct{ URL, Expires string }
	if err := json.Unmarshal([]byte(out), &l); code != 0 || err != nil || !strings.HasPrefix(l.URL, base+"/d/") {
		t.Fatalf("link --json: exit %d, %q (%v)", code, out, err)
	}
	if exp, err := time.Parse(time.RFC3339, l.Expires); err != nil || time.Until(exp) < 10*time.Minute {
		t.Errorf("link --json expires %q (%v), want RFC 3339 about 15 min ahead", l.Expires, err)
	}
}

func httpGet(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	return string(b)
}

// TestCLINoServer: a client subcommand with no server at the address says so
// once, on one line, with where to look.
func TestCLINoServer(t *testing.T) {
	base := "http://" + freePort(t) // closed again: nothing listens there
	for _, args := range [][]string{{"ls"}, {"link", "k"}, {"rm", "k"}, {"get", "k", "-"}} {
		_, errOut, code := cli(t, append(args, "--server", base)...)
		if code != exitFailed || strings.Count(errOut, "\n") != 1 || strings.Count(errOut, base) != 1 ||
			!strings.Contains(errOut, "connection refused") ||
			!strings.HasSuffix(errOut, "is `mcpblob serve` running? (--server, MCPBLOB_SERVER)\n") {
			t.Errorf("mcpblob %s with no server: exit %d, stderr %q; want one line naming %s once, "+
				"the refusal and the hint", args[0], code, errOut, base)
		}
	}
}

// TestMakeRunStopsWithItsPID: `make run &` then `kill $!` (SIGTERM to make)
// stops the server too: the port is free and the data folder unlocked
// (another server starts on both).
func TestMakeRunStopsWithItsPID(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is not installed")
	}
	addr, tmp := freePort(t), t.TempDir()
	data := filepath.Join(tmp, "data")
	cmd := exec.Command("make", "run", "LISTEN="+addr, "DATA="+data, "RUNBIN="+filepath.Join(tmp, "mcpblob"))
	cmd.Dir = repoRoot(t)
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the cleanup below can end whatever is left
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	eventually(t, 3*time.Minute, func() bool { return get(addr, "/readyz") == http.StatusOK })

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil { // kill PID
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("make did not exit on SIGTERM:\n%s", logs.String())
	}
	eventually(t, 10*time.Second, func() bool { return get(addr, "/healthz") == 0 })
	startServerAt(t, addr, "--data", data) // fails unless port and lock are free
}

// get is the status of GET http://addr+path, 0 when it got no answer.
func get(addr, path string) int {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// eventually polls cond until it holds, failing the test after timeout.
func eventually(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", timeout)
		}
	}
}

var shBlockRE = regexp.MustCompile("(?s)```sh\n(.*?)```")

// TestReadmeFirstLook: the README starts with its two set-up commands, and
// its curl walk through /mcp goes past initialize: every sh block that
// talks to /mcp (the 2025-11-25 session way and the stateless 2026-07-28
// way), run as written against a started server, lists the tools.
func TestReadmeFirstLook(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed", tool)
		}
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := shBlockRE.FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 || !regexp.MustCompile(`^make run +#[^\n]*\nmake test +#[^\n]*\n$`).MatchString(blocks[0][1]) {
		t.Fatalf("the README does not start with exactly `make run` and `make test`: %q", blocks[0][1])
	}
	base := startServer(t, t.TempDir())
	walks := 0
	for _, b := range blocks {
		if !strings.Contains(b[1], "127.0.0.1:8080/mcp") {
			continue
		}
		walks++
		script := strings.ReplaceAll(b[1], "http://127.0.0.1:8080", base)
		out := runTool(t, t.TempDir(), time.Minute, "bash", "-eu", "-o", "pipefail", "-c", script)
		if !strings.Contains(out, `"tools":[`) || !strings.Contains(out, `"list_blobs"`) {
			t.Errorf("README block\n%s\nanswered %.400s; want the tools listed", b[1], out)
		}
	}
	if walks < 2 {
		t.Errorf("the README has %d curl walks through /mcp, want the session way and the stateless way", walks)
	}
}
