package hostile

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
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
// Content-Security-Policy with sandbox (docs/security.md, "How stored content
// is served").
func activeContent(ctx context.Context, e *Env) []Batch {
	var v1, d, str []Case
	for _, t := range activeTypes {
		key := fmt.Sprintf("hard/active-%d", next())
		req := e.Request(ctx, http.MethodPut, "/v1/blobs/"+key, "alice", []byte(t.body))
		req.Header.Set("Content-Type", t.ctype)
		a := wire.Do(e.HTTP, req)
		if a.Status != http.StatusCreated {
			continue
		}
		e.inv.NoteStored("alice", a)
		chk := servedSafely(t)
		c := noStore(rawCase("GET /v1 "+t.ctype, WantAccept, http.MethodGet, "/v1/blobs/"+key, "alice", nil))
		c.Check = chk
		v1 = append(v1, c)
		if link := e.mintLink(ctx, key, false); link != "" {
			c = noStore(rawCase("GET /d "+t.ctype, WantAccept, http.MethodGet, "/d/"+link, "", nil))
			c.Check = chk
			d = append(d, c)
		}
		c = readCase(Legacy, "resources/stream "+t.ctype, WantAccept, "resources/stream", "blob:///"+key)
		c.Check = chk
		str = append(str, c)
	}
	return []Batch{{"active content", V1, v1}, {"active content", D, d}, {"active content", Stream, str}}
}

// servedSafely checks the headers of a served blob of type t.
func servedSafely(t activeType) func(context.Context, *Env, *wire.Answer) string {
	return func(_ context.Context, _ *Env, a *wire.Answer) string {
		if a.Status/100 != 2 || strings.Contains(a.ContentType(), "json") {
			return "" // a JSON-RPC answer (url mode) or an error: nothing served here
		}
		var miss []string
		if !strings.EqualFold(a.Header.Get("X-Content-Type-Options"), "nosniff") {
			miss = append(miss, "X-Content-Type-Options: nosniff")
		}
		if t.active && !strings.HasPrefix(strings.ToLower(a.Header.Get("Content-Disposition")), "attachment") {
			miss = append(miss, "Content-Disposition: attachment")
		}
		if t.active && !strings.Contains(strings.ToLower(a.Header.Get("Content-Security-Policy")), "sandbox") {
			miss = append(miss, "Content-Security-Policy: sandbox")
		}
		if len(miss) > 0 {
			return "served " + t.ctype + " without " + strings.Join(miss, ", ")
		}
		return ""
	}
}
