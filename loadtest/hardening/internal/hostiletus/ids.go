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

// unknownID has the form of an upload id and names none.
const unknownID = "AAAAAAAAAAAAAAAAAAAAAAAAAA"

// final is a prep making the partial uploads parts makes; their ids go to
// the hit joined by spaces.
func final(parts func(ctx context.Context, e *hostile.Env) ([]string, error)) func(context.Context, *hostile.Env) (string, error) {
	return func(ctx context.Context, e *hostile.Env) (string, error) {
		ids, err := parts(ctx, e)
		return strings.Join(ids, " "), err
	}
}

// concatHit posts the final upload naming the prepared ids (joined by
// spaces in prep) as concat renders them.
func concatHit(concat func(ids []string) string) func(context.Context, *hostile.Env, string) *wire.Answer {
	return func(ctx context.Context, e *hostile.Env, joined string) *wire.Answer {
		return tusSend(ctx, e, http.MethodPost, tusBase, "alice", nil, tusVersion,
			"Upload-Concat: "+concat(strings.Fields(joined)), "Upload-Metadata: "+tusMeta("key", tusKey()))
	}
}

// urls is "final;" and the upload paths of ids.
func urls(ids []string) string {
	var b []string
	for _, id := range ids {
		b = append(b, tusBase+id)
	}
	return "final;" + strings.Join(b, " ")
}

