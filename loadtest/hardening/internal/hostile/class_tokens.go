package hostile

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

const b64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// mutation is a forged variant of a real token; ok is true when the
// variant is the same token (the server may accept it).
type mutation struct {
	label string
	tok   string
	ok    bool
	// claimsOnly: validly signed, only its object is hostile; the upload
	// page may show its form for it (the upload itself is refused at /u).
	claimsOnly bool
}

func mut(label, tok string, ok bool) mutation { return mutation{label: label, tok: tok, ok: ok} }

// mutations of tok: truncations, additions, flips of single characters
// (never the last of a segment, whose low bits base64 may ignore), case,
// key id and separator changes, and percent-encoding (the same token).
func (e *Env) mutations(tok string, flips int) []mutation {
	ms := []mutation{
		mut("empty", "", false), mut("last character dropped", tok[:len(tok)-1], false),
		mut("last 4 characters dropped", tok[:len(tok)-4], false), mut("first character dropped", tok[1:], false),
		mut("A appended", tok+"A", false), mut("= appended", tok+"=", false), mut("%00 appended", tok+"%00", false),
		mut("/extra appended", tok+"/extra", false), mut("case swapped", swapCase(tok), false),
		mut("signature removed", tok[:strings.LastIndexByte(tok, '.')+1], false),
		mut("signature of zeros", tok[:strings.LastIndexByte(tok, '.')+1]+strings.Repeat("A", 43), false),
		mut("percent-encoded", escapeAll(tok), true),
	}
	if strings.HasPrefix(tok, "~") {
		_, box, _ := strings.Cut(tok, ".")
		ms = append(ms, mut("unknown key id", "~zz."+box, false), mut("key id ../", "~...."+box, false),
			mut("unsealed (no ~)", tok[1:], false))
	}
	for range flips {
		ms = append(ms, e.flip(tok))
	}
	return ms
}

// flip replaces one character (not the last of a '.' segment) with
// another base64url character.
func (e *Env) flip(tok string) mutation {
	for {
		i := e.Intn(len(tok) - 1)
		if tok[i] == '.' || tok[i] == '~' || tok[i+1] == '.' {
			continue
		}
		c := b64url[e.Intn(len(b64url))]
		if c == tok[i] {
			continue
		}
		return mut(fmt.Sprintf("character %d changed", i), tok[:i]+string(c)+tok[i+1:], false)
	}
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 32
		case r >= 'A' && r <= 'Z':
			return r + 32
		}
		return r
	}, s)
}

// forged are tokens signed or sealed with the server's real key but with
// hostile claims: past the signature, the claims must still be checked.
func (e *Env) forged(purpose string) []mutation {
	kr := e.keyring
	sign := func(label string, c token.Claims, ok bool) mutation {
		c.Purpose = purpose
		if c.Expires.IsZero() {
			c.Expires = time.Now().Add(10 * time.Minute)
		}
		var t string
		var err error
		if purpose == token.PurposeDownload {
			t, err = kr.Seal(c)
		} else {
			t, err = kr.Sign(c)
		}
		if err != nil {
			return mutation{label: label + " (could not be made: " + err.Error() + ")", tok: "x"}
		}
		m := mut("validly signed, "+label, t, ok)
		m.claimsOnly = c.Object != "" && c.Expires.After(time.Now())
		return m
	}
	n := next()
	// A token without a principal stores in the shared root namespace,
	// which no key of the harness lists under tenancy (the server never
	// mints one there: with keys every token names its principal).
	var noPrincipal []mutation
	if !e.tenancy {
		noPrincipal = append(noPrincipal, sign("no principal", token.Claims{Object: fmt.Sprintf("hard/forged-%d", n)}, true))
	}
	return append([]mutation{
		sign("object .mcpblob/token-keys", token.Claims{Principal: "alice", Object: ".mcpblob/token-keys"}, false),
		sign("object ../escape", token.Claims{Principal: "alice", Object: fmt.Sprintf("../escape-%d", n)}, false),
		sign("object .mcpblob/claims/…", token.Claims{Principal: "alice", Object: fmt.Sprintf(".mcpblob/claims/links/x%d", n)}, false),
		sign("object an alias of a baseline blob", token.Claims{Principal: "alice", Object: "hard/base/./text.txt"}, false),
		sign("expired", token.Claims{Principal: "alice", Object: BaseText, Expires: time.Now().Add(-time.Minute)}, false),
	}, noPrincipal...)
}

