package hostiletus

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// tusInput is one hostile tus input. prep makes what it hits (an upload
// of its own; "" when it needs none), hit sends it, and the answer must
// have one of the statuses of docs/uploads.md's refusal table. keep, when
// ≥ 0, is the offset HEAD must still report after (nothing appended);
// then, when set, looks further (a resumed upload's blob).
type tusInput struct {
	name   string
	status []int
	prep   func(ctx context.Context, e *hostile.Env) (string, error)
	hit    func(ctx context.Context, e *hostile.Env, id string) *wire.Answer
	keep   int
	then   func(ctx context.Context, e *hostile.Env, id string, a *wire.Answer) string
	as     string // whose upload keep is read as ("" = alice)
}

// Prepared uploads: tusLen bytes, of which tusSent were sent.
const (
	tusLen  = 100
	tusSent = 10
)

func (t tusInput) toCase() hostile.Case {
	var id string
	w := hostile.WantEither // no status given, or successes and refusals both
	switch {
	case len(t.status) == 0:
	case !slices.ContainsFunc(t.status, func(s int) bool { return s < 400 }):
		w = hostile.WantReject
	case !slices.ContainsFunc(t.status, func(s int) bool { return s >= 400 }):
		w = hostile.WantAccept
	}
	c := hostile.Case{Name: t.name, Want: w, CheckAlways: true}
	c.Send = func(ctx context.Context, e *hostile.Env) *wire.Answer {
		if t.prep != nil {
			var err error
			if id, err = t.prep(ctx, e); err != nil {
				return &wire.Answer{Err: fmt.Errorf("(setup) %w", err)}
			}
		}
		return t.hit(ctx, e, id)
	}
	c.Check = func(ctx context.Context, e *hostile.Env, a *wire.Answer) string {
		if why := statusIn(a.Status, t.status); why != "" {
			return why + ": " + a.String()
		}
		return t.after(ctx, e, id, a)
	}
	return c
}

// after checks the upload once the answer came: the offset kept, then
// the further look.
func (t tusInput) after(ctx context.Context, e *hostile.Env, id string, a *wire.Answer) string {
	if t.keep >= 0 && id != "" {
		as := t.as
		if as == "" {
			as = "alice"
		}
		off, err := tusOffset(ctx, e, as, id)
		switch {
		case err != nil:
			return "after the input: " + err.Error()
		case off != t.keep:
			return fmt.Sprintf("HEAD reports offset %d after the input, want %d: a refused request appended", off, t.keep)
		}
	}
	if t.then != nil {
		return t.then(ctx, e, id, a)
	}
	return ""
}

// prepFresh is an upload of tusLen bytes with tusSent sent.
func prepFresh(ctx context.Context, e *hostile.Env) (string, error) {
	return tusFresh(ctx, e, "alice", tusLen, tusSent)
}

// Name is the class's name (in the table, and for -only).
const Name = "tus"

// Abuse generates the class: every tus input, on the /v1/tus row.
func Abuse(_ context.Context, e *hostile.Env) []hostile.Batch {
	var cs []hostile.Case
	for _, list := range [][]tusInput{tusCreations(e), tusMetadata(e), tusConcats(), tusPatches(), tusChecksums(),
		tusBodies(), tusDeferred(), tusTargets()} {
		for _, t := range list {
			cs = append(cs, t.toCase())
		}
	}
	return []hostile.Batch{{Class: Name, Surface: hostile.Tus, Cases: cs}}
}

// post is a creation request's hit with the header lines given.
func post(principal string, hdr ...string) func(context.Context, *hostile.Env, string) *wire.Answer {
	return func(ctx context.Context, e *hostile.Env, _ string) *wire.Answer {
		return tusSend(ctx, e, http.MethodPost, tusBase, principal, nil, hdr...)
	}
}

// created is a creation that must succeed: 201 and a Location.
func created() func(context.Context, *hostile.Env, string, *wire.Answer) string {
	return func(_ context.Context, _ *hostile.Env, _ string, a *wire.Answer) string {
		if a.Status == http.StatusCreated && tusIDOf(a) == "" {
			return "201 without the upload's Location: " + a.String()
		}
		return ""
	}
}

