package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The questions of TestGatewayElicitFiles: each makes attach elicit a file,
// which the survey clients answer with the file attachConfig gives it.
const (
	attachGood  = "Attach a table"          // a 6000-byte text/csv file
	attachBig   = "Attach a big table"      // 80 KiB: over the form's maxSize (64 KiB)
	attachImage = "Attach a table, not PNG" // declared image/png: not in accept
)

// attachTable is the good file's bytes.
var attachTable = strings.Repeat("a,b,c\n1,2,3\n", 500)

// attachConfig is the survey config that calls attach with each question.
func attachConfig() string {
	uri := func(mediaType, body string) map[string]string {
		return map[string]string{"file": "data:" + mediaType + ";name=table.csv;base64," +
			base64.StdEncoding.EncodeToString([]byte(body))}
	}
	b, _ := json.Marshal(map[string]any{
		"elicit": map[string]any{
			attachGood:  uri("text/csv", attachTable),
			attachBig:   uri("text/csv", strings.Repeat("x", 80<<10)),
			attachImage: uri("image/png", "\x89PNG\r\n\x1a\n"+strings.Repeat("x", 100)),
		},
		"attach": []string{attachGood, attachBig, attachImage},
	})
	return string(b)
}

// TestGatewayElicitFiles puts the gateway in front of the ts2 and gosdk
// upstreams, whose attach tool elicits a file through a form with an
// x-mcp-file field (maxSize 64 KiB, accept text/plain and text/csv), and
// answers it with each official SDK client (TypeScript v1, v2 in both eras,
// Go in both eras): a good file reaches the upstream, which reports the
// client's sha256; a file over maxSize and one of a type accept refuses are
// refused by the gateway, naming the field. In a 2026-07-28 retry the client
// gets -32602 for its retry; a 2025-11-25 response is not accepted (400)
// and the upstream's elicitation gets -32602 at once, so its tool call fails
// promptly naming the field (each call is bounded to 20s by the clients).
// The TypeScript SDK writes a response's id last (docs/gateway.md, "File
// inputs"): the body is cut before the id, with the same outcome.
func TestGatewayElicitFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs in the full (non -short) leg of make test")
	}
	config := attachConfig()
	sum := sha256.Sum256([]byte(attachTable))
	good := `\"size\":6000,\"sha256\":\"` + hex.EncodeToString(sum[:]) + `\"`
	for _, kind := range []string{upstreamTS2, upstreamGoSDK} {
		t.Run(kind, func(t *testing.T) {
			u := startUpstream(t, kind, upstreamSmallSize)
			gw := startGateway(t, u.URL)
			for _, c := range surveyClients {
				t.Run(c.name, func(t *testing.T) {
					start := time.Now()
					out := c.run(t, gw.URL, config)
					s := surveySummary(t, out)
					t.Logf("%s: %v", c.name, time.Since(start).Round(time.Millisecond))
					checkAttachRuns(t, s, c.name, c.protocol, good)
				})
			}
			// Each client's two refused answers are counted.
			want := float64(2 * len(surveyClients))
			if got := gatewayMetric(t, gw, `mcpblob_gateway_file_refusals_total{surface="elicitation"}`); got != want {
				t.Errorf("mcpblob_gateway_file_refusals_total{surface=\"elicitation\"} %v, want %v", got, want)
			}
		})
	}
}

// checkAttachRuns holds an attach run's summary to what the gateway
// promises: the good file's facts, then the big and the PNG file refused
// naming the field and the limit broken.
func checkAttachRuns(t *testing.T, s map[string]any, client, protocol, good string) {
	t.Helper()
	b, _ := json.Marshal(s)
	var runs struct {
		Elicitations []string
	}
	var calls []json.RawMessage
	list := s["calls"] // TypeScript: calls, Go: attach
	if a, ok := s["attach"]; ok {
		list = a
	}
	lb, _ := json.Marshal(list)
	if err := json.Unmarshal(b, &runs); err != nil || json.Unmarshal(lb, &calls) != nil {
		t.Fatalf("attach summary: %v: %s", err, b)
	}
	if len(calls) != 3 || len(runs.Elicitations) < 3 {
		t.Fatalf("want 3 attach calls, each elicited: %s", b)
	}
	if !strings.Contains(string(calls[0]), good) {
		t.Errorf("good file: %s; want the upstream to report %s", calls[0], good)
	}
	for i, problem := range []string{"file is larger than maxSize 65536 bytes", `media type \"image/png\" is not accepted`} {
		got := string(calls[i+1])
		// go-sdk's client reports a response of its refused (HTTP 400) as the
		// call's error, without the body; it may see the upstream's error first.
		if strings.HasPrefix(client, "go-sdk/") && protocol == "2025-11-25" && strings.Contains(got, "Bad Request") {
			continue
		}
		if !strings.Contains(got, `field \"file\"`) || !strings.Contains(got, problem) {
			t.Errorf("%s: %s; want it refused naming field \"file\": %s", runs.Elicitations[i+1], got, problem)
		}
		if protocol == "2026-07-28" && !strings.Contains(got, "-32602") && !strings.Contains(got, `Invalid params: input \"attach\"`) {
			t.Errorf("%s (retry): %s; want -32602 for the retry", runs.Elicitations[i+1], got)
		}
	}
	t.Logf("summary: %s", b)
}

// gatewayMetric is the value of series on the gateway's /metrics.
func gatewayMetric(t *testing.T, gw *gatewayProc, series string) float64 {
	t.Helper()
	resp, err := http.Get(gw.Base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return parseExposition(resp.Body)[series]
}