// tokenAbuse forges and tampers with /d links, /u endpoints, the upload
// page's tokens and 2025-11-25 session ids, and replays single-use ones.
func tokenAbuse(ctx context.Context, e *Env) []Batch {
	link := e.mintLink(ctx, BaseText, false)
	up := e.MintUpload(ctx, "alice", map[string]any{"maxSize": 1024})
	sid := e.session(ctx, "alice", nil)
	if link == "" || up == "" || sid == "" {
		return setupFailed("token forgery", D, "minting a /d link, an /u endpoint and a session")
	}
	var d, u, page, leg []Case
	for _, m := range append(e.mutations(link, e.flips), e.forged(token.PurposeDownload)...) {
		d = append(d, noStore(rawCase("/d "+m.label, wantFor(m), http.MethodGet, "/d/"+m.tok, "", nil)))
	}
	for _, m := range append(e.mutations(up, e.flips), e.forged(token.PurposeUpload)...) {
		u = append(u, rawCase("/u "+m.label, wantFor(m), http.MethodPut, "/u/"+m.tok, "", []byte("forged"), "Content-Type: text/plain"))
		pw := wantFor(m)
		if m.claimsOnly {
			pw = WantEither
		}
		page = append(page, noStore(rawCase("/upload "+m.label, pw, http.MethodGet, "/upload/"+m.tok, "", nil)))
	}
	for _, m := range e.mutations(sid, e.flips) {
		c := legacyCase("Mcp-Session-Id "+m.label, wantFor(m), false, false, func(*Env) []byte { return RPC("tools/list", map[string]any{}) })
		c.Send = withHeader(c.Send, "Mcp-Session-Id", m.tok)
		leg = append(leg, c)
	}
	d = append(d, crossPurpose(up, sid)...)
	u = append(u, noStore(rawCase("/u with a /d token", WantReject, http.MethodPut, "/u/"+link, "", []byte("x"))),
		noStore(rawCase("/u with a session id", WantReject, http.MethodPut, "/u/"+sid, "", []byte("x"))))
	d = append(d, replayLink())
	u = append(u, replayUpload())
	return []Batch{{"token forgery", D, d}, {"token forgery", U, u}, {"token forgery", Page, page}, {"token forgery", Legacy, leg}}
}

func wantFor(m mutation) Want {
	if m.ok {
		return WantEither
	}
	return WantReject
}

// withHeader makes send go with header name replaced by value ("":
// removed).
func withHeader(send func(context.Context, *Env) *wire.Answer, name, value string) func(context.Context, *Env) *wire.Answer {
	return func(ctx context.Context, e *Env) *wire.Answer {
		return send(context.WithValue(ctx, headerOverride{}, [2]string{name, value}), e)
	}
}

// headerOverride is a context key: legacyReq and modernReq apply it
// through overrideHeaders (a tampered session id replaces the real one;
// an empty value removes the header).
type headerOverride struct{}

func overrideHeaders(ctx context.Context, req *http.Request) {
	kv, ok := ctx.Value(headerOverride{}).([2]string)
	switch {
	case !ok:
	case kv[1] == "":
		req.Header.Del(kv[0])
	default:
		req.Header.Set(kv[0], kv[1])
	}
}

// crossPurpose: tokens of other purposes on /d.
func crossPurpose(up, sid string) []Case {
	return []Case{
		noStore(rawCase("/d with an upload token", WantReject, http.MethodGet, "/d/"+up, "", nil)),
		noStore(rawCase("/d with a session id", WantReject, http.MethodGet, "/d/"+sid, "", nil)),
	}
}

// replayLink redeems a single-use link, then sends it again: the second
// GET must be refused (404).
func replayLink() Case {
	return Case{Name: "/d single-use link replayed", Want: WantReject, Send: func(ctx context.Context, e *Env) *wire.Answer {
		tok := e.mintLink(ctx, BaseText, true)
		first := wire.Do(e.HTTP, e.Request(ctx, http.MethodGet, "/d/"+tok, "", nil))
		if first.Status != http.StatusOK {
			return first
		}
		return e.sendHTTP(ctx, e.Request(ctx, http.MethodGet, "/d/"+tok, "", nil))
	}}
}

// replayUpload uploads once with an endpoint, then again: the second must
// be refused (409), and the first object stays as it was.
func replayUpload() Case {
	return Case{Name: "/u endpoint used twice", Want: WantReject, Stores: true, Send: func(ctx context.Context, e *Env) *wire.Answer {
		tok := e.MintUpload(ctx, "alice", map[string]any{})
		req := e.Request(ctx, http.MethodPut, "/u/"+tok, "", []byte("first"))
		req.Header.Set("Content-Type", "text/plain")
		first := wire.Do(e.HTTP, req)
		if first.Status != http.StatusCreated {
			return first
		}
		e.inv.NoteStored("alice", first)
		req = e.Request(ctx, http.MethodPut, "/u/"+tok, "", []byte("second"))
		req.Header.Set("Content-Type", "text/plain")
		return e.sendHTTP(ctx, req)
	}}
}
