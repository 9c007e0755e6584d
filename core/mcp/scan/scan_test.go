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
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers by their text: 1e700 is valid JSON, not a float64
	var v any
	if err := dec.Decode(&v); err != nil {
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
// literals included: the scanner validates them as it copies them), nesting
// beyond 64 levels with ErrTooDeep, and large non-data strings count against
// MaxBodyBytes.
func TestReadErrors(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	for _, in := range []string{
		`{"a":"unterminated`, `{"a":"bad \x escape"}`, "{\"a\":\"ctl\x01\"}", `{"a" 1}`, `{"a":1,}x`,
		`{"a":1} {"b":2}`,
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
	deep := `{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`
	for _, sp := range splits {
		m, err := Read(sp.split(strings.NewReader(deep)), opts, nil)
		m.Files.Release()
		if !errors.Is(err, ErrTooDeep) {
			t.Errorf("%s: 100 levels: got %v, want ErrTooDeep", sp.name, err)
		}
	}
	big := `{"params":{"arguments":{"a":"` + strings.Repeat("x", 2<<20) + `"}}}`
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
// encoding/json decodes from the same message.
func TestReadLocatesMembers(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"b","n":[1,{"c":null}]},"_meta":{"progressToken":"p","k":{"v":1}}}}`,
		`{"params":{"_meta":{"x":1},"arguments":{"k":"\u00e9\"","k2":{}}},"method":"m","id":"s"}`,
		// Duplicate keys deeper down: the last one wins.
		`{"params":{"arguments":{"k":{"a":1,"a":2}},"_meta":{"m":[{"x":1,"x":2}]}}}`,
		// Members that are not objects are not containers.
		`{"params":{"_meta":5,"arguments":[1,2]}}`,
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
	in := `{"params":{"arguments":{"f":"` + strings.ReplaceAll(uri, "/", `\/`) + `","x":["` + long + `"]}},"jsonrpc":"2.0","id":1,"method":"tools/call"}`
	for _, sp := range splits {
		m, err := Read(sp.split(strings.NewReader(in)), testOptions(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"params":{"arguments":{"f":"","x":[""]}},"jsonrpc":"2.0","id":1,"method":"tools/call"}`; string(m.Raw) != want {
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
		raw := m.Files.Get("/params/arguments/x/0")
		if raw == nil || !raw.Raw() || raw.Size != int64(len(long)) || raw.Name != "0" {
			t.Fatalf("%s: raw spool: %+v", sp.name, raw)
		}
		if got, _ := io.ReadAll(raw.Reader()); string(got) != long {
			t.Fatalf("%s: raw spool differs", sp.name)
		}
		// A raw string where a file is expected is "not a URI".
		if f, bad := m.Files.Value("/params/arguments/x/0", "x", nil, FileSpec{}); bad != "" || f.Problem != "not a URI: a data: URI is required" || !f.Diverted() {
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

// TestReadDuplicateFile: two data URIs under the same argument are
// refused as a repeated member; the first one's sink is aborted when the
// Files are released, and the second is never opened.
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
	var me *MemberError
	if !errors.As(err, &me) || me.Path != "/params/arguments/file" {
		t.Fatalf("%v, want a repeated-member error", err)
	}
	m.Files.Release()
	if len(sinks) != 1 || sinks[0].aborts != 1 {
		t.Fatalf("sinks %+v", sinks)
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

// TestReadRepeatedMember: a member given twice in the message object,
// params, params._meta or params.arguments is refused as it arrives (a
// *MemberError naming it, with the id when it came first), whatever the
// values (what was taken out of the first value is released with the
// Files).
func TestReadRepeatedMember(t *testing.T) {
	t.Parallel()
	big := "data:text/plain;base64," + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("z"), 100<<10))
	for _, c := range []struct{ in, path, id string }{
		{`{"id":1,"id":2,"method":"a"}`, "/id", ""},
		{`{"id":1,"method":"a","method":"b"}`, "/method", "1"},
		{`{"id":"x","params":{"name":"x","name":"y"}}`, "/params/name", `"x"`},
		{`{"params":{"arguments":{"k":1,"k":2}}}`, "/params/arguments/k", ""},
		{`{"params":{"arguments":{"a":1}},"params":{"arguments":{"b":2}}}`, "/params", ""},
		{`{"params":{"arguments":{"a":1},"arguments":{"b":2}}}`, "/params/arguments", ""},
		{`{"params":{"_meta":{"a":1,"a":2}}}`, "/params/_meta/a", ""},
		{`{"params":{"arguments":{"f":"` + big + `","f":"small"}}}`, "/params/arguments/f", ""},
		{`{"params":{"arguments":{"f":"` + big + `"}},"params":{"arguments":{}}}`, "/params", ""},
		{`{"params":{"arguments":{"x":["` + strings.Repeat("r", 100<<10) + `"],"x":1}}}`, "/params/arguments/x", ""},
		// Keys are compared as encoding/json decodes them.
		{`{"params":{"arguments":{"\u006b":1,"k":2}}}`, "/params/arguments/k", ""},
		{"{\"params\":{\"arguments\":{\"a\xff\":1,\"a\xfe\":2}}}", "/params/arguments/a\ufffd", ""},
		// Many members (a map then finds the repeat).
		{`{"params":{"arguments":{` + manyMembers(40) + `,"m7":0}}}`, "/params/arguments/m7", ""},
	} {
		for _, sp := range splits {
			m, err := Read(sp.split(strings.NewReader(c.in)), testOptions(t), nil)
			var me *MemberError
			if !errors.As(err, &me) || !me.Repeated || me.Path != c.path || string(me.ID) != c.id {
				t.Errorf("%s: %.80s…: %v (%+v), want a repeated-member error at %s", sp.name, c.in, err, me, c.path)
			}
			m.Files.Release()
		}
	}
}

func manyMembers(n int) string {
	var parts []string
	for i := range n {
		parts = append(parts, `"m`+strconv.Itoa(i)+`":`+strconv.Itoa(i))
	}
	return strings.Join(parts, ",")
}

// TestReadRepeatedDeepMemberDropsFiles: a member given again deeper down
// replaces what was taken out of its first value, as encoding/json keeps
// only the last one.
func TestReadRepeatedDeepMemberDropsFiles(t *testing.T) {
	t.Parallel()
	big := "data:text/plain;base64," + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("z"), 100<<10))
	for _, in := range []string{
		`{"params":{"inputResponses":{"u":{"content":{"f":"` + big + `","f":"small"}}}}}`,
		`{"params":{"inputResponses":{"u":{"content":{"f":"` + big + `"}},"u":{}}}}`,
		`{"params":{"arguments":{"o":{"x":["` + strings.Repeat("r", 100<<10) + `"],"x":1}}}}`,
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

// TestReadLongProtocolString: a string over 64 KiB where the protocol reads
// the value (id, method, params.name, a _meta value, a completion
// argument…) is refused with a *MemberError naming it instead of being
// read as ""; under params.arguments, params.inputResponses and result it
// is taken out of the message (Diverted).
func TestReadLongProtocolString(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("L", 70_000)
	for _, c := range []struct{ in, path, id string }{
		{`{"jsonrpc":"2.0","id":"` + long + `","method":"ping"}`, "/id", ""},
		{`{"id":3,"method":"` + long + `"}`, "/method", "3"},
		{`{"id":3,"method":"tools/call","params":{"name":"` + long + `"}}`, "/params/name", "3"},
		{`{"params":{"_meta":{"progressToken":"` + long + `"}}}`, "/params/_meta/progressToken", ""},
		{`{"params":{"argument":{"name":"k","value":"` + long + `"}}}`, "/params/argument/value", ""},
		{`{"params":{"uri":"` + long + `"}}`, "/params/uri", ""},
		{`{"error":{"code":1,"message":"` + long + `"}}`, "/error/message", ""},
	} {
		m, err := Read(strings.NewReader(c.in), testOptions(t), nil)
		m.Files.Release()
		var me *MemberError
		if !errors.As(err, &me) || me.Repeated || me.Path != c.path || string(me.ID) != c.id ||
			!strings.Contains(me.Problem(), "longer than 65536 bytes") {
			t.Errorf("%.60s…: %v (%+v), want a too-long error at %s", c.in, err, me, c.path)
		}
	}
	for _, path := range []string{"/params/arguments/a", "/params/inputResponses/u/content/text", "/result/content/t"} {
		elems := strings.Split(strings.TrimPrefix(path, "/"), "/")
		in := `"` + long + `"`
		for i := len(elems) - 1; i >= 0; i-- {
			in = `{"` + elems[i] + `":` + in + `}`
		}
		m, err := Read(strings.NewReader(in), testOptions(t), nil)
		if err != nil {
			t.Errorf("%s: %v", path, err)
		} else if f := m.Files.Get(path); f == nil || !f.Diverted() || !f.Raw() || f.Size != int64(len(long)) {
			t.Errorf("%s: %+v, want a diverted raw string", path, f)
		}
		m.Files.Release()
	}
}

// TestReadRefusal: a sink that refuses a data URI before its first byte
// (Open returns a *Refusal) gives the File that problem and name, and the
// rest of the message is read.
func TestReadRefusal(t *testing.T) {
	t.Parallel()
	router := routerFunc(func(seen *Seen, path string) (Route, bool) {
		return Route{Open: func(codec.DataURIHeader) (Sink, error) {
			return nil, &Refusal{Argument: "key", Problem: "is taken"}
		}}, path == "/params/arguments/file"
	})
	in := `{"params":{"arguments":{"key":"k","file":"data:text/plain;base64,` + strings.Repeat("QUJD", 30<<10) + `","after":"x"}}}`
	m, err := Read(strings.NewReader(in), testOptions(t), router)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Files.Release()
	f := m.Files.Get("/params/arguments/file")
	if f == nil || f.Name != "key" || f.Problem != "is taken" || f.Reader() != nil || !f.Diverted() {
		t.Fatalf("file %+v", f)
	}
	if string(m.Args["after"]) != `"x"` {
		t.Errorf("the rest of the message: %s", m.Raw)
	}
}

// TestReadRefusedReadsOn: once a message is refused, the rest of it is
// still read (the answer must not race a client still sending), its long
// strings dropped rather than spooled or sent to a sink; past 16 MiB of
// them the message is abandoned (Unread). A protocol string over the body
// limit is ErrTooLarge.
func TestReadRefusedReadsOn(t *testing.T) {
	t.Parallel()
	opened := 0
	router := routerFunc(func(seen *Seen, path string) (Route, bool) {
		return Route{Open: func(codec.DataURIHeader) (Sink, error) { opened++; return &testSink{}, nil }}, path == "/params/arguments/file"
	})
	uri := func(n int) string { return "data:text/plain;base64," + strings.Repeat("QUJD", n/4) }
	for _, c := range []struct {
		in     string
		unread bool
	}{
		{`{"id":1,"id":2,"params":{"arguments":{"file":"` + uri(1<<20) + `","x":"` + strings.Repeat("y", 100<<10) + `"}}}`, false},
		{`{"params":{"_meta":{"t":"` + strings.Repeat("L", 100<<10) + `"},"arguments":{"file":"` + uri(1<<20) + `"}},"id":9}`, false},
		{`{"id":1,"id":2,"params":{"arguments":{"file":"` + uri(20<<20) + `"}}}`, true},
	} {
		opts := testOptions(t)
		opts.MaxBodyBytes = 32 << 20
		m, err := Read(strings.NewReader(c.in), opts, router)
		var me *MemberError
		if !errors.As(err, &me) || me.Unread != c.unread {
			t.Errorf("%.60s…: %v (%+v), want a refusal with Unread %v", c.in, err, me, c.unread)
		}
		if n := m.Files.Len(); n != 0 || opened != 0 {
			t.Errorf("%.60s…: %d files taken out, %d sinks opened after the refusal", c.in, n, opened)
		}
		if !c.unread && string(me.ID) != "9" && me.Path != "/id" {
			t.Errorf("%.60s…: id %s, want the id read after the refused member", c.in, me.ID)
		}
		m.Files.Release()
	}
	m, err := Read(strings.NewReader(`{"params":{"pad":"`+strings.Repeat("p", 2<<20)+`"}}`), testOptions(t), nil)
	m.Files.Release()
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("a 2 MiB protocol string with a 1 MiB limit: %v, want ErrTooLarge", err)
	}
}
