package main

import (
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// captureRun runs a subcommand with os.Stdout and os.Stderr captured.
func captureRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outW, errW
	done := make(chan [2]string)
	go func() {
		o, _ := io.ReadAll(outR)
		e, _ := io.ReadAll(errR)
		done <- [2]string{string(o), string(e)}
	}()
	code = run(context.Background(), args, func(string) string { return "" })
	os.Stdout, os.Stderr = oldOut, oldErr
	outW.Close()
	errW.Close()
	got := <-done
	return code, got[0], got[1]
}

var authLineRE = regexp.MustCompile(`(?m)^[0-9a-f]{64}( \S+)?( scopes=\S+)?$`)

// TestAPIKeyArgs: `mcpblob apikey` parses its flags (help is printed, an
// unknown flag is a usage error) and mints a key only for a sane principal
// name: bd4921f minted one for a principal named "--help".
func TestAPIKeyArgs(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"--bogus"}, {"alice", "bob"},
		{"--", "-x"}, {"--", "--help"}, {"a b"}, {"x#y"}, {"tab\tname"}, {strings.Repeat("a", 65)}, {"é"}, {""}, {".hidden"}} {
		code, out, errOut := captureRun(t, append([]string{"apikey"}, args...)...)
		if code != exitUsage || out != "" || authLineRE.MatchString(errOut) {
			t.Errorf("apikey %q: exit %d, stdout %q, stderr %q; want a usage error and no key", args, code, out, errOut)
		}
		if !strings.Contains(errOut, "usage: mcpblob apikey") {
			t.Errorf("apikey %q: no usage on stderr: %q", args, errOut)
		}
	}
	for _, name := range []string{"", "alice", "svc.backup-1", "alice@example.com", "Key_2"} {
		args := []string{"apikey"}
		if name != "" {
			args = append(args, name)
		}
		code, out, errOut := captureRun(t, args...)
		line := authLineRE.FindString(errOut)
		if code != exitOK || !strings.HasPrefix(out, "mcpb_") || line == "" || (name != "" && !strings.HasSuffix(line, " "+name+" scopes=read,write")) {
			t.Errorf("apikey %q: exit %d, stdout %q, stderr %q", name, code, out, errOut)
		}
	}
}
