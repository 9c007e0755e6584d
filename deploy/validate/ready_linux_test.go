package validate

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// weedNode is one `weed server -s3` (master, volume server, filer and S3
// gateway in one process) on 127.0.0.1, the pinned build of `make tools`.
type weedNode struct {
	s3, filer string // host:port of the S3 gateway and of the filer
}

// startWeed starts a node on free loopback ports with the S3 credentials
// key and secret, and returns once its S3 gateway's health URL answers 200
// (not later: SeaweedFS holds conditional writes for a while after that,
// which is what s3-ready.sh waits out). The node is a process group of its
// own, killed with the test and when the test binary dies. A start that
// lost a port to another process between the pick and the bind is retried
// on fresh ports, up to three times.
func startWeed(t *testing.T, key, secret string) weedNode {
	t.Helper()
	bin := os.Getenv("MCPBLOB_WEED_BIN")
	if bin == "" {
		bin = filepath.Join(repo, ".tools", "bin", "weed")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no SeaweedFS at %s (make tools builds it): %v", bin, err)
	}
	bin, _ = filepath.Abs(bin)
	for attempt := 1; ; attempt++ {
		n, log, ok := launchWeed(t, bin, key, secret)
		switch {
		case ok:
			return n
		case attempt < 3 && strings.Contains(log, "address already in use"):
			t.Logf("SeaweedFS lost a port to another process, starting again: %s", lastLine(log))
		default:
			t.Fatalf("SeaweedFS's S3 gateway not healthy (attempt %d):\n%s", attempt, log)
		}
	}
}

// launchWeed starts one node and waits up to 60 s for its S3 gateway's
// health URL; ok is false, with the node's log, when it exits or times
// out first.
func launchWeed(t *testing.T, bin, key, secret string) (n weedNode, log string, ok bool) {
	dir := t.TempDir()
	p := loopbackPorts(t, 8)
	cmd := exec.Command(bin, "-logtostderr", "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-dir="+dir, "-metricsPort=0", "-debug=false",
		"-master.port="+p[0], "-master.port.grpc="+p[1], "-master.telemetry=false", "-master.volumeSizeLimitMB=64",
		"-volume.port="+p[2], "-volume.port.grpc="+p[3], "-volume.max=100", "-volume.preStopSeconds=0",
		"-filer.port="+p[4], "-filer.port.grpc="+p[5], "-filer.localSocket="+filepath.Join(dir, "filer.sock"),
		"-s3", "-s3.port="+p[6], "-s3.port.grpc="+p[7], "-s3.port.iceberg=0", "-s3.port.lance=0",
		"-s3.localSocket="+filepath.Join(dir, "s3.sock"))
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "AWS_ACCESS_KEY_ID=" + key, "AWS_SECRET_ACCESS_KEY=" + secret}
	logPath := filepath.Join(dir, "weed.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		// `weed server` also serves each gRPC port on a Unix socket in /tmp.
		for i, name := range map[int]string{1: "master", 3: "volume", 5: "filer", 7: "s3"} {
			os.Remove("/tmp/seaweedfs-" + name + "-grpc-" + p[i] + ".sock")
		}
	}
	n = weedNode{s3: "127.0.0.1:" + p[6], filer: "127.0.0.1:" + p[4]}
	client := http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			stop()
			b, _ := os.ReadFile(logPath)
			return n, string(b), false
		default:
		}
		if resp, err := client.Get("http://" + n.s3 + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Cleanup(stop)
				return n, "", true
			}
		}
	}
	stop()
	b, _ := os.ReadFile(logPath)
	return n, string(b), false
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// loopbackPorts returns n distinct ports free on 127.0.0.1 just now.
func loopbackPorts(t *testing.T, n int) []string {
	t.Helper()
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports
}

// filerEntries lists the names in a folder of the node's filer (its HTTP
// API takes no credentials), nil when the folder does not exist.
func (n weedNode) filerEntries(t *testing.T, path string) []string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+n.filer+path, nil)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil
	}
	body, _ := io.ReadAll(resp.Body)
	var list struct{ Entries []struct{ FullPath string } }
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("filer %s: %d %s: %v", path, resp.StatusCode, body, err)
	}
	names := []string{}
	for _, e := range list.Entries {
		names = append(names, filepath.Base(e.FullPath))
	}
	return names
}

// runReady runs deploy/s3-ready.sh with env and returns its exit code
// and output.
func runReady(t *testing.T, env ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("sh", filepath.Join(deployDir, "s3-ready.sh"))
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestReadyScriptOnSeaweedFS runs deploy/s3-ready.sh against the pinned
// SeaweedFS as compose.yaml does, as soon as the gateway is healthy (the
// first conditional PUT then waits some seconds for SeaweedFS's lock): it
// creates the bucket, gets a conditional PUT through and deletes its
// object, with a secret holding a quote and a backslash (the
// curl configuration it is written into). With a wrong secret it gives up
// after READY_TIMEOUT naming the refusal; without a variable it says
// which.
func TestReadyScriptOnSeaweedFS(t *testing.T) {
	const key, secret = "mcpblob", `s3"cr\et-` + "x9"
	n := startWeed(t, key, secret)
	env := []string{"S3_ENDPOINT=http://" + n.s3, "S3_BUCKET=mcpblob", "S3_ACCESS_KEY=" + key}

	start := time.Now()
	code, out := runReady(t, append(env, "S3_SECRET_KEY="+secret, "READY_TIMEOUT=60")...)
	t.Logf("ready after %v: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(out))
	if code != 0 || !strings.Contains(out, "answers conditional PUTs") {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	if got := n.filerEntries(t, "/buckets/"); !strings.Contains(strings.Join(got, " "), "mcpblob") {
		t.Errorf("buckets after the script: %v, want mcpblob", got)
	}
	if got := n.filerEntries(t, "/buckets/mcpblob/.mcpblob/"); strings.Contains(strings.Join(got, " "), "s3-ready") {
		t.Errorf("the script left its object: .mcpblob/ holds %v", got)
	}
	if code, out := runReady(t, append(env, "S3_SECRET_KEY="+secret, "READY_TIMEOUT=10")...); code != 0 {
		t.Errorf("a second run (bucket there): exit %d, want 0:\n%s", code, out)
	}

	start = time.Now()
	code, out = runReady(t, append(env, "S3_SECRET_KEY=wrong", "READY_TIMEOUT=2")...)
	if code != 1 || !strings.Contains(out, "not ready after 2s") || !strings.Contains(out, "403") {
		t.Errorf("wrong secret: exit %d after %v, want 1 naming the 403:\n%s", code, time.Since(start).Round(time.Millisecond), out)
	}
	code, out = runReady(t, env...)
	if code != 2 || !strings.Contains(out, "S3_SECRET_KEY is not set") {
		t.Errorf("no secret: exit %d, want 2 naming S3_SECRET_KEY:\n%s", code, out)
	}
}
