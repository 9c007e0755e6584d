package main

import (
	"errors"
	"testing"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/badupstream"
)

func behaviour(t *testing.T, name string) badupstream.Behaviour {
	t.Helper()
	for _, b := range badupstream.Behaviours {
		if b.Name == name {
			return b
		}
	}
	t.Fatalf("no behaviour %q", name)
	return badupstream.Behaviour{}
}

// The gateway pass's judging: each outcome accepts what it names and
// nothing else.
func TestWantJudgesGatewayAnswers(t *testing.T) {
	rpc502 := []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Upstream error: x","data":{"upstream":"non_mcp"}}}`)
	cut := errors.New("unexpected EOF")
	for _, tc := range []struct {
		name, behaviour string
		r               reply
		ok              bool
	}{
		{"refused as named", "html", reply{status: 502, head: rpc502}, true},
		{"refused with another kind", "status-500", reply{status: 502, head: rpc502}, false},
		{"refused with another status", "html", reply{status: 500, head: rpc502}, false},
		{"refused without a JSON error", "html", reply{status: 502, head: []byte("bad gateway")}, false},
		{"relayed instead of refused", "redirect", reply{status: 200, head: []byte(`{}`)}, false},
		{"/g/ error object", "blob-html", reply{status: 502, head: []byte(`{"error":{"code":"bad_gateway","message":"not MCP"}}`)}, true},
		{"cut after 200", "ends-early", reply{status: 200, cut: cut}, true},
		{"cut before any answer", "ends-early", reply{cut: cut}, true},
		{"a cut body that looks whole", "ends-early", reply{status: 200}, false},
		{"relayed", "wrong-id", reply{status: 200}, true},
		{"relayed but cut", "huge-json", reply{status: 200, cut: cut}, false},
		{"no answer where one belongs", "silent", reply{cut: cut}, false},
		{"decoded whole", "blob-ok", reply{status: 200, n: 100, bad: -1}, true},
		{"decoded short", "blob-ok", reply{status: 200, n: 99, bad: -1}, false},
		{"decoded wrong", "blob-ok", reply{status: 200, n: 100, bad: 7}, false},
	} {
		got := want(behaviour(t, tc.behaviour), tc.r, 100)
		if (got == "") != tc.ok {
			t.Errorf("%s: want(%s) = %q; want ok=%v", tc.name, tc.behaviour, got, tc.ok)
		}
	}
}