// tusCreations are creation requests with hostile lengths and versions.
func tusCreations(e *hostile.Env) []tusInput {
	meta := "Upload-Metadata: " + tusMeta("key", tusKey())
	var ts []tusInput
	for _, l := range []string{"-1", "abc", "1e3", "+10", "10, 10", "0x10", "99999999999999999999", "1.5", "１０"} {
		ts = append(ts, tusInput{name: "POST Upload-Length: " + l, status: []int{400}, hit: post("alice", tusVersion, "Upload-Length: "+l, meta), keep: -1})
	}
	for _, l := range []string{"999999999999999999", strconv.Itoa(256<<20 + 1)} {
		ts = append(ts, tusInput{name: "POST Upload-Length: " + l + " (over Tus-Max-Size)", status: []int{413}, hit: post("alice", tusVersion, "Upload-Length: "+l, meta), keep: -1})
	}
	for _, h := range [][]string{{}, {"Upload-Length: 10", "Upload-Defer-Length: 1"}, {"Upload-Defer-Length: 2"},
		{"Upload-Defer-Length: true"}, {"Upload-Defer-Length: 0"}, {"Upload-Length: 10", "Upload-Length: 20"}} {
		ts = append(ts, tusInput{name: "POST with " + strings.Join(h, ", "), status: []int{400}, hit: post("alice", append([]string{tusVersion, meta}, h...)...), keep: -1})
	}
	for _, v := range []string{"", "0.2.2", "1.0.0, 1.0.0", "1.0", "1.0.0-rc"} {
		ts = append(ts, tusInput{name: fmt.Sprintf("POST Tus-Resumable %q", v), status: []int{412}, keep: -1,
			hit:  post("alice", "Tus-Resumable: "+v, "Upload-Length: 10", meta),
			then: wantHeader("Tus-Version", "1.0.0")})
	}
	ts = append(ts,
		tusInput{name: "POST without credentials", status: []int{401}, hit: post("", tusVersion, "Upload-Length: 10", meta), keep: -1},
		tusInput{name: "POST with a blobs:read key", status: []int{403}, hit: post("mallory", tusVersion, "Upload-Length: 10", meta), keep: -1},
		tusInput{name: "POST Upload-Length: 0", status: []int{201}, keep: -1, hit: func(ctx context.Context, e *hostile.Env, _ string) *wire.Answer {
			key := tusKey()
			tusExpect(e, key, nil) // an empty upload is complete at once
			return tusSend(ctx, e, http.MethodPost, tusBase, "alice", nil, tusVersion, "Upload-Length: 0", "Upload-Metadata: "+tusMeta("key", key))
		}, then: created()},
		tusInput{name: "OPTIONS without Tus-Resumable", status: []int{204}, keep: -1, hit: func(ctx context.Context, e *hostile.Env, _ string) *wire.Answer {
			return tusSend(ctx, e, http.MethodOptions, tusBase, "alice", nil)
		}, then: wantHeader("Tus-Max-Size", strconv.Itoa(256<<20))},
	)
	return ts
}

// wantHeader checks that the answer carries a header's value.
func wantHeader(name, value string) func(context.Context, *hostile.Env, string, *wire.Answer) string {
	return func(_ context.Context, _ *hostile.Env, _ string, a *wire.Answer) string {
		if got := a.Header.Get(name); got != value {
			return fmt.Sprintf("%s %q, want %q", name, got, value)
		}
		return ""
	}
}

// tusMetadata are creations with Upload-Metadata garbage: each must be
// refused with 400, before any upload exists.
func tusMetadata(e *hostile.Env) []tusInput {
	b64 := func(s string) string { return tusMeta("x", s)[2:] }
	values := []string{
		"key", "key !!!", "key " + b64("a") + ",key " + b64("b"), ",,,,", " ", "key  " + b64("k"),
		"key " + b64("../etc/passwd"), "key " + b64(".mcpblob/records/tus/x/info"), "key " + b64("/abs"), "key " + b64("a//b"),
		"key " + b64("hard/a\r\nb"), "key " + b64("hard/\x00"), "key " + b64(strings.Repeat("a", 1100)),
		"key " + b64("hard/x") + ",filename " + b64(strings.Repeat("f", 300)),
		"key " + b64("hard/x") + ",filetype " + b64("text/html; ==="), "key " + b64("hard/x") + ",filetype " + b64(strings.Repeat("t", 300)),
		"key " + b64("hard/x") + ",filename " + b64("x\x7f"), "key " + base64Raw("hard/\xff\xfe"), "key YQ", "key YQ=",
		"k\xc3\xa9y " + b64("hard/x"), strings.Repeat("a"+" "+b64("b")+",", 9000/6), strings.Repeat("a,", 70) + "key " + b64("hard/x"),
	}
	var ts []tusInput
	for range e.Flips() / 4 {
		// Noise may happen to be valid metadata naming a valid key: either answer, clearly.
		v := "key " + randomGarbage(e, 40)
		ts = append(ts, tusInput{name: "POST Upload-Metadata: " + v, hit: post("alice", tusVersion, "Upload-Length: 10", "Upload-Metadata: "+v), keep: -1})
	}
	for _, v := range values {
		ts = append(ts, tusInput{name: "POST Upload-Metadata: " + wire.Clip(v, 40), status: []int{400},
			hit: post("alice", tusVersion, "Upload-Length: 10", "Upload-Metadata: "+v), keep: -1})
	}
	return ts
}

func base64Raw(s string) string { return tusMeta("x", s)[2:] }

// randomGarbage is n seeded bytes of base64-looking noise and separators.
func randomGarbage(e *hostile.Env, n int) string {
	const alphabet = "ABCDEFGHabcdefgh0123456789+/=, \t-_%"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[e.Intn(len(alphabet))]
	}
	return string(b)
}
