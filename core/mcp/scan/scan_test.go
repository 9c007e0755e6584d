package scan

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpblob/mcpblob/core/codec"
)

// testOptions bound a test message to 1 MiB of held and of decoded bytes.
func testOptions(t testing.TB) Options {
	return Options{MaxBodyBytes: 1 << 20, MaxFileBytes: 1 << 20, SpoolDir: t.TempDir()}
}

// routerFunc is a Router made of a function.
type routerFunc func(seen *Seen, path string) (Route, bool)

func (f routerFunc) Route(seen *Seen, path string) (Route, bool) { return f(seen, path) }

// splits are the ways a body may arrive: whole, a byte at a time, half of
// each read.
var splits = []struct {
	name  string
	split func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"onebyte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
}

// decodeAny decodes JSON with encoding/json, failing the test on error.
func decodeAny(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

// TestReadEquivalent: a message without large strings comes out of the
// scanner meaning exactly what encoding/json reads, whatever the escapes,
// and however the body is split into reads.
func TestReadEquivalent(t *testing.T) {
	t.Parallel()
	cases := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"b\/c\u002Fd","n":[1,2.5e3,-0,true,false,null],"o":{}}}}`,
		`  {"params":{"s":"\"\\\b\f\n\r\t\u00e9\ud83d\ude00\ud800x"},"method":"m","id":"i","jsonrpc":"2.0"}  `,
		`{"a":[],"b":[[]],"c":{"d":{"e":"é😀"}}}`,
		`{"n":[0,-1,1.5,1e10,1E+2,-0.0e-1,123456789012345678901234567890]}`,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		var sb strings.Builder
		for range r.IntN(300) {
			switch r.IntN(6) {
			case 0:
				sb.WriteString(`\"`)
			case 1:
				sb.WriteString(`\u00`)
				sb.WriteString([]string{"41", "e9", "2F", "0a"}[r.IntN(4)])
			case 2:
				sb.WriteString(`\/`)
			case 3:
				sb.WriteString("ü")
			default:
				sb.WriteByte(byte('a' + r.IntN(26)))
			}
		}
		cases = append(cases, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"x","params":{"k":"`+sb.String()+`"}}`)
	}
	opts := testOptions(t)
	for _, in := range cases {
		want := decodeAny(t, []byte(in))
		for _, sp := range splits {
			m, err := Read(sp.split(strings.NewReader(in)), opts, nil)
			m.Files.Release()
			if err != nil {
				t.Fatalf("%s: %s: %v", sp.name, in, err)
			}
			if got := decodeAny(t, m.Raw); !reflect.DeepEqual(want, got) {
				t.Fatalf("%s:\nin  %s\nout %s", sp.name, in, m.Raw)
			}
		}
	}
}

// TestReadErrors: malformed JSON is refused with a *BadJSONError (bad
// literals included: the scanner validates them as it copies them), and
// large non-data strings count against MaxBodyBytes.
func TestReadErrors(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	for _, in := range []string{
		`{"a":"unterminated`, `{"a":"bad \x escape"}`, "{\"a\":\"ctl\x01\"}", `{"a" 1}`, `{"a":1,}x`,
		`{"a":1} {"b":2}`, `{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
		`{"a":tru}`, `{"a":"\u12"}`, `{"a":1`, `{"a":}`, `{1:2}`, `{"a":[1 2]}`, `{"a":'x'}`,
	} {
		for _, sp := range splits {
			m, err := Read(sp.split(strings.NewReader(in)), opts, nil)
			m.Files.Release()
			var bad *BadJSONError
			if !errors.As(err, &bad) {
				t.Errorf("%s: %q: got %v, want a *BadJSONError", sp.name, in, err)
			}
		}
	}
	big := `{"params":{"a":"` + strings.Repeat("x", 2<<20) + `"}}`
	m, err := Read(strings.NewReader(big), opts, nil)
	m.Files.Release()
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("2 MiB string: %v, want ErrTooLarge", err)
	}
	// Many small strings add up too.
	many := `{"a":[` + strings.Repeat(`"`+strings.Repeat("y", 1000)+`",`, 2000) + `1]}`
	m, err = Read(strings.NewReader(many), opts, nil)
	m.Files.Release()
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("2 MB of small strings: %v, want ErrTooLarge", err)
	}
}

// TestReadBadLiterals: every literal that is not true, false, null or a
// JSON number is refused, wherever it stands.
func TestReadBadLiterals(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	for _, lit := range []string{"tru", "01", "1.", "-", "1e", "1e+", "-01", ".5", "+1", "nul", "falsey", "True", "NaN", "0x10", "1.e3", "--1"} {
		for _, in := range []string{`{"a":` + lit + `}`, `{"a":[` + lit + `]}`, `{"a":[1,` + lit + `,2]}`, `{"id":` + lit + `}`, `{"a":` + lit} {
			if json.Valid([]byte(in)) {
				t.Fatalf("bad test input %q", in)
			}
			for _, sp := range splits {
				m, err := Read(sp.split(strings.NewReader(in)), opts, nil)
				m.Files.Release()
				var bad *BadJSONError
				if !errors.As(err, &bad) {
					t.Errorf("%s: %q: got %v, want a *BadJSONError", sp.name, in, err)
				}
			}
		}
	}
	for _, lit := range []string{"0", "-0", "1.5", "1e5", "1E-5", "-0.0e+0", "true", "false", "null", "123456789012345678901234567890"} {
		in := `{"a":` + lit + `,"b":[` + lit + `]}`
		m, err := Read(iotest.OneByteReader(strings.NewReader(in)), opts, nil)
		m.Files.Release()
		if err != nil || !json.Valid(m.Raw) {
			t.Errorf("%q: %v, rebuilt %s", in, err, m.Raw)
		}
	}
}

// TestReadLocatesMembers: the members Message locates are those
// encoding/json decodes from the same message, the last of duplicate keys
// winning.
func TestReadLocatesMembers(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"b","n":[1,{"c":null}]},"_meta":{"progressToken":"p","k":{"v":1}}}}`,
		`{"params":{"_meta":{"x":1},"arguments":{"k":"\u00e9\"","k2":{}}},"method":"m","id":"s"}`,
		// Duplicate keys at every level: the last one wins.
		`{"id":1,"id":2,"method":"a","method":"b","params":{"name":"x","name":"y","arguments":{"k":1,"k":2}}}`,
		`{"params":{"arguments":{"a":1}},"params":{"arguments":{"b":2},"_meta":{"m":1}}}`,
		`{"params":{"arguments":{"a":1},"arguments":{"b":2}}}`,
		`{"params":{"_meta":{"a":1},"_meta":{"b":2}}}`,
		// A later params without _meta or arguments has none.
		`{"params":{"_meta":{"a":1},"arguments":{"f":1}},"params":{"name":"x"}}`,
		// Members that are not objects are not containers.
		`{"params":{"_meta":5,"arguments":[1,2]}}`,
		`{"params":{"arguments":{"a":1}},"params":5}`,
		`{"params":"x"}`, `{}`, `{"params":{}}`, `{"params":{"arguments":{}}}`,
		// Keys holding a slash name no container.
		`{"params/arguments":{"x":1},"params/_meta":{"y":2}}`,
		`{"params":{"arguments/file":"data:,x","_meta/k":1}}`,
	} {
		m, err := Read(iotest.HalfReader(strings.NewReader(in)), opts, nil)
		m.Files.Release()
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var want struct {
			fields, params, meta, args map[string]json.RawMessage
		}
		_ = json.Unmarshal([]byte(in), &want.fields)
		_ = json.Unmarshal(want.fields["params"], &want.params)
		_ = json.Unmarshal(want.params["_meta"], &want.meta)
		_ = json.Unmarshal(want.params["arguments"], &want.args)
		for _, c := range []struct {
			name      string
			got, want map[string]json.RawMessage
		}{
			{"Fields", m.Fields, want.fields},
			{"Params", m.Params, want.params},
			{"Meta", m.Meta, want.meta},
			{"Args", m.Args, want.args},
		} {
			if !sameMembers(t, c.got, c.want) {
				t.Errorf("%s: %s = %s, encoding/json: %s", in, c.name, dump(c.got), dump(c.want))
			}
		}
		var method string
		_ = json.Unmarshal(want.fields["method"], &method)
		if m.Method != method {
			t.Errorf("%s: Method = %q, encoding/json: %q", in, m.Method, method)
		}
	}
}

// sameMembers compares member maps by meaning (nil and empty alike).
func sameMembers(t *testing.T, got, want map[string]json.RawMessage) bool {
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || !reflect.DeepEqual(decodeAny(t, g), decodeAny(t, w)) {
			return false
		}
	}
	return true
}

func dump(m map[string]json.RawMessage) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// TestReadSpools: a long string is spooled (raw) and a long data URI
// decoded into a spool, in any position; the message keeps "" in their
// place.
func TestReadSpools(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ab", 50<<10)
	payload := bytes.Repeat([]byte{0, 1, 2, 250}, 40<<10)
	uri := "data:application/octet-stream;base64," + base64.StdEncoding.EncodeToString(payload)
	in := `{"params":{"arguments":{"f":"` + strings.ReplaceAll(uri, "/", `\/`) + `"},"x":["` + long + `"]},"jsonrpc":"2.0","id":1,"method":"tools/call"}`
	for _, sp := range splits {
		m, err := Read(sp.split(strings.NewReader(in)), testOptions(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"params":{"arguments":{"f":""},"x":[""]},"jsonrpc":"2.0","id":1,"method":"tools/call"}`; string(m.Raw) != want {
			t.Fatalf("%s: rebuilt %s", sp.name, m.Raw)
		}
		if m.Files.Len() != 2 {
			t.Fatalf("%s: %d files", sp.name, m.Files.Len())
		}
		fa := m.Files.Get("/params/arguments/f")
		if fa == nil || fa.Problem != "" || fa.spool == nil || fa.Raw() || fa.Sink() != nil || fa.Name != "f" ||
			fa.Size != int64(len(payload)) || fa.Header.MediaType != "application/octet-stream" || !bytes.Equal(fa.Head, payload[:HeadLen]) {
			t.Fatalf("%s: data URI: %+v", sp.name, fa)
		}
		if got, _ := io.ReadAll(fa.Reader()); !bytes.Equal(got, payload) {
			t.Fatalf("%s: decoded spool differs", sp.name)
		}
		raw := m.Files.Get("/params/x/0")
		if raw == nil || !raw.Raw() || raw.Size != int64(len(long)) || raw.Name != "0" {
			t.Fatalf("%s: raw spool: %+v", sp.name, raw)
		}
		if got, _ := io.ReadAll(raw.Reader()); string(got) != long {
			t.Fatalf("%s: raw spool differs", sp.name)
		}
		// A raw string where a file is expected is "not a URI".
		if f, bad := m.Files.Value("/params/x/0", "x", nil, FileSpec{}); bad != "" || f.Problem != "not a URI: a data: URI is required" {
			t.Fatalf("%s: raw value as a file: %+v, %q", sp.name, f, bad)
		}
		m.Files.Release()
		if m.Files.Len() != 0 {
			t.Fatalf("%s: Release left %d files", sp.name, m.Files.Len())
		}
	}
}

// TestReadRoutedMaxSize: the answer to a form elicitation is bounded by its
// field's maxSize while it arrives (the route the Router gives
// "/result/content/file" once the id came first); the rest of the message
// is still read.
func TestReadRoutedMaxSize(t *testing.T) {
	t.Parallel()
	payload := bytes.Repeat([]byte("y"), 100<<10)
	in := `{"jsonrpc":"2.0","id":5,"result":{"action":"accept","content":{"file":"data:text/plain;base64,` +
		base64.StdEncoding.EncodeToString(payload) + `","other":"z"}}}`
	var paths []string
	router := routerFunc(func(seen *Seen, path string) (Route, bool) {
		paths = append(paths, path)
		if string(seen.ID) == "5" && path == "/result/content/file" {
			return Route{Spec: FileSpec{MaxSize: 1000}}, true
		}
		return Route{}, false
	})
	for _, sp := range splits {
		paths = nil
		m, err := Read(sp.split(strings.NewReader(in)), testOptions(t), router)
		if err != nil {
			t.Fatal(err)
		}
		fa := m.Files.Get("/result/content/file")
		if fa == nil || fa.Problem != "file is larger than maxSize 1000 bytes" || fa.spool != nil || fa.Reader() != nil {
			t.Fatalf("%s: %+v", sp.name, fa)
		}
		if want := `{"jsonrpc":"2.0","id":5,"result":{"action":"accept","content":{"file":"","other":"z"}}}`; string(m.Raw) != want {
			t.Fatalf("%s: rebuilt %s", sp.name, m.Raw)
		}
		if !strings.Contains(strings.Join(paths, " "), "/result/content/file") {
			t.Fatalf("%s: router asked for %v", sp.name, paths)
		}
		m.Files.Release()
	}
	// Without the route the same answer is within MaxFileBytes.
	m, err := Read(strings.NewReader(in), testOptions(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Files.Release()
	if fa := m.Files.Get("/result/content/file"); fa == nil || fa.Problem != "" || fa.Size != int64(len(payload)) {
		t.Fatalf("unrouted: %+v", fa)
	}
}

// testSink records what a route's sink receives.
type testSink struct {
	bytes.Buffer
	aborts int
	header codec.DataURIHeader
}

func (s *testSink) Abort() { s.aborts++ }

// TestReadRoutedSink: a routed string with Open goes to the sink straight
// away, even a short one; a rejected value aborts the sink; a sink that
// declines leaves the bytes to a spool. Seen carries what came before.
func TestReadRoutedSink(t *testing.T) {
	t.Parallel()
	payload := bytes.Repeat([]byte("0123456789"), 1000)
	for _, tc := range []struct {
		name    string
		spec    FileSpec
		decline bool
		problem string
	}{
		{name: "ok", spec: FileSpec{MaxSize: 1 << 20, Accept: []string{"text/*"}}},
		{name: "too large", spec: FileSpec{MaxSize: 100}, problem: "file is larger than maxSize 100 bytes"},
		{name: "declined", spec: FileSpec{MaxSize: 1 << 20}, decline: true},
	} {
		var sink *testSink
		var seenArgs map[string]string
		router := routerFunc(func(seen *Seen, path string) (Route, bool) {
			if path != "/params/arguments/file" || seen.Method != "tools/call" || seen.Name != "up" {
				return Route{}, false
			}
			seenArgs = maps(seen.Args)
			return Route{Spec: tc.spec, Open: func(h codec.DataURIHeader) (Sink, error) {
				if tc.decline {
					return nil, nil
				}
				sink = &testSink{header: h}
				return sink, nil
			}}, true
		})
		in := `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"up","arguments":{"key":"k1","file":"data:text/plain;charset=UTF-8;base64,` +
			base64.StdEncoding.EncodeToString(payload) + `","after":"x"}}}`
		m, err := Read(iotest.HalfReader(strings.NewReader(in)), testOptions(t), router)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		f := m.Files.Get("/params/arguments/file")
		if f == nil || f.Problem != tc.problem {
			t.Fatalf("%s: %+v", tc.name, f)
		}
		if seenArgs["key"] != "k1" || len(seenArgs) != 1 {
			t.Errorf("%s: Seen.Args = %v", tc.name, seenArgs)
		}
		switch {
		case tc.decline:
			if sink != nil || f.Sink() != nil {
				t.Fatalf("%s: a declined sink was used", tc.name)
			}
			if got, _ := io.ReadAll(f.Reader()); !bytes.Equal(got, payload) {
				t.Fatalf("%s: spool differs", tc.name)
			}
		case tc.problem != "":
			if sink == nil || sink.aborts != 1 || f.Sink() != nil || f.Reader() != nil {
				t.Fatalf("%s: rejected value: sink %+v, file %+v", tc.name, sink, f)
			}
		default:
			if f.Sink() != Sink(sink) || f.Reader() != nil || !bytes.Equal(sink.Bytes(), payload) || f.Size != int64(len(payload)) {
				t.Fatalf("%s: sink got %d bytes, file %+v", tc.name, sink.Len(), f)
			}
			if f.MediaType() != "text/plain; charset=utf-8" || sink.header.MediaType != "text/plain" {
				t.Errorf("%s: media type %q / %q", tc.name, f.MediaType(), sink.header.MediaType)
			}
			if sink.aborts != 0 {
				t.Fatalf("%s: aborted before release", tc.name)
			}
		}
		m.Files.Release()
		if sink != nil && sink.aborts != 1 {
			t.Errorf("%s: Release aborted the sink %d times, want once", tc.name, sink.aborts)
		}
	}
}

func maps(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestReadDuplicateFile: of two data URIs under the same key the last one
// wins, and the first one's sink is released.
func TestReadDuplicateFile(t *testing.T) {
	t.Parallel()
	var sinks []*testSink
	router := routerFunc(func(seen *Seen, path string) (Route, bool) {
		return Route{Open: func(codec.DataURIHeader) (Sink, error) {
			s := &testSink{}
			sinks = append(sinks, s)
			return s, nil
		}}, path == "/params/arguments/file"
	})
	in := `{"params":{"arguments":{"file":"data:,first","file":"data:,second"}}}`
	m, err := Read(strings.NewReader(in), testOptions(t), router)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Files.Release()
	if len(sinks) != 2 || sinks[0].aborts != 1 || sinks[1].aborts != 0 || sinks[1].String() != "second" {
		t.Fatalf("sinks %+v", sinks)
	}
	if f := m.Files.Get("/params/arguments/file"); f == nil || f.Sink() != Sink(sinks[1]) {
		t.Fatalf("file %+v", f)
	}
}

// TestReadNotAnObject: a body that is not an object is held as it came, for
// the protocol to say what is wrong with it; an empty body is no error.
func TestReadNotAnObject(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	for _, in := range []string{`[1,{"a":2}]`, `"s"`, `12`, `nonsense`} {
		m, err := Read(iotest.OneByteReader(strings.NewReader(in)), opts, nil)
		m.Files.Release()
		if err != nil || string(m.Raw) != in {
			t.Errorf("%q: %v, %q", in, err, m.Raw)
		}
	}
	for _, in := range []string{"", "  \n"} {
		m, err := Read(strings.NewReader(in), opts, nil)
		m.Files.Release()
		if err != nil || len(m.Raw) != 0 {
			t.Errorf("%q: %v, %q", in, err, m.Raw)
		}
	}
	// A read error is returned as it is.
	boom := errors.New("boom")
	m, err := Read(io.MultiReader(strings.NewReader(`{"a":"`), iotest.ErrReader(boom)), opts, nil)
	m.Files.Release()
	if !errors.Is(err, boom) {
		t.Errorf("read error: %v", err)
	}
}

// TestReadRepeatedMemberDropsFiles: a member given again replaces what was
// taken out of its first value, as encoding/json keeps only the last one.
func TestReadRepeatedMemberDropsFiles(t *testing.T) {
	t.Parallel()
	big := "data:text/plain;base64," + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("z"), 100<<10))
	for _, in := range []string{
		`{"params":{"arguments":{"f":"` + big + `","f":"small"}}}`,
		`{"params":{"arguments":{"f":"` + big + `"}},"params":{"arguments":{}}}`,
		`{"params":{"arguments":{"f":"` + big + `"},"arguments":{"g":1}}}`,
		`{"params":{"x":["` + strings.Repeat("r", 100<<10) + `"],"x":1}}`,
	} {
		m, err := Read(strings.NewReader(in), testOptions(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := m.Files.Len(); n != 0 {
			t.Errorf("%.80s…: %d files kept from a replaced member", in, n)
		}
		m.Files.Release()
	}
}
