package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// activeType is stored content a browser could run or render actively.
type activeType struct {
	ctype, body string
	active      bool // must be an attachment with a sandboxing CSP
}

var activeTypes = []activeType{
	{"text/html", "<html><script>fetch('/v1/blobs')</script></html>", true},
	{"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`, true},
	{"application/xhtml+xml", `<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>`, true},
	{"text/xml", `<?xml version="1.0"?><x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(1)</x:script>`, true},
	{"application/javascript", "alert(1)", true},
	{"application/x-hardening-unknown", "<script>alert(1)</script>", true},
	{"text/plain", "<html><script>alert(1)</script></html>", false},
}

// activeContent stores each type through PUT /v1/blobs, then fetches it
// through /v1, a /d link and resources/stream (direct): every answer must
// carry nosniff, and active types Content-Disposition: attachment and a
// Content-Security-Policy with sandbox (issue 12 item 1, DESIGN.md).
func activeContent(ctx context.Context, e *env) []batch {
	var v1, d, str []hcase
	for _, t := range activeTypes {
		key := fmt.Sprintf("hard/active-%d", next())
		req := e.request(ctx, http.MethodPut, "/v1/blobs/"+key, "alice", []byte(t.body))
		req.Header.Set("Content-Type", t.ctype)
		a := do(e.hc, req)
		if a.status != http.StatusCreated {
			continue
		}
		e.inv.noteStored("alice", a)
		chk := servedSafely(t)
		c := noStore(rawCase("GET /v1 "+t.ctype, wantAccept, http.MethodGet, "/v1/blobs/"+key, "alice", nil))
		c.check = chk
		v1 = append(v1, c)
		if link := e.mintLink(ctx, key, false); link != "" {
			c = noStore(rawCase("GET /d "+t.ctype, wantAccept, http.MethodGet, "/d/"+link, "", nil))
			c.check = chk
			d = append(d, c)
		}
		c = readCase(sLegacy, "resources/stream "+t.ctype, wantAccept, "resources/stream", "blob:///"+key)
		c.check = chk
		str = append(str, c)
	}
	return []batch{{"active content", sV1, v1}, {"active content", sD, d}, {"active content", sStream, str}}
}

// servedSafely checks the headers of a served blob of type t.
func servedSafely(t activeType) func(context.Context, *env, *answer) string {
	return func(_ context.Context, _ *env, a *answer) string {
		if a.status/100 != 2 || strings.Contains(a.contentType(), "json") {
			return "" // a JSON-RPC answer (url mode) or an error: nothing served here
		}
		var miss []string
		if !strings.EqualFold(a.header.Get("X-Content-Type-Options"), "nosniff") {
			miss = append(miss, "X-Content-Type-Options: nosniff")
		}
		if t.active && !strings.HasPrefix(strings.ToLower(a.header.Get("Content-Disposition")), "attachment") {
			miss = append(miss, "Content-Disposition: attachment")
		}
		if t.active && !strings.Contains(strings.ToLower(a.header.Get("Content-Security-Policy")), "sandbox") {
			miss = append(miss, "Content-Security-Policy: sandbox")
		}
		if len(miss) > 0 {
			return "served " + t.ctype + " without " + strings.Join(miss, ", ")
		}
		return ""
	}
}
