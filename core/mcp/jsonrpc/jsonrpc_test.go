package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// parse scans in as the server does and parses the message.
func parse(t *testing.T, in string) (*Message, Kind, *Error) {
	t.Helper()
	sm, err := scan.Read(strings.NewReader(in), scan.Options{MaxBodyBytes: 1 << 20, MaxFileBytes: 1 << 20, SpoolDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatalf("scan %s: %v", in, err)
	}
	t.Cleanup(sm.Files.Release)
	return Parse(sm)
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		kind Kind
		code int // 0: no error
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, KindRequest, 0},
		{`{"jsonrpc":"2.0","id":"a","method":"ping","params":null}`, KindRequest, 0},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, KindNotification, 0},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, KindResponse, 0},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}}`, KindResponse, 0},
		{``, 0, CodeParseError},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 0, CodeInvalidRequest},
		{`"ping"`, 0, CodeInvalidRequest},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, 0, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, 0, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":3}`, 0, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, 0, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, 0, CodeInvalidRequest},
	} {
		m, kind, e := parse(t, tc.in)
		switch {
		case tc.code == 0 && e != nil:
			t.Errorf("%s: %v", tc.in, e)
		case tc.code != 0 && (e == nil || e.Code != tc.code || e.HTTPStatus() != 400):
			t.Errorf("%s: got %v, want code %d with status 400", tc.in, e, tc.code)
		case tc.code == 0 && kind != tc.kind:
			t.Errorf("%s: kind %d, want %d", tc.in, kind, tc.kind)
		case tc.code == 0 && m.Params == nil && m.ParamFields != nil:
			t.Errorf("%s: null params left members", tc.in)
		}
	}
}

func TestBuilders(t *testing.T) {
	t.Parallel()
	id := json.RawMessage(`"x-1"`)
	if got := string(Envelope(id, []byte(`{}`))); got != `{"jsonrpc":"2.0","id":"x-1","result":{}}` {
		t.Errorf("Envelope = %s", got)
	}
	e := NewError(CodeInvalidParams, "bad", map[string]any{"k": 1}).WithStatus(400)
	if got := string(EncodeError(nil, e)); got != `{"jsonrpc":"2.0","error":{"code":-32602,"message":"bad","data":{"k":1}}}` {
		t.Errorf("EncodeError = %s", got)
	}
	if got := string(EncodeNotification("n", nil)); got != `{"jsonrpc":"2.0","method":"n"}` {
		t.Errorf("EncodeNotification = %s", got)
	}
	if got := string(EncodeRequest(3, "m", map[string]any{})); got != `{"id":3,"jsonrpc":"2.0","method":"m","params":{}}` {
		t.Errorf("EncodeRequest = %s", got)
	}
	if NewError(1, "", nil).HTTPStatus() != 200 || e.HTTPStatus() != 400 {
		t.Error("HTTPStatus")
	}
}

func TestIDKey(t *testing.T) {
	t.Parallel()
	for _, same := range [][2]string{{`1`, `01`}, {`"a"`, `"\u0061"`}} {
		if IDKey(json.RawMessage(same[0])) != IDKey(json.RawMessage(same[1])) {
			t.Errorf("IDKey(%s) != IDKey(%s)", same[0], same[1])
		}
	}
	if IDKey(json.RawMessage(`1`)) == IDKey(json.RawMessage(`"1"`)) {
		t.Error("string and integer ids collide")
	}
}
