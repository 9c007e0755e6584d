package hostile

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// rangeVariant is a Range header for the 1,000-byte baseline object and
// the answer RFC 9110 §14 and docs/byte-plane.md give it: status 0 means
// any clear answer; contentRange is checked when set.
type rangeVariant struct {
	value        string
	status       int
	contentRange string
}

var rangeVariants = []rangeVariant{
	{"bytes=0-99", 206, "bytes 0-99/1000"},
	{"bytes=0-99999999999999999999", 206, "bytes 0-999/1000"}, // last-pos past the end is clipped
	{"bytes=99999999999999999999-", 416, "bytes */1000"},      // first-pos past the end
	{"BYTES=1-5", 206, "bytes 1-5/1000"},                      // range units are case-insensitive
	{"Bytes=1-5", 206, "bytes 1-5/1000"},
	{"bytes=+5-10", 200, ""}, // not a range-spec: ignored
	{"bytes=-5", 206, "bytes 995-999/1000"},
	{"bytes=-0", 416, "bytes */1000"}, // a zero suffix-length is unsatisfiable
	{"bytes=-99999999999999999999", 206, "bytes 0-999/1000"},
	{"bytes=5-1", 200, ""},
	{"bytes=1000-", 416, "bytes */1000"},
	{"bytes=999-", 206, "bytes 999-999/1000"},
	{"bytes=0-0,5-6", 0, ""},
	{"bytes=" + strings.Repeat("0-0,", 1000) + "0-0", 0, ""},
	{"bytes= 0-5", 0, ""},
	{"bytes=0-5 ", 0, ""},
	{"items=0-5", 200, ""},
	{"bytes=0x10-0x20", 200, ""},
	{"bytes=", 200, ""},
	{"bytes=-", 200, ""},
	{"bytes=,", 200, ""},
	{"bytes=1-2-3", 200, ""},
	{"bytes=-1-", 200, ""},
	{"bytes=18446744073709551615-18446744073709551616", 416, "bytes */1000"},
}

// rangeAbuse sends every Range variant (and hostile validators) to GET
// /v1/blobs and GET /d of the 1,000-byte baseline object.
func rangeAbuse(ctx context.Context, e *Env) []Batch {
	link := e.mintLink(ctx, BaseText, false)
	var v1, d []Case
	for _, v := range rangeVariants {
		v1 = append(v1, rangeCase(v, "/v1/blobs/"+BaseText, "alice"))
		d = append(d, rangeCase(v, "/d/"+link, ""))
	}
	for _, h := range []string{"If-Range: garbage", "If-Range: \"\"", "If-None-Match: " + strings.Repeat(`"x", `, 2000) + `"y"`, "If-Modified-Since: Mon, 99 Foo 99999 99:99:99 GMT"} {
		v1 = append(v1, noStore(rawCase("GET with "+wire.Clip(h, 40), WantEither, http.MethodGet, "/v1/blobs/"+BaseText, "alice", nil, "Range: bytes=0-9", h)))
		d = append(d, noStore(rawCase("GET with "+wire.Clip(h, 40), WantEither, http.MethodGet, "/d/"+link, "", nil, "Range: bytes=0-9", h)))
	}
	return []Batch{{"Range headers", V1, v1}, {"Range headers", D, d}}
}

func rangeCase(v rangeVariant, target, principal string) Case {
	w := WantEither
	switch {
	case v.status >= 400:
		w = WantReject
	case v.status > 0:
		w = WantAccept
	}
	c := noStore(rawCase("Range: "+wire.Clip(v.value, 40), w, http.MethodGet, target, principal, nil, "Range: "+v.value))
	c.Check = func(_ context.Context, _ *Env, a *wire.Answer) string {
		if v.status != 0 && a.Status != v.status {
			return fmt.Sprintf("HTTP %d, want %d (RFC 9110 §14)", a.Status, v.status)
		}
		if got := a.Header.Get("Content-Range"); v.contentRange != "" && got != v.contentRange {
			return fmt.Sprintf("Content-Range %q, want %q", got, v.contentRange)
		}
		return ""
	}
	return c
}
