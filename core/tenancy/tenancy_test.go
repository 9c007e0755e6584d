package tenancy

import (
	"fmt"
	"testing"

	"github.com/mcpblob/mcpblob/core/auth"
)

func TestPolicy(t *testing.T) {
	p := Policy{Mode: Principal}
	alice := auth.Identity{Principal: "alice", Scopes: []string{auth.ScopeRead}}
	admin := auth.Identity{Principal: "root", Scopes: []string{auth.ScopeAdmin}}
	for _, c := range []struct{ got, want string }{
		{p.Raw(alice, "a/b"), ".ns/alice/a/b"},
		{p.Raw(admin, "a/b"), "a/b"},
		{Policy{}.Raw(alice, "a/b"), "a/b"},
		{p.Local("alice", ".ns/alice/a/b"), "a/b"},
		{p.Local("bob", ".ns/alice/a/b"), ".ns/alice/a/b"},
		{p.Audience(alice), "ns:alice"},
		{p.Audience(admin), AdminAudience},
		{Policy{}.Audience(alice), ""},
		{pair(p.UploadTarget(alice, "k")), ".ns/alice/k|"},
		{pair(p.UploadTarget(alice, "")), "|.ns/alice/"},
		{fmt.Sprint(p.Changes(".ns/alice/k")), "[{k ns:alice} {.ns/alice/k admin}]"},
		{fmt.Sprint(p.Changes("k")), "[{k admin}]"},
		{fmt.Sprint(Policy{}.Changes("k")), "[{k }]"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func pair(object, prefix string) string { return object + "|" + prefix }
