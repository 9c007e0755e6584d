package fileargs

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// fakeOpener serves one file URI, "mcp-file://gw/mine", of size bytes
// (storagetest's pattern, generated as read); every other URI is refused
// as docs/files.md says.
type fakeOpener struct {
	size   int64
	opened int
	closed int
}

func (o *fakeOpener) Open(arg, uri string) (Opened, error) {
	switch uri {
	case "mcp-file://gw/mine":
		o.opened++
		return Opened{MediaType: "image/png", Size: o.size, Body: &closeCounter{Reader: storagetest.NewStream(7, o.size), n: &o.closed}}, nil
	case "mcp-file://gw/unreadable":
		return Opened{MediaType: "image/png", Size: o.size, Body: io.NopCloser(iotest.ErrReader(errors.New("disk gone")))}, nil
	case "mcp-file://gw/storefail":
		return Opened{}, errors.New("store down")
	case "mcp-file://gw/pending":
		return Opened{}, &Refusal{Arg: arg, Problem: "the file's bytes have not been uploaded yet", Reason: ReasonUploadIncomplete}
	}
	return Opened{}, &Refusal{Arg: arg, Problem: "no such file", Reason: ReasonFileNotFound}
}

type closeCounter struct {
	io.Reader
	n *int
}

func (c *closeCounter) Close() error { *c.n++; return nil }

var expandSpecs = map[string]Spec{"file": {Accept: []string{"image/*"}}, "small": {MaxSize: 10}}

func expandGate(body string, src io.Reader, o Opener) (*Gate, bool) {
	if src == nil {
		src = strings.NewReader(body)
	}
	g := NewGate(src, "", func(string) map[string]Spec { return expandSpecs }, nil)
	g.Expand(o)
	return g, g.Deliver(nil, 1<<20)
}

func call(args string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":` + args + `}}`
}

func TestExpandFileURI(t *testing.T) {
	const size = 300<<10 + 1 // chunks and a last partial group
	want := storagetest.Bytes(7, 0, size)
	for _, chunked := range []bool{false, true} {
		o := &fakeOpener{size: size}
		body := call(`{"note":"mcp-file://gw/mine","file":"mcp-file://gw/mine","other":"data:text/plain;base64,aGk="}`)
		var src io.Reader = strings.NewReader(body)
		if chunked {
			src = iotest.OneByteReader(src)
		}
		g, changes := expandGate("", src, o)
		if !changes {
			t.Fatal("Deliver: the body keeps its length")
		}
		out, err := io.ReadAll(iotest.HalfReader(g))
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			Params struct{ Arguments map[string]string }
		}
		if err := json.Unmarshal(out, &msg); err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		a := msg.Params.Arguments
		if a["note"] != "mcp-file://gw/mine" || a["other"] != "data:text/plain;base64,aGk=" {
			t.Errorf("other arguments changed: %q %q", a["note"], a["other"])
		}
		got, err := codec.ParseDataURI(a["file"])
		if err != nil || got.MediaType != "image/png" || sha256.Sum256(got.Data) != sha256.Sum256(want) {
			t.Fatalf("file argument: %v, type %q, %d bytes, want %d identical bytes", err, got.MediaType, len(got.Data), size)
		}
		if o.opened != 1 || o.closed != 1 {
			t.Errorf("opened %d, closed %d; want 1, 1", o.opened, o.closed)
		}
	}
}

func TestExpandRefusedBeforeForwarding(t *testing.T) {
	cases := []struct{ args, reason string }{
		{`{"file":"mcp-file://gw/someone-elses"}`, ReasonFileNotFound},
		{`{"file":"mcp-file://gw/pending"}`, ReasonUploadIncomplete},
		{`{"small":"mcp-file://gw/mine"}`, ReasonMaxSizeExceeded},
		{`{"file":"mcp-file://gw/` + strings.Repeat("x", 2000) + `"}`, ""},
	}
	for _, c := range cases {
		o := &fakeOpener{size: 100}
		g, _ := expandGate(call(c.args), nil, o)
		ref := g.Refused()
		if c.reason == "" { // too long to be a file URI: passed as any value
			if ref != nil {
				t.Errorf("%s: refused %v", c.args[:30], ref)
			}
			continue
		}
		if ref == nil || ref.Reason != c.reason || ref.Failed {
			t.Fatalf("%s: refusal %+v, want reason %s before the body is read", c.args, ref, c.reason)
		}
		n, err := g.Read(make([]byte, 1<<20))
		if n != 0 || !errors.As(err, &ref) {
			t.Errorf("%s: Read %d bytes, %v; want nothing handed on", c.args, n, err)
		}
		if o.closed != o.opened {
			t.Errorf("%s: a file left open", c.args)
		}
	}
}

