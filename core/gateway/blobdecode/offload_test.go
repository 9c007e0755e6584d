package blobdecode

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// memSinks is an Open that keeps each offloaded value in memory, links
// it as gw://n, and records what Open and Commit were told.
type memSinks struct {
	opened    []Value
	committed []Offloaded
	sinks     []*memSink
	openErr   error
}

type memSink struct {
	bytes.Buffer
	m         *memSinks
	aborted   bool
	committed bool
}

func (m *memSinks) open(v Value) (Sink, error) {
	if m.openErr != nil {
		return nil, m.openErr
	}
	m.opened = append(m.opened, v)
	s := &memSink{m: m}
	m.sinks = append(m.sinks, s)
	return s, nil
}

func (s *memSink) Commit(o Offloaded) (Link, error) {
	s.committed = true
	s.m.committed = append(s.m.committed, o)
	n := len(s.m.committed)
	return Link{URI: fmt.Sprintf("gw://%d", n), Name: fmt.Sprintf("blob %d", n), MimeType: o.MimeType, Size: o.Size}, nil
}

func (s *memSink) Abort() { s.aborted = true }

func rewrite(t *testing.T, msg string, wrap func(io.Reader) io.Reader, threshold int64) (string, *memSinks, error) {
	t.Helper()
	m := &memSinks{}
	var out bytes.Buffer
	n, err := Rewrite(wrap(strings.NewReader(msg)), &out, RewriteOptions{Threshold: threshold, Open: m.open})
	if err == nil && n != len(m.committed) {
		t.Fatalf("Rewrite says %d offloaded, %d committed", n, len(m.committed))
	}
	return out.String(), m, err
}

