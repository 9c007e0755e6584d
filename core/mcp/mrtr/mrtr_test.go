package mrtr

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/scan"
	"github.com/mcpblob/mcpblob/core/token"
)

func TestSignVerify(t *testing.T) {
	t.Parallel()
	kr := token.NewRandomKeyring()
	args := map[string]json.RawMessage{"key": json.RawMessage(`"a"`), "n": json.RawMessage(`1`)}
	env := &Envelope{State: json.RawMessage(`{"step":2}`), Args: ArgDigests(args),
		Files: map[string]map[string]scan.FileSpec{"upload": {"file": {MaxSize: 1000}}}}
	tok, err := Sign(kr, env, "p", "tools/call", "t", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got, e := Verify(kr, tok, "p", "tools/call", "t")
	if e != nil || string(got.State) != `{"step":2}` || got.Files["upload"]["file"].MaxSize != 1000 {
		t.Fatalf("Verify = %+v, %v", got, e)
	}
	if e := CheckArgs(got.Args, args); e != nil {
		t.Fatalf("same arguments refused: %v", e)
	}
	for _, other := range [][3]string{{"q", "tools/call", "t"}, {"p", "prompts/get", "t"}, {"p", "tools/call", "u"}} {
		if _, e := Verify(kr, tok, other[0], other[1], other[2]); e == nil || e.Code != -32602 {
			t.Errorf("state for p tools/call t verified as %v: %v", other, e)
		}
	}
	expired, _ := Sign(kr, env, "p", "tools/call", "t", -time.Second)
	if _, e := Verify(kr, expired, "p", "tools/call", "t"); e == nil {
		t.Error("an expired state verified")
	}
}

func TestCheckArgs(t *testing.T) {
	t.Parallel()
	want := ArgDigests(map[string]json.RawMessage{"a": json.RawMessage(`1`)})
	for name, args := range map[string]map[string]json.RawMessage{
		"changed": {"a": json.RawMessage(`2`)},
		"added":   {"a": json.RawMessage(`1`), "b": json.RawMessage(`1`)},
		"removed": nil,
	} {
		if e := CheckArgs(want, args); e == nil || e.Code != -32602 {
			t.Errorf("%s: %v", name, e)
		}
	}
	if ArgDigests(nil) != nil || CheckArgs(nil, nil) != nil {
		t.Error("no arguments, no digests")
	}
}

func TestResponses(t *testing.T) {
	t.Parallel()
	if m, e := Responses(json.RawMessage(`{"a":{"action":"accept"}}`), true); e != nil || len(m) != 1 {
		t.Fatalf("valid: %v, %v", m, e)
	}
	if m, e := Responses(nil, false); e != nil || m != nil {
		t.Fatalf("absent: %v, %v", m, e)
	}
	for _, bad := range []string{`null`, `[]`, `{"a":1}`, `{"a":null}`, `"x"`} {
		if _, e := Responses(json.RawMessage(bad), true); e == nil || e.Code != -32602 {
			t.Errorf("%s accepted", bad)
		}
	}
}
