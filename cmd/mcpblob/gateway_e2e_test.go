package main

// End-to-end tests of the gateway (`mcpblob serve --upstream URL`) in front
// of the real upstreams of upstreams_test.go, driven by the official SDK
// clients and by mcptest.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// gatewayProc is a started `mcpblob serve --upstream`.
type gatewayProc struct {
	Base string // http://127.0.0.1:PORT
	URL  string // Base + "/mcp"
	Proc *os.Process
	Logs *syncBuffer
}

// startGateway runs `mcpblob serve --upstream upstreamURL --listen
// 127.0.0.1:PORT --data DIR` (a fresh DIR) with extra flags.
func startGateway(t *testing.T, upstreamURL string, extra ...string) *gatewayProc {
	t.Helper()
	addr := freePort(t)
	args := append([]string{"--upstream", upstreamURL, "--data", t.TempDir()}, extra...)
	proc, logs := startServerProcess(t, addr, args...)
	return &gatewayProc{Base: "http://" + addr, URL: "http://" + addr + "/mcp", Proc: proc, Logs: logs}
}

// surveyClient runs the gateway survey (testdata/gateway-clients/survey.mjs,
// testdata/gosdk/survey) with one official SDK client against an MCP
// endpoint and returns its summary.
type surveyClient struct {
	name, protocol string // protocol: the version the client must settle on
	run            func(t *testing.T, url, config string) string
}

var surveyClients = []surveyClient{
	{"ts-sdk-v1", "2025-11-25", func(t *testing.T, url, config string) string {
		nodePackagePinned(t, "@modelcontextprotocol/sdk")
		return runNodeScript(t, filepath.Join("testdata", "gateway-clients", "client-v1.mjs"), 2*time.Minute, url, config)
	}},
	{"ts-sdk-v2/2025-11-25", "2025-11-25", func(t *testing.T, url, config string) string {
		nodePackagePinned(t, "@modelcontextprotocol/client")
		return runNodeScript(t, filepath.Join("testdata", "gateway-clients", "client-v2.mjs"), 2*time.Minute, url, "legacy", config)
	}},
	{"ts-sdk-v2/2026-07-28", "2026-07-28", func(t *testing.T, url, config string) string {
		nodePackagePinned(t, "@modelcontextprotocol/client")
		return runNodeScript(t, filepath.Join("testdata", "gateway-clients", "client-v2.mjs"), 2*time.Minute, url, "2026-07-28", config)
	}},
	{"go-sdk/2025-11-25", "2025-11-25", func(t *testing.T, url, config string) string {
		return runTool(t, ".", 2*time.Minute, goSDKSurveyBin(t), "-url", url, "-protocol", "2025-11-25", "-config", config)
	}},
	{"go-sdk/2026-07-28", "2026-07-28", func(t *testing.T, url, config string) string {
		return runTool(t, ".", 2*time.Minute, goSDKSurveyBin(t), "-url", url, "-protocol", "2026-07-28", "-config", config)
	}},
}

// sdkSurveyConfig is the survey's config for the ts2 and gosdk upstreams:
// arguments for each of their tools (file_info and file_ref get a named data URI,
// confirm asks for a form elicitation, attach for a file, answered with the
// same data URI), greet's argument, and the big blob
// left unread (TestGatewayStreamsBigBlob streams it).
func sdkSurveyConfig(u *upstream) string {
	file := "data:text/csv;name=" + "table.csv" + ";base64," +
		base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a,b,c\n1,2,3\n", 500)))
	cfg := map[string]any{
		"calls": map[string]any{
			"echo":      map[string]string{"text": "through the gateway"},
			"file_info": map[string]string{"file": file},
			"file_ref":  map[string]string{"file": file},
			"confirm":   map[string]string{"question": "Proceed?"},
			"attach":    map[string]string{"question": "Attach a table"},
		},
		"elicit":   map[string]any{"Attach a table": map[string]string{"file": file}},
		"prompts":  map[string]any{"greet": map[string]string{"name": "Ada"}},
		"skipRead": []string{u.BigURI},
	}
	b, _ := json.Marshal(cfg)
	return string(b)
}