// TestRewriteSmallUnchanged: values under the threshold, and everything
// else, come out byte for byte.
func TestRewriteSmallUnchanged(t *testing.T) {
	small := b64(strings.Repeat("s", 600))
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"` + small + `","mimeType":"image/png"},{"type":"text","text":"` + strings.Repeat("t", 5000) + `"}]}}`,
		" {\n \"result\" : { \"content\" : [ { \"type\" : \"audio\" , \"data\" : \"" + strings.ReplaceAll(small, "A", `\u0041`) + "\" } , 7, null ] , \"isError\" : false } , \"id\" : \"x\", \"jsonrpc\":\"2.0\" }\n",
		`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","blob":"` + small + `"},{"uri":"u","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource","resource":{"uri":"u","blob":"` + small + `"}}],"structuredContent":{"data":"` + strings.Repeat("A", 5000) + `"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"not base64!!"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":"odd"}}`,
	} {
		for rname, wrap := range readers {
			out, m, err := rewrite(t, msg, wrap, 1024)
			if err != nil || out != msg || len(m.opened) > 0 {
				t.Fatalf("%s: %q\ncame out %q, %v (%d opened)", rname, msg, out, err, len(m.opened))
			}
		}
	}
}

// TestRewriteOffloads: each kind of large value is decoded into its sink
// and its item replaced by a resource_link; the items around stay as
// they were.
func TestRewriteOffloads(t *testing.T) {
	raw := strings.Repeat("0123456789abcdef", 300) // 4800 bytes
	big := b64(raw)
	link := func(n int, mt string) string {
		return fmt.Sprintf(`{"type":"resource_link","uri":"gw://%d","name":"blob %d","mimeType":"%s","size":%d}`, n, n, mt, len(raw))
	}
	noMT := func(n int) string {
		return fmt.Sprintf(`{"type":"resource_link","uri":"gw://%d","name":"blob %d","size":%d}`, n, n, len(raw))
	}
	before := `{"type":"text","text":"caption"}`
	cases := []struct {
		name, msg, want string
		value           Value // as Open saw it
		final           Value // as Commit saw it
	}{
		{"image", `{"jsonrpc":"2.0","id":1,"result":{"content":[` + before + `, {"type":"image","mimeType":"image/png","data":"` + big + `","annotations":{"priority":1}}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[` + before + `, ` + link(1, "image/png") + `]}}`,
			Value{Path: "/result/content/1/data", Type: "image", MimeType: "image/png"},
			Value{Path: "/result/content/1/data", Type: "image", MimeType: "image/png"}},
		{"late type", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"data":"` + big + `","mimeType":"audio/wav","type":"audio"}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[` + link(1, "audio/wav") + `]}}`,
			Value{Path: "/result/content/0/data"},
			Value{Path: "/result/content/0/data", Type: "audio", MimeType: "audio/wav"}},
		{"embedded resource", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource","resource":{"uri":"file:///x.bin","mimeType":"application/zip","blob":"` + big + `"}}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[` + link(1, "application/zip") + `]}}`,
			Value{Path: "/result/content/0/resource/blob", Type: "resource", URI: "file:///x.bin", MimeType: "application/zip"},
			Value{Path: "/result/content/0/resource/blob", Type: "resource", URI: "file:///x.bin", MimeType: "application/zip"}},
		{"contents", `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"u","text":"t"},{"uri":"file:///y","blob":"` + big + `"}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"u","text":"t"},` + noMT(1) + `]}}`,
			Value{Path: "/result/contents/1/blob", URI: "file:///y"},
			Value{Path: "/result/contents/1/blob", URI: "file:///y"}},
		{"escaped", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"` + strings.ReplaceAll(big[:1600], "A", `\u0041`) + `\n` + big[1600:] + `"}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[` + noMT(1) + `]}}`,
			Value{Path: "/result/content/0/data", Type: "image"},
			Value{Path: "/result/content/0/data", Type: "image"}},
	}
	for _, tc := range cases {
		for rname, wrap := range readers {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				out, m, err := rewrite(t, tc.msg, wrap, 1024)
				if err != nil {
					t.Fatal(err)
				}
				if out != tc.want {
					t.Fatalf("came out\n%s\nwant\n%s", out, tc.want)
				}
				if len(m.opened) != 1 || m.opened[0] != tc.value || m.committed[0].Value != tc.final || m.committed[0].Size != int64(len(raw)) {
					t.Fatalf("opened %+v, committed %+v", m.opened, m.committed)
				}
				if m.sinks[0].String() != raw {
					t.Fatalf("the sink got %d bytes, not the value", m.sinks[0].Len())
				}
			})
		}
	}
}

// TestRewriteHeavilyEscaped: a value whose string is over twice the
// threshold is offloaded even when it decodes under it, so no more than
// that is held.
func TestRewriteHeavilyEscaped(t *testing.T) {
	small := b64(strings.Repeat("x", 600)) // 800 characters, 600 bytes, 1800 escaped
	msg := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"` + strings.ReplaceAll(small, "e", `\u0065`) + `"}]}}`
	_, m, err := rewrite(t, msg, readers["whole"], 700)
	if err != nil || len(m.committed) != 1 || m.sinks[0].String() != strings.Repeat("x", 600) {
		t.Fatalf("%v, %d committed", err, len(m.committed))
	}
}