func TestExpandLeavesOtherValuesUnchanged(t *testing.T) {
	for _, args := range []string{
		`{"file":"data:image/png;base64,iVBORw0KGgo="}`,
		`{"file":"mcp-file:/"}`,
		`{"file":"mcp-fil\u0065"}`,
		`{"file":""}`,
	} {
		body := call(args)
		g, changes := expandGate(body, nil, &fakeOpener{})
		out, err := io.ReadAll(g)
		if changes || err != nil || string(out) != body {
			t.Errorf("%s: changes %v, %v, out %s", args, changes, err, out)
		}
	}
}

// TestExpandFlatMemory expands a 64 MiB file, reading the body through and
// decoding the data URI as it comes: the heap grows by less than 4 MiB (the same 2.3 MiB for
// 16 and 64 MiB: the generator's and the codec's buffers).
func TestExpandFlatMemory(t *testing.T) {
	const size = 64 << 20
	body := call(`{"file":"mcp-file://gw/mine"}`)
	heap := storagetest.StartHeapMonitor()
	g, _ := expandGate(body, nil, &fakeOpener{size: size})
	head := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"file":"data:image/png;base64,`
	got := make([]byte, len(head))
	if _, err := io.ReadFull(g, got); err != nil || string(got) != head {
		t.Fatalf("head %q, %v", got, err)
	}
	sum := sha256.New()
	if _, err := io.Copy(sum, codec.NewDecoder(codec.StdEncoding, io.LimitReader(g, int64(base64.StdEncoding.EncodedLen(size))))); err != nil {
		t.Fatal(err)
	}
	tail, err := io.ReadAll(g)
	peak := heap.Stop()
	if err != nil || string(tail) != `"}}}` {
		t.Fatalf("tail %q, %v", tail, err)
	}
	want := sha256.New()
	_, _ = io.Copy(want, storagetest.NewStream(7, size))
	if !bytes.Equal(sum.Sum(nil), want.Sum(nil)) {
		t.Fatal("decoded bytes differ")
	}
	t.Logf("heap peak growth %d KiB for a %d MiB file", peak>>10, size>>20)
	if peak > 4<<20 {
		t.Errorf("heap grew %d bytes expanding a %d MiB file, want < 4 MiB", peak, size>>20)
	}
}

// Expansion gives the same body, or the same refusal of a file URI,
// whatever the chunking, and never panics; a body without file URIs
// passes unchanged. (Whether the check of a data URI in a body cut short
// sees its problem depends on the chunking: those are not compared.)
func FuzzExpandChunking(f *testing.F) {
	f.Add([]byte(call(`{"file":"mcp-file://gw/mine","x":1}`)), uint8(3))
	f.Add([]byte(call(`{"file":"mcp-file:\/\/gw\/mine"}`)), uint8(1))
	f.Add([]byte(call(`{"small":"mcp-file://gw/mine","file":"mcp-fi"}`)), uint8(5))
	f.Add([]byte(call(`{"file":"data:image/png;base64,iVBORw0KGgo="}`)), uint8(2))
	f.Fuzz(func(t *testing.T, msg []byte, size uint8) {
		run := func(src io.Reader) (string, string) {
			g := NewGate(src, "", func(string) map[string]Spec { return expandSpecs }, nil)
			g.Expand(&fakeOpener{size: 1000})
			g.Deliver(nil, 64)
			out, err := io.ReadAll(g)
			g.Stop()
			var ref *Refusal
			if errors.As(err, &ref) && ref.Reason == "" {
				return "", "data URI"
			}
			if err != nil {
				return "", err.Error()
			}
			return string(out), ""
		}
		o1, e1 := run(bytes.NewReader(msg))
		o2, e2 := run(iotest.HalfReader(&chunkReader{msg, int(size%16) + 1}))
		if e1 == "data URI" || e2 == "data URI" {
			return
		}
		if o1 != o2 || e1 != e2 {
			t.Fatalf("whole: %q %q; in chunks of %d: %q %q", o1, e1, size%16+1, o2, e2)
		}
		if e1 == "" && !bytes.Contains(msg, []byte("mcp-file://")) && o1 != string(msg) {
			t.Fatalf("no file URI, yet the body changed: %q -> %q", msg, o1)
		}
	})
}

// chunkReader yields its bytes n at a time.
type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[k:]
	return k, nil
}

// A store that fails to open a file, or to read it on the way, fails the
// call as the gateway's fault (Failed: -32603), with its cause for the log.
func TestExpandStoreFailures(t *testing.T) {
	g, _ := expandGate(call(`{"file":"mcp-file://gw/storefail"}`), nil, &fakeOpener{})
	if ref := g.Refused(); ref == nil || !ref.Failed || ref.Cause == nil || ref.Arg != "file" {
		t.Fatalf("open failure: %+v; want a failure naming the argument", ref)
	}
	g, _ = expandGate(call(`{"file":"mcp-file://gw/unreadable"}`), nil, &fakeOpener{size: 10})
	_, err := io.ReadAll(g)
	var ref *Refusal
	if !errors.As(err, &ref) || !ref.Failed || g.Refused() != ref {
		t.Fatalf("read failure: %v; want a failure, kept by the gate", err)
	}
}
