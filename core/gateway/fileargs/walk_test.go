package fileargs

import (
	"errors"
	"strings"
	"testing"
)

// recordSink records what the walk hands a file check.
type recordSink struct {
	args  []string
	bytes strings.Builder
	ended int
}

func (s *recordSink) begin(arg string) error { s.args = append(s.args, arg); return nil }
func (s *recordSink) write(p []byte) error   { s.bytes.Write(p); return nil }
func (s *recordSink) end() error             { s.ended++; return nil }
func (s *recordSink) holds() bool            { return false }
func (s *recordSink) replacement() string    { return "" }
func (s *recordSink) expands(string) bool    { return false }
func (s *recordSink) expand(string, string) (*dataURIReader, error) {
	return nil, errors.New("not expanded")
}
func fileArgsOf(files ...string) func(string, string) bool {
	return func(tool, arg string) bool {
		for _, f := range files {
			if tool+"."+arg == f {
				return true
			}
		}
		return false
	}
}

// The walk finds params.name and the file arguments' strings, escapes
// undone, whatever the chunking, and skips everything else: look-alike
// members in other objects, strings holding quotes and braces, arrays.
func TestWalkFindsFileArgumentsInAnyChunking(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":{"x":["}",{"params":1}]},"method":"tools/call",` +
		`"params":{"_meta":{"name":"decoy","arguments":{"file":"data:no"}},"name":"up\u006coad",` +
		`"arguments":{"note":"a \"file\": {x}","n":[1,true,null,{"file":"data:nested"}],"file":"data:text\/plain,caf\u00e9\\\n\"x\"",` +
		`"other":"data:skipped"}},"tail":[]}`
	for size := 1; size <= len(msg); size++ {
		rec := &recordSink{}
		w := &walker{sink: rec, isFile: fileArgsOf("upload.file")}
		for i := 0; i < len(msg); i += size {
			if err := w.feed([]byte(msg[i:min(i+size, len(msg))])); err != nil {
				t.Fatal(err)
			}
		}
		want := "data:text/plain,café\\\n\"x\""
		if w.name != "upload" || len(rec.args) != 1 || rec.args[0] != "file" || rec.ended != 1 || rec.bytes.String() != want {
			t.Fatalf("chunks of %d: tool %q, args %q, ended %d, bytes %q; want upload, [file], 1, %q",
				size, w.name, rec.args, rec.ended, rec.bytes.String(), want)
		}
		if len(w.stack) != 0 || w.st != wNextOrEnd {
			t.Fatalf("chunks of %d: the walk did not end at the message's end (state %d, %d open)", size, w.st, len(w.stack))
		}
	}
}

// Arguments before the name are not known to be files (the name may come
// from Mcp-Name instead).
func TestWalkArgumentsBeforeName(t *testing.T) {
	msg := `{"method":"tools/call","params":{"arguments":{"file":"data:,x"},"name":"upload"}}`
	rec := &recordSink{}
	w := &walker{sink: rec, isFile: fileArgsOf("upload.file")}
	if err := w.feed([]byte(msg)); err != nil || len(rec.args) != 0 {
		t.Fatalf("checked %q (%v) with no name known yet", rec.args, err)
	}
	rec = &recordSink{}
	w = &walker{sink: rec, isFile: fileArgsOf("upload.file"), name: "upload"} // from Mcp-Name
	if err := w.feed([]byte(msg)); err != nil || len(rec.args) != 1 {
		t.Fatalf("checked %q (%v); want the file, its tool named by the header", rec.args, err)
	}
}