// TestRewriteErrors: a large value that is not base64, a sink that fails
// and a message cut short end the rewrite with the right error, and leave
// no sink unaborted.
func TestRewriteErrors(t *testing.T) {
	big := b64(strings.Repeat("z", 4000))
	var corrupt *CorruptError
	out, m, err := rewrite(t, `{"result":{"content":[{"type":"image","data":"`+big[:3000]+`*`+big[3001:]+`"}]}}`, readers["whole"], 1024)
	if !errors.As(err, &corrupt) || !Upstream(err) || len(m.sinks) != 1 || !m.sinks[0].aborted || m.sinks[0].committed {
		t.Fatalf("corrupt over the threshold: %v, sinks %+v", err, m.sinks)
	}
	if strings.Contains(out, big[:100]) {
		t.Fatalf("the diverted value was written: %q", out[:200])
	}
	if out != `{"result":{"content":[` {
		t.Fatalf("wrote %q before failing: only the message up to the held item may be", out)
	}
	_, m, err = rewrite(t, `{"result":{"content":[{"type":"image","data":"`+strings.Repeat("*", 3000)+`"}]}}`, readers["whole"], 1024)
	if !errors.As(err, &corrupt) || len(m.sinks) != 0 {
		t.Fatalf("not base64 from the start, over twice the threshold: %v", err)
	}
	m = &memSinks{openErr: errors.New("disk full")}
	_, err = Rewrite(strings.NewReader(`{"result":{"content":[{"type":"image","data":"`+big+`"}]}}`), io.Discard, RewriteOptions{Threshold: 1024, Open: m.open})
	var se *SinkError
	if !errors.As(err, &se) || Upstream(err) {
		t.Fatalf("Open failing: %v", err)
	}
	_, m, err = rewrite(t, `{"result":{"content":[{"type":"image","data":"`+big, readers["whole"], 1024)
	if !errors.Is(err, ErrTruncated) || len(m.sinks) != 1 || !m.sinks[0].aborted {
		t.Fatalf("cut short: %v", err)
	}
}

// TestRewriteHeldBound: an item with more than MaxHeldBytes before its
// value is copied through as it is, the value inline.
func TestRewriteHeldBound(t *testing.T) {
	big := b64(strings.Repeat("z", 4000))
	msg := `{"result":{"content":[{"type":"image","_meta":{"k":"` + strings.Repeat("m", 70<<10) + `"},"data":"` + big + `"}]}}`
	out, m, err := rewrite(t, msg, readers["half"], 1024)
	if err != nil || out != msg || len(m.opened) != 0 {
		t.Fatalf("%v, %d opened, same %v", err, len(m.opened), out == msg)
	}
}

// hashSink hashes what it gets.
type hashSink struct {
	h io.Writer
	n int64
}

func (s *hashSink) Write(p []byte) (int, error) { s.n += int64(len(p)); return s.h.Write(p) }
func (s *hashSink) Commit(Offloaded) (Link, error) {
	return Link{URI: "gw://big", Name: "big"}, nil
}
func (s *hashSink) Abort() {}

// TestRewriteMemoryFlat offloads a 256 MiB image (16 MiB under -race or -short)
// from a tools/call result streamed through an io.Pipe, and checks the
// sink's bytes (sha256), the output, and that the heap grew by less than
// 5 MiB: what is held before the value is diverted (the threshold's 1 MiB
// decoded and 1.4 MiB raw, in pooled 64 KiB chunks) and the buffers, not
// the value (2.6 MiB measured).
func TestRewriteMemoryFlat(t *testing.T) {
	size := int64(256 << 20) // the full leg proves 256 MiB flat
	if raceEnabled || testing.Short() {
		size = 16 << 20 // the race and purego legs (-short) look for races and codec tiers, not for size
	}
	const maxGrowth = 5 << 20
	pr, pw := io.Pipe()
	sums := make(chan [sha256.Size]byte, 1)
	mon := startHeapMonitor()
	go func() {
		sum, err := streamToolResult(pw, size)
		pw.CloseWithError(err)
		sums <- sum
	}()
	h := sha256.New()
	sink := &hashSink{h: h}
	var out bytes.Buffer
	n, err := Rewrite(pr, &out, RewriteOptions{Open: func(Value) (Sink, error) { return sink, nil }})
	growth := mon.Stop()
	if err != nil || n != 1 {
		t.Fatal(n, err)
	}
	if sink.n != size || [sha256.Size]byte(h.Sum(nil)) != <-sums {
		t.Fatalf("the sink got %d bytes, want %d, or they differ", sink.n, size)
	}
	if want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource_link","uri":"gw://big","name":"big"}]}}`; out.String() != want {
		t.Fatalf("came out %q", out.String())
	}
	t.Logf("%d MiB: heap grew %.2f MiB", size>>20, float64(growth)/(1<<20))
	if growth > maxGrowth {
		t.Fatalf("heap grew %d bytes, over %d", growth, maxGrowth)
	}
}
