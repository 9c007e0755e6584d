package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// failingOffloads is a fileOffloads whose writers fail with err once they
// hold 1 MiB.
type failingOffloads struct {
	*fileOffloads
	err error
}

func (f *failingOffloads) Create(ctx context.Context, principal, id, mediaType string) (OffloadWriter, error) {
	w, err := f.fileOffloads.Create(ctx, principal, id, mediaType)
	if err != nil {
		return nil, err
	}
	return &failingOffload{OffloadWriter: w, err: f.err}, nil
}

type failingOffload struct {
	OffloadWriter
	err error
	n   int
}

func (w *failingOffload) Write(p []byte) (int, error) {
	if w.n += len(p); w.n > 1<<20 {
		return 0, w.err
	}
	return w.OffloadWriter.Write(p)
}

// testQuotaError is a store's quota refusal as package storage's
// QuotaError presents itself to the gateway.
type testQuotaError struct{}

func (testQuotaError) Error() string { return "quota exceeded at .ns/alice/gateway/offload/x" }
func (testQuotaError) QuotaExceeded() (string, int64, int64, int64) {
	return "bytes", 1 << 20, 1000, 1<<20 - 1000
}

// TestOffloadStoreRefuses: a store that fails is answered -32603 without
// a word of the store's error (whose key is the store's business), and a
// store that refuses by the caller's quota -32602 with data.reason
// quotaExceeded and the figures; as JSON and as an SSE event, nothing
// stored.
func TestOffloadStoreRefuses(t *testing.T) {
	cases := []struct {
		err     error
		code    int
		message string
	}{
		{errors.New("write .ns/alice/gateway/offload/x: disk full"), -32603, "Internal error: storing an offloaded blob failed"},
		{testQuotaError{}, -32602, "Quota exceeded: the bytes quota is 1048576, usage 1000, 1047576 more fit;"},
	}
	for _, c := range cases {
		for _, tool := range []string{"img", "img_sse"} {
			store := &failingOffloads{fileOffloads: newFileOffloads(t), err: c.err}
			g := newGateway(t, toolUpstream(t, 4<<20).URL, func(o *Options) {
				o.Offload = OffloadOptions{Over: 1 << 20, Store: store}
			})
			_, b := callTool(t, serveAs(t, g).URL, "alice", tool)
			if i := bytes.LastIndex(b, []byte("data: ")); strings.HasSuffix(tool, "_sse") && i >= 0 {
				b = bytes.TrimSpace(b[i+len("data: "):])
			}
			var m struct {
				ID    int
				Error struct {
					Code    int
					Message string
					Data    struct{ Reason, Quota, Upstream string }
				}
			}
			if json.Unmarshal(b, &m) != nil || m.ID != 5 || m.Error.Code != c.code || !strings.HasPrefix(m.Error.Message, c.message) ||
				strings.Contains(string(b), ".ns/") || (c.code == -32602) != (m.Error.Data.Reason == "quotaExceeded" && m.Error.Data.Quota == "bytes") {
				t.Errorf("%s, store failing with %q: %.300s; want %d %q", tool, c.err, b, c.code, c.message)
			}
			if s := store.stored(t); len(s) != 0 {
				t.Errorf("%s: stored %v; want nothing", tool, s)
			}
		}
	}
}
