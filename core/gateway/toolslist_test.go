package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A tools/list answer the gateway reads to advertise the upload mode
// (Files.Opener) and that the transport holds whole goes to the client as
// the upstream sent it, with its length: headers and body in one write,
// not a chunked body of four writes (headers, the event, the chunked
// end). go-sdk's server writes its one event, then the end of the answer
// in a write of its own: that is waited for, as for any relayed answer.
func TestToolsListAnswerWithLength(t *testing.T) {
	const event = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}]}}\n\n"
	const plain = `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`
	for _, tc := range []struct{ name, contentType, answer string }{
		{"sse", "text/event-stream", event},
		{"json", "application/json", plain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				_, _ = w.Write([]byte(tc.answer))
				w.(http.Flusher).Flush() // the answer's end goes in a write of its own
			}))
			defer up.Close()
			g := newGateway(t, up.URL, func(o *Options) { o.Files.Opener = uploadedFiles{} })
			gw := serveGateway(t, g)
			// The answer's end is waited for up to firstEventWait unless
			// the machine stalls that long; one of several suffices.
			const requests = 5
			withLength := 0
			for range requests {
				resp, b := post(t, gw.URL, map[string]string{"Mcp-Session-Id": "s"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
				if resp.StatusCode != http.StatusOK || string(b) != tc.answer {
					t.Fatalf("%d %q; want 200 and the upstream's answer byte for byte", resp.StatusCode, b)
				}
				if resp.ContentLength == int64(len(tc.answer)) {
					withLength++
				}
			}
			if withLength == 0 {
				t.Errorf("none of %d whole tools/list answers had its length", requests)
			}
		})
	}
}

// A tools/list answer naming no x-mcp-file is checked and its id looked
// at without being decoded; a broken one is still refused, and an answer
// to another id is not taken for this one.
func TestAdvertiseUploadWithoutFileArguments(t *testing.T) {
	const list = `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}}`
	id := json.RawMessage(`7`)
	out, found, ue := advertiseUpload([]byte(list), id)
	if ue != nil || !found || string(out) != list {
		t.Fatalf("%q found %v %v; want it as it was, found", out, found, ue)
	}
	if _, found, _ := advertiseUpload([]byte(list), json.RawMessage(`"7"`)); found {
		t.Error(`an answer to id 7 was taken for the answer to "7"`)
	}
	if _, _, ue := advertiseUpload([]byte(list[:len(list)-3]+"]}"), id); ue == nil || ue.kind != kindMalformed {
		t.Errorf("a broken answer: %v; want it refused as malformed", ue)
	}
	if raceEnabled {
		return // the race detector's pools allocate: the count says nothing there
	}
	allocs := testing.AllocsPerRun(100, func() { _, _, _ = advertiseUpload([]byte(list), id) })
	if allocs > 4 { // decoded into a map of its members: 20
		t.Errorf("%.0f allocations per answer; want at most 4 (the look at its id, the ids' keys): no decoding", allocs)
	}
}
