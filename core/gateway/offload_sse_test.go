package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

type bufStream struct{ bytes.Buffer }

func (*bufStream) Flush() error { return nil }

// TestOffloadSSEFraming: CRLF line ends, a data field split over lines
// with an id line between them, a priming event and a comment around it.
func TestOffloadSSEFraming(t *testing.T) {
	store := newFileOffloads(t)
	g := newGateway(t, "http://127.0.0.1:1/mcp", func(o *Options) { o.Offload = OffloadOptions{Over: 1 << 10, Store: store} })
	blob := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 4<<10))
	before := "id: 1\r\ndata:\r\n\r\n: keep-alive\r\n\r\n"
	after := "data: not json\n\n"
	in := before + "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\r\nid: 9\r\ndata:\"result\":{\"content\":[{\"type\":\"image\",\"data\":\"" +
		blob + "\",\"mimeType\":\"image/x-t\"}]}}\r\n\r\n" + after
	var out bufStream
	opts, stored := g.off.rewriteOptions(t.Context(), "alice")
	if err := g.offloadSSE(&out, strings.NewReader(in), opts, stored, json.RawMessage("5")); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.HasPrefix(got, before+"event: message\r\ndata: ") || !strings.HasSuffix(got, "\nid: 9\r\n\n"+after) {
		t.Fatalf("the events around the answer changed, or the id line was lost:\n%q", got)
	}
	data := strings.TrimPrefix(got, before+"event: message\r\ndata: ")
	data = strings.ReplaceAll(data[:strings.Index(data, "\nid: 9")], "\ndata: ", "\n")
	var a struct {
		ID     int
		Result struct {
			Content []struct{ Type, URI, MimeType string }
		}
	}
	if err := json.Unmarshal([]byte(data), &a); err != nil || a.ID != 5 || len(a.Result.Content) != 1 ||
		a.Result.Content[0].Type != "resource_link" || a.Result.Content[0].MimeType != "image/x-t" {
		t.Fatalf("the answer event: %q (%v)", data, err)
	}
	if len(store.stored(t)) != 1 {
		t.Errorf("stored %v", store.stored(t))
	}
}