// TestGatewaySDKClients puts the gateway in front of the ts2 and gosdk
// upstreams and runs the survey with each official SDK client (TypeScript
// v1, v2 in both eras, Go in both eras) directly and through the gateway:
// every tool (the x-mcp-file one included), resource, prompt and the form
// elicitation must give the same summary both ways.
func TestGatewaySDKClients(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs in the full (non -short) leg of make test")
	}
	for _, kind := range []string{upstreamTS2, upstreamGoSDK} {
		t.Run(kind, func(t *testing.T) {
			u := startUpstream(t, kind, gatewayBigSize)
			gw := startGateway(t, u.URL)
			config := sdkSurveyConfig(u)
			for _, c := range surveyClients {
				t.Run(c.name, func(t *testing.T) {
					direct := surveySummary(t, c.run(t, u.URL, config))
					checkSurvey(t, direct)
					if direct["protocol"] != c.protocol {
						t.Fatalf("%s settled on protocol %v, want %s", c.name, direct["protocol"], c.protocol)
					}
					via := surveySummary(t, c.run(t, gw.URL, config))
					dropAddedTransferModes(t, direct, via)
					if !reflect.DeepEqual(direct, via) {
						d, _ := json.Marshal(direct)
						v, _ := json.Marshal(via)
						t.Fatalf("%s through the gateway differs from directly:\ndirect:  %s\ngateway: %s", c.name, d, v)
					}
				})
			}
		})
	}
}

// dropAddedTransferModes checks what the gateway adds to the upstream's
// tools/list (docs/gateway.md, "Uploaded files to inline upstreams"):
// transferModes ["inline","upload"] on each x-mcp-file argument the
// upstream gave none (but by-reference ones), and removes it from via so
// the rest compares whole.
func dropAddedTransferModes(t *testing.T, direct, via map[string]any) {
	t.Helper()
	dt, _ := direct["tools"].([]any)
	vt, _ := via["tools"].([]any)
	for i := range min(len(dt), len(vt)) {
		dprops, vprops := schemaProps(dt[i]), schemaProps(vt[i])
		for name, vp := range vprops {
			vfile, _ := vp.(map[string]any)["x-mcp-file"].(map[string]any)
			dp, _ := dprops[name].(map[string]any)
			dfile, _ := dp["x-mcp-file"].(map[string]any)
			if vfile == nil || dfile == nil || dfile["transferModes"] != nil || dfile["delivery"] == "reference" {
				continue // not the gateway's to widen; a by-reference argument takes a link
			}
			if got := fmt.Sprint(vfile["transferModes"]); got != "[inline upload]" {
				t.Errorf("tool %d argument %s through the gateway: transferModes %s, want [inline upload]", i, name, got)
			}
			delete(vfile, "transferModes")
		}
	}
}

// schemaProps is a listed tool's inputSchema.properties.
func schemaProps(tool any) map[string]any {
	m, _ := tool.(map[string]any)
	schema, _ := m["inputSchema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	return props
}

// surveySummary decodes the summary line of a survey run.
func surveySummary(t *testing.T, out string) map[string]any {
	t.Helper()
	for line := range strings.SplitSeq(out, "\n") {
		if s, ok := strings.CutPrefix(line, "summary "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(s), &m); err != nil {
				t.Fatalf("survey summary: %v: %.300s", err, s)
			}
			return m
		}
	}
	t.Fatalf("no survey summary in:\n%s", tail(out, 20))
	return nil
}

// checkSurvey holds a direct survey to what the upstream does, so an
// agreement between direct and gateway is not an agreement on nothing: the
// tools called, the elicitations asked and answered (attach's file reaching
// the upstream: its size twice, file_info's and attach's), the prompt got.
func checkSurvey(t *testing.T, s map[string]any) {
	t.Helper()
	b, _ := json.Marshal(s)
	text := string(b)
	if e, _ := s["elicitations"].([]any); len(e) != 2 || !slices.Contains(e, any("Attach a table")) || !slices.Contains(e, any("Proceed?")) {
		t.Errorf("direct survey: elicitations %v, want attach's and confirm's", s["elicitations"])
	}
	if n := strings.Count(text, `\"name\":\"table.csv\",\"mediaType\":\"text/csv\",\"size\":6000`); n < 3 {
		t.Errorf("direct survey: %d file answers of table.csv (file_info, file_ref, attach), want 3:\n%s", n, text)
	}
	for _, want := range []string{
		`"text":"through the gateway"`,
		`\"name\":\"table.csv\",\"mediaType\":\"text/csv\",\"size\":6000`,
		`"text":"action=accept ok=true"`,
		`"text":"Hello, Ada"`,
		`"size":65537`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("direct survey lacks %s:\n%s", want, text)
		}
	}
}

var goSDKSurvey struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// goSDKSurveyBin builds testdata/gosdk/survey once per test binary.
func goSDKSurveyBin(t *testing.T) string {
	t.Helper()
	goSDKSurvey.once.Do(func() {
		goSDKSurvey.bin = filepath.Join(filepath.Dir(mcpblobBin), "gosdk-survey")
		goSDKSurvey.out, goSDKSurvey.err = goBuild(goSDKSurvey.bin, "./survey")
	})
	if goSDKSurvey.err != nil {
		t.Fatalf("build the go-sdk survey: %v\n%s", goSDKSurvey.err, goSDKSurvey.out)
	}
	return goSDKSurvey.bin
}
