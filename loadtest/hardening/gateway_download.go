package main

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// downloadCase is one hostile request to the gateway's /g/ route: its
// path, the key it is sent with ("" none), its method and extra headers,
// and what it must get.
type downloadCase struct {
	name, path, as, method string
	header                 map[string]string
	want                   hostile.Want
	raw                    bool // sent by hand, writing while reading (a server may answer a long head early)
}

// downloadCases are the hostile requests on a real downloadUrl (tok, for
// a blob whose GET as alice succeeds): forged and cut tokens, other
// methods, path tricks, Range; another principal's key and none (the link
// is the capability: either answer is right, but never a 5xx or an
// unclear one).
func downloadCases(tok string, flips int, intn func(int) int) []downloadCase {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	cs := []downloadCase{
		{name: "token cut short", path: "/g/" + tok[:len(tok)-5], as: "alice", want: hostile.WantReject},
		// The link is the capability (docs/gateway.md), as a /d link is:
		// whoever holds it reads as the principal it was minted for.
		{name: "another principal's key (bob)", path: "/g/" + tok, as: "bob", want: hostile.WantEither},
		{name: "no key", path: "/g/" + tok, want: hostile.WantEither},
		{name: "POST", path: "/g/" + tok, as: "alice", method: http.MethodPost, want: hostile.WantReject},
		{name: "DELETE", path: "/g/" + tok, as: "alice", method: http.MethodDelete, want: hostile.WantReject},
		{name: "empty token", path: "/g/", as: "alice", want: hostile.WantReject},
		{name: "token and a path after it", path: "/g/" + tok + "/x", as: "alice", want: hostile.WantReject},
		{name: "token of 10 KiB", path: "/g/" + strings.Repeat("A", 10<<10), as: "alice", raw: true, want: hostile.WantReject},
		{name: "token of 20 KiB (over the header limit)", path: "/g/" + strings.Repeat("A", 20<<10), as: "alice", raw: true, want: hostile.WantReject},
		{name: "/g/../v1/blobs", path: "/g/../v1/blobs", as: "alice", want: hostile.WantEither},
		{name: "/g/%2e%2e/v1/blobs", path: "/g/%2e%2e/v1/blobs", as: "alice", want: hostile.WantEither},
		{name: "Range bytes=0-9", path: "/g/" + tok, as: "alice", header: map[string]string{"Range": "bytes=0-9"}, want: hostile.WantEither},
		{name: "Range bytes=99999999999-", path: "/g/" + tok, as: "alice", header: map[string]string{"Range": "bytes=99999999999-"}, want: hostile.WantEither},
	}
	for range flips {
		i := intn(len(tok))
		c := alphabet[intn(len(alphabet))]
		if tok[i] == c {
			continue
		}
		forged := tok[:i] + string(c) + tok[i+1:]
		cs = append(cs, downloadCase{name: "one character changed", path: "/g/" + forged, as: "alice", want: hostile.WantReject})
	}
	return cs
}

// driveDownloadAbuse sends downloadCases to the gateway and tallies them
// on their own row.
func (gc *gatewayClient) driveDownloadAbuse(ctx context.Context, rep *report, rules wire.Rules, e *hostile.Env, flips int) {
	x := rep.row("gateway", "/g/ downloads")
	url, why := gc.downloadURL(ctx, "blob-ok")
	if why != "" {
		rep.fail(x.key(), "download tokens", "(setup)", why)
		return
	}
	_, tok, _ := strings.Cut(url, "/g/")
	addr := strings.TrimPrefix(gc.base, "http://")
	hc := wire.NewClient()
	for _, c := range downloadCases(tok, flips, e.Intn) {
		method := c.method
		if method == "" {
			method = http.MethodGet
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		var a *wire.Answer
		if c.raw {
			a = wire.Send(cctx, addr, wire.Raw{Head: e.Head(method, c.path, c.as, -1), Method: method}, 10*time.Second)
		} else {
			req := e.Request(cctx, method, c.path, c.as, nil)
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			a = wire.Do(hc, req)
		}
		cancel()
		tallyDownload(rep, x, rules, c, a)
	}
}

// tallyDownload judges one answer of the /g/ route (the control API's
// error shape).
func tallyDownload(rep *report, x *row, rules wire.Rules, c downloadCase, a *wire.Answer) {
	v, why := rules.Judge(wire.ShapeAPI, true, a)
	x.inputs++
	fail := func(problem string) { rep.fail(x.key(), "download tokens", c.name, problem) }
	switch v {
	case wire.Accepted:
		x.accepted++
		if c.want == hostile.WantReject {
			x.wrong++
			fail("accepted; it must be refused: " + a.String())
		}
	case wire.Clear:
		x.clear++
	case wire.Unclear:
		x.unclear++
		fail("unclear: " + why)
	case wire.ServerError:
		x.server++
		fail("server error: " + why)
	}
}
