package scan

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/mcpblob/mcpblob/core/codec"
)

// errNoSpace is what a full disk's write returns.
var errNoSpace = &os.PathError{Op: "write", Path: "tmp/x", Err: syscall.ENOSPC}

// failingSink takes ok bytes, then fails every write with errNoSpace.
type failingSink struct {
	ok     int
	got    int
	aborts int
}

func (s *failingSink) Write(p []byte) (int, error) {
	if s.got+len(p) > s.ok {
		k := s.ok - s.got
		s.got = s.ok
		return k, errNoSpace
	}
	s.got += len(p)
	return len(p), nil
}

func (s *failingSink) Abort() { s.aborts++ }

// TestReadSinkFails: a sink (or its opening) failing mid-value is the
// server's failure: the message still parses, members after the value are
// read, the File carries Err and no payload, its Reader fails with Err, and
// the sink is aborted at once (a full disk gets its space back).
func TestReadSinkFails(t *testing.T) {
	t.Parallel()
	payload := bytes.Repeat([]byte("0123456789"), 30000)
	in := `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"up","arguments":{"key":"k1","file":"data:text/plain;base64,` +
		base64.StdEncoding.EncodeToString(payload) + `","after":"x"}}}`
	for _, tc := range []struct {
		name    string
		openErr error
		ok      int
	}{
		{name: "write fails", ok: 100 << 10},
		{name: "first write fails"},
		{name: "open fails", openErr: errNoSpace},
	} {
		var sink *failingSink
		router := routerFunc(func(seen *Seen, path string) (Route, bool) {
			return Route{Spec: FileSpec{MaxSize: 1 << 20}, Open: func(codec.DataURIHeader) (Sink, error) {
				if tc.openErr != nil {
					return nil, tc.openErr
				}
				sink = &failingSink{ok: tc.ok}
				return sink, nil
			}}, path == "/params/arguments/file"
		})
		m, err := Read(iotest.HalfReader(strings.NewReader(in)), testOptions(t), router)
		if err != nil {
			t.Fatalf("%s: Read: %v", tc.name, err)
		}
		f := m.Files.Get("/params/arguments/file")
		if f == nil || !errors.Is(f.Err, syscall.ENOSPC) || f.Problem != "" || f.Size != int64(len(payload)) || f.Sink() != nil {
			t.Fatalf("%s: file %+v", tc.name, f)
		}
		if _, err := io.ReadAll(f.Reader()); !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%s: Reader: %v, want the sink's error", tc.name, err)
		}
		if string(m.Args["after"]) != `"x"` {
			t.Errorf("%s: the member after the value was not read: %s", tc.name, m.Raw)
		}
		if sink != nil && sink.aborts != 1 {
			t.Errorf("%s: sink aborted %d times, want once", tc.name, sink.aborts)
		}
		m.Files.Release()
	}
}

// TestReadSpoolFails: a spool that cannot be created (its folder is gone,
// as good as a full disk) loses a data URI and a raw string the same way.
func TestReadSpoolFails(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	opts.SpoolDir += "/missing"
	long := strings.Repeat("z", 100<<10)
	in := `{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"a":"data:text/plain;base64,` +
		base64.StdEncoding.EncodeToString([]byte(long)) + `","b":"` + long + `","c":1}}}`
	m, err := Read(strings.NewReader(in), opts, nil)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	for _, p := range []string{"/params/arguments/a", "/params/arguments/b"} {
		if f := m.Files.Get(p); f == nil || f.Err == nil || f.Size != int64(len(long)) {
			t.Errorf("%s: %+v", p, f)
		}
	}
	if string(m.Args["c"]) != "1" {
		t.Errorf("the message was not read to its end: %s", m.Raw)
	}
	m.Files.Release()
}