// partials makes partial uploads of 10 bytes, one per owner (complete
// when done says so).
func partials(done bool, owners ...string) func(ctx context.Context, e *hostile.Env) ([]string, error) {
	return func(ctx context.Context, e *hostile.Env) ([]string, error) {
		var ids []string
		for _, o := range owners {
			id, err := tusPartial(ctx, e, o, 10, done)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		return ids, nil
	}
}

// tusConcats are final uploads naming foreign, unfinished, unknown and
// garbage uploads: each refused (400 or 403), nothing stored.
func tusConcats() []tusInput {
	lit := func(h string) func([]string) string { return func([]string) string { return h } }
	var ts []tusInput
	add := func(name string, status []int, prep func(context.Context, *hostile.Env) ([]string, error), concat func([]string) string) {
		t := tusInput{name: "POST Upload-Concat: " + name, status: status, keep: -1, hit: concatHit(concat)}
		if prep != nil {
			t.prep = final(prep)
		}
		ts = append(ts, t)
	}
	for _, h := range []string{"final;", "final; ", "final", "partial;x", "Partial", "final;garbage", "final;/v1/tus/../blobs/" + hostile.BaseText,
		"final;/v1/tus/" + strings.ToLower(unknownID), "final;/v1/tus/" + unknownID + "/x", "bogus", strings.Repeat("final;/v1/tus/x ", 300)} {
		add(fmt.Sprintf("%q", wire.Clip(h, 40)), []int{400}, nil, lit(h))
	}
	add("final naming an unknown upload", []int{400, 403, 404}, nil, lit("final;/v1/tus/"+unknownID))
	add("final naming 257 uploads", []int{400}, nil, lit("final;"+strings.Repeat("/v1/tus/"+unknownID+" ", 257)))
	add("final naming an unfinished partial upload", []int{400}, partials(false, "alice"), urls)
	add("final naming another principal's partial upload", []int{403}, partials(true, "alice", "bob"), urls)
	add("final naming another principal's partial upload on another host", []int{403}, partials(true, "bob"), func(ids []string) string {
		return "final;http://evil.example/v1/tus/" + ids[0]
	})
	add("final naming a plain (not partial) upload", []int{400}, func(ctx context.Context, e *hostile.Env) ([]string, error) {
		id, err := tusFresh(ctx, e, "alice", tusLen, tusSent)
		return []string{id}, err
	}, urls)
	ts = append(ts, tusInput{name: "POST Upload-Concat: final naming one partial upload twice", keep: -1,
		prep: final(partials(true, "alice")), hit: concatTwice})
	ts = append(ts, tusInput{name: "POST Upload-Concat: final naming partial uploads another final upload took", status: []int{403}, keep: -1,
		prep: func(ctx context.Context, e *hostile.Env) (string, error) {
			ids, err := partials(true, "alice", "alice")(ctx, e)
			if err != nil {
				return "", err
			}
			_, err = tusFinal(ctx, e, ids)
			return strings.Join(ids, " "), err
		}, hit: concatHit(urls)})
	ts = append(ts, tusInput{name: "PATCH of a final upload", status: []int{403}, keep: -1, prep: completedFinal,
		hit: func(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
			return tusPatch(ctx, e, "alice", id, 20, []byte("x"))
		}})
	return ts
}

// concatTwice names one complete partial upload twice in a final upload:
// refused, or stored as its bytes twice (registered with the store check).
func concatTwice(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
	key := tusKey()
	twice := slices.Concat(tusPayload(10), tusPayload(10))
	tusExpect(e, key, twice)
	a := tusSend(ctx, e, http.MethodPost, tusBase, "alice", nil, tusVersion, "Upload-Concat: "+urls([]string{id, id}), "Upload-Metadata: "+tusMeta("key", key))
	if a.Status != http.StatusCreated {
		e.Forget("alice", key)
		return a
	}
	if why := tusStored(ctx, e, key, twice); why != "" {
		return &wire.Answer{Status: http.StatusTeapot, Body: fmt.Appendf(nil, `{"error":{"code":"harness","message":%q}}`, why)}
	}
	return a
}

// completedFinal is alice's final upload of two partial uploads, stored.
func completedFinal(ctx context.Context, e *hostile.Env) (string, error) {
	ids, err := partials(true, "alice", "alice")(ctx, e)
	if err != nil {
		return "", err
	}
	return tusFinal(ctx, e, ids)
}

// tusFinal stores alice's final upload of the partial uploads ids (10
// bytes each) under a fresh key.
func tusFinal(ctx context.Context, e *hostile.Env, ids []string) (string, error) {
	key := tusKey()
	tusExpect(e, key, slices.Concat(tusPayload(10), tusPayload(10)))
	a := tusSend(ctx, e, http.MethodPost, tusBase, "alice", nil, tusVersion, "Upload-Concat: "+urls(ids), "Upload-Metadata: "+tusMeta("key", key))
	if a.Status != http.StatusCreated {
		return "", fmt.Errorf("the final upload: %s", a.String())
	}
	return tusIDOf(a), nil
}

// tusDeferred abuses creation-defer-length: lengths set late, twice,
// below the offset or over the limit.
func tusDeferred() []tusInput {
	off := "Upload-Offset: " + strconv.Itoa(tusSent)
	var ts []tusInput
	for _, c := range []struct {
		length string
		status int
	}{{"-5", 400}, {"abc", 400}, {"5", 400}, {"", 204}, {strconv.Itoa(256<<20 + 1), 413}, {"99999999999999999999", 400}} {
		ts = append(ts, tusInput{name: fmt.Sprintf("PATCH of a deferred-length upload, Upload-Length %q", c.length), status: []int{c.status},
			prep: prepDeferred, keep: tusSent + tern(c.status == 204, 10, 0),
			hit: patch(next10(), tusVersion, tusType, off, "Upload-Length: "+c.length)})
	}
	ts = append(ts, tusInput{name: "PATCH of a deferred-length upload, its length then another", status: []int{400}, prep: prepDeferred, keep: tusSent + 10,
		hit: func(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
			if a := tusPatch(ctx, e, "alice", id, tusSent, next10(), "Upload-Length: "+strconv.Itoa(tusLen)); a.Status != http.StatusNoContent {
				return a
			}
			return tusPatch(ctx, e, "alice", id, tusSent+10, nil, "Upload-Length: 60")
		}, then: resumed})
	return ts
}

// prepDeferred is an upload of deferred length with tusSent bytes sent.
func prepDeferred(ctx context.Context, e *hostile.Env) (string, error) {
	id, err := tusCreate(ctx, e, "alice", nil, "Upload-Defer-Length: 1", "Upload-Metadata: "+tusMeta("key", tusKey()))
	if err != nil {
		return "", err
	}
	if a := tusPatch(ctx, e, "alice", id, 0, tusPayload(tusLen)[:tusSent]); a.Status != http.StatusNoContent {
		return "", fmt.Errorf("the first PATCH: %s", a.String())
	}
	return id, nil
}

func tern(c bool, a, b int) int {
	if c {
		return a
	}
	return b
}

// tusTargets are HEAD, PATCH, DELETE and other methods on unknown and
// foreign uploads and on paths with tricks: each refused, and the upload
// of another principal still whole after.
func tusTargets() []tusInput {
	var ts []tusInput
	for _, m := range []string{http.MethodHead, http.MethodDelete, http.MethodPatch} {
		hdr := []string{tusVersion}
		if m == http.MethodPatch {
			hdr = append(hdr, tusType, "Upload-Offset: 0")
		}
		for _, p := range []string{unknownID, strings.ToLower(unknownID), unknownID + "A", unknownID + "/", unknownID + "/x", unknownID + "%00",
			"%2e%2e%2fblobs%2f" + escapeAll(hostile.BaseText), "..%2f..%2fv1%2fblobs%2fhard", ".mcpblob", strings.Repeat("A", 10000), "%41" + unknownID[1:]} {
			ts = append(ts, tusInput{name: m + " " + wire.Clip(tusBase+p, 50), status: []int{404}, keep: -1, hit: target(m, tusBase+p, "alice", hdr...)})
		}
		ts = append(ts, tusInput{name: m + " another principal's upload", status: []int{404}, keep: tusSent, as: "bob",
			prep: func(ctx context.Context, e *hostile.Env) (string, error) {
				return tusFresh(ctx, e, "bob", tusLen, tusSent)
			},
			hit: func(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
				return tusSend(ctx, e, m, tusBase+id, "alice", nil, hdr...)
			}})
		ts = append(ts, tusInput{name: m + " without credentials", status: []int{401}, keep: tusSent, prep: prepFresh,
			hit: func(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
				return tusSend(ctx, e, m, tusBase+id, "", nil, hdr...)
			}})
	}
	ts = append(ts,
		tusInput{name: "DELETE with a blobs:read key", status: []int{403}, keep: tusSent, prep: prepFresh,
			hit: func(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
				return tusSend(ctx, e, http.MethodDelete, tusBase+id, "mallory", nil, tusVersion)
			}},
		tusInput{name: "GET of an upload", status: []int{405}, keep: tusSent, prep: prepFresh,
			hit: func(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
				return tusSend(ctx, e, http.MethodGet, tusBase+id, "alice", nil, tusVersion)
			}},
		tusInput{name: "PUT /v1/tus/", status: []int{405}, keep: -1, hit: target(http.MethodPut, tusBase, "alice", tusVersion)},
		tusInput{name: "DELETE, then HEAD and PATCH", status: []int{404}, keep: -1, prep: prepFresh,
			hit: func(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
				if a := tusSend(ctx, e, http.MethodDelete, tusBase+id, "alice", nil, tusVersion); a.Status != http.StatusNoContent {
					return a
				}
				if a := tusSend(ctx, e, http.MethodHead, tusBase+id, "alice", nil, tusVersion); a.Status != http.StatusNotFound {
					return a
				}
				return tusPatch(ctx, e, "alice", id, tusSent, next10())
			}},
	)
	return ts
}

// target sends method to path as principal, with no body.
func target(method, path, principal string, hdr ...string) func(context.Context, *hostile.Env, string) *wire.Answer {
	return func(ctx context.Context, e *hostile.Env, _ string) *wire.Answer {
		return tusSend(ctx, e, method, path, principal, nil, hdr...)
	}
}

// escapeAll percent-encodes every byte of s.
func escapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}
