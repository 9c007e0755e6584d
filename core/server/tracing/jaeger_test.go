package tracing_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/server/tracing"
	"github.com/mcpblob/mcpblob/storage/s3"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// jaegerBinEnv overrides the Jaeger binary (default: .tools/bin/jaeger,
// which `make tools` builds).
const jaegerBinEnv = "MCPBLOB_JAEGER_BIN"

// jaeger is a running Jaeger all-in-one (memory storage): OTLP/HTTP in,
// the query API out, every listener on a free 127.0.0.1 port.
type jaeger struct {
	otlp, query string // host:port
	cmd         *exec.Cmd
	exited      chan struct{}
	log         string
}

// jaegerBinary finds the Jaeger binary: $MCPBLOB_JAEGER_BIN, else
// .tools/bin/jaeger above the working directory. A missing binary fails
// the test: it is never skipped.
func jaegerBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(jaegerBinEnv); bin != "" {
		return bin
	}
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Fatalf("no go.mod above the working directory; set %s", jaegerBinEnv)
		}
		dir = filepath.Dir(dir)
	}
	bin := filepath.Join(dir, ".tools", "bin", "jaeger")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("Jaeger binary not found at %s: run `make tools` to build it (or set %s)", bin, jaegerBinEnv)
	}
	return bin
}

// freePort is a port free on 127.0.0.1 a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// jaegerConfig is an all-in-one pipeline: OTLP/HTTP into memory storage,
// the query service, a health check; no other receiver, and the
// collector's own telemetry off (it would listen on :8888).
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: %[4]s
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: %[2]s
    grpc:
      endpoint: %[3]s
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 1000
receivers:
  otlp:
    protocols:
      http:
        endpoint: %[1]s
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// startJaeger starts Jaeger in its own process group and stops it (by
// its PID) when the test ends.
func startJaeger(t *testing.T) *jaeger {
	t.Helper()
	bin := jaegerBinary(t)
	dir := t.TempDir()
	j := &jaeger{otlp: freePort(t), query: freePort(t), exited: make(chan struct{}), log: filepath.Join(dir, "jaeger.log")}
	health := freePort(t)
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jaegerConfig, j.otlp, j.query, freePort(t), health), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(j.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	j.cmd = exec.Command(bin, "--config", cfg)
	j.cmd.Dir, j.cmd.Stdout, j.cmd.Stderr = dir, logf, logf
	j.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = j.cmd.Wait(); close(j.exited) }()
	t.Cleanup(j.stop)
	j.waitReady(t, "http://"+health+"/status")
	return j
}

func (j *jaeger) waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-j.exited:
			t.Fatalf("jaeger exited at start:\n%s", j.logTail())
		default:
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("jaeger not ready within 60 s:\n%s", j.logTail())
}

func (j *jaeger) logTail() string {
	b, _ := os.ReadFile(j.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// stop sends SIGTERM to Jaeger's process group, SIGKILL after 5 s.
func (j *jaeger) stop() {
	pid := j.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-j.exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-j.exited
	}
}

// jaegerSpan is a span as Jaeger's query API returns it.
type jaegerSpan struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
}

// parent is the span's CHILD_OF reference, "" without one.
func (s jaegerSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// trace fetches the spans of traceID, polling until at least n have
// arrived (the batch processors flush asynchronously).
func (j *jaeger) trace(t *testing.T, traceID string, n int) []jaegerSpan {
	t.Helper()
	var spans []jaegerSpan
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		spans, last = j.fetch(traceID)
		if last == nil && len(spans) >= n {
			return spans
		}
	}
	t.Fatalf("Jaeger has %d spans of trace %s, want at least %d (last error: %v)", len(spans), traceID, n, last)
	return nil
}

func (j *jaeger) fetch(traceID string) ([]jaegerSpan, error) {
	resp, err := http.Get("http://" + j.query + "/api/traces/" + traceID)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("query API: %s", resp.Status)
	}
	var out struct {
		Data []struct {
			Spans []jaegerSpan `json:"spans"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	if len(out.Data) == 0 {
		return nil, errors.New("no trace yet")
	}
	return out.Data[0].Spans, nil
}

// TestJaeger uploads a file with tools/call upload_file to mcpblob on S3
// (SeaweedFS), tracing on through the OTEL_* environment to a real
// Jaeger, and asserts the span tree Jaeger's query API returns: the HTTP
// span under the client's traceparent, the MCP span under the HTTP span,
// every storage span (a put at least) under the MCP span.
func TestJaeger(t *testing.T) {
	j := startJaeger(t)
	srv := s3test.Shared(t)
	be, err := s3.Open(t.Context(), s3.Options{Endpoint: "http://" + srv.Endpoint, AccessKey: srv.AccessKey,
		SecretKey: srv.SecretKey, Bucket: s3test.BucketName("tracing"), CreateBucket: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+j.otlp)
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	t.Setenv("OTEL_SERVICE_NAME", "mcpblob-jaeger-test")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	tp, err := tracing.FromEnv(t.Context(), "test", slog.New(slog.DiscardHandler))
	if err != nil || tp == nil {
		t.Fatalf("FromEnv: %v, %v: want a provider", tp, err)
	}
	base, logs := serveTraced(t, be, tp)
	post(t, base, uploadBody("", true, false), modernHeaders)
	if err := tp.ForceFlush(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans := j.trace(t, clientTrace, 3)
	byName := map[string][]jaegerSpan{}
	for _, s := range spans {
		byName[s.OperationName] = append(byName[s.OperationName], s)
	}
	httpSpan := onlySpan(t, byName, "POST mcp")
	mcpSpan := onlySpan(t, byName, "tools/call upload_file")
	if httpSpan.parent() != headerParent {
		t.Errorf("HTTP span's parent %q, want the traceparent header's %s", httpSpan.parent(), headerParent)
	}
	if mcpSpan.parent() != httpSpan.SpanID {
		t.Errorf("MCP span's parent %q, want the HTTP span %s", mcpSpan.parent(), httpSpan.SpanID)
	}
	storageSpans := 0
	for _, s := range spans {
		if strings.HasPrefix(s.OperationName, "storage ") {
			storageSpans++
			if s.parent() != mcpSpan.SpanID {
				t.Errorf("%s's parent %q, want the MCP span %s", s.OperationName, s.parent(), mcpSpan.SpanID)
			}
		}
	}
	if len(byName["storage put"]) != 1 || storageSpans == 0 {
		t.Errorf("storage spans %d, puts %d: want the upload's put; spans %v", storageSpans, len(byName["storage put"]), byName)
	}
	if !strings.Contains(logs.String(), "trace_id="+clientTrace) {
		t.Errorf("no access-log line names trace %s:\n%s", clientTrace, logs.String())
	}
}

func onlySpan(t *testing.T, byName map[string][]jaegerSpan, name string) jaegerSpan {
	t.Helper()
	if len(byName[name]) != 1 {
		names := []string{}
		for n, s := range byName {
			names = append(names, fmt.Sprintf("%s×%d", n, len(s)))
		}
		t.Fatalf("%d spans named %q in Jaeger, want 1; spans: %v", len(byName[name]), name, names)
	}
	return byName[name][0]
}
