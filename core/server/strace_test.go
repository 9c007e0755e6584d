package server

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var sendfileRE = regexp.MustCompile(`sendfile(?:64)?\(|<\.\.\. sendfile(?:64)? resumed>`)
var retRE = regexp.MustCompile(`=\s+(-?\d+)`)

// tracedChild runs test child of this test binary under `strace -f -e
// trace=sendfile`, with env set, and returns what follows prefix on the
// first line of the child's output starting with it (the address it
// serves on), and a function that ends the child (it waits for stdin to
// close) and returns the strace log. It skips in -short runs and when
// strace is not installed (make tools installs it).
func tracedChild(t *testing.T, child, env, prefix string) (string, func() string) {
	t.Helper()
	if testing.Short() {
		t.Skip("spawns a traced child process")
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed (make tools installs it): cannot observe sendfile")
	}
	logf := t.TempDir() + "/strace.log"
	cmd := exec.Command(strace, "-f", "-qq", "-e", "trace=sendfile", "-o", logf,
		os.Args[0], "-test.run=^"+child+"$", "-test.v")
	cmd.Env = append(os.Environ(), env)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	t.Cleanup(stop)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			go io.Copy(io.Discard, stdout)
			return addr, func() string {
				stop()
				log, err := os.ReadFile(logf)
				if err != nil {
					t.Fatal(err)
				}
				return string(log)
			}
		}
	}
	t.Fatal("the child printed no address")
	return "", nil
}

// sendfileMoved counts the sendfile calls of an strace log that moved
// bytes, and sums the bytes.
func sendfileMoved(log string) (calls, moved int64) {
	for line := range strings.SplitSeq(log, "\n") {
		if !sendfileRE.MatchString(line) || strings.HasSuffix(line, "<unfinished ...>") {
			continue
		}
		if m := retRE.FindAllStringSubmatch(line, -1); m != nil {
			if n, _ := strconv.ParseInt(m[len(m)-1][1], 10, 64); n > 0 {
				calls++
				moved += n
			}
		}
	}
	return calls, moved
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
