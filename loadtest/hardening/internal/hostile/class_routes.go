package hostile

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// reservedPrefixes are the server's own folders: no listing may show them.
var reservedPrefixes = []string{".mcpblob/", ".mcpblob"}

// listPrefixes are hostile prefixes for GET /v1/blobs and list_blobs.
var listPrefixes = []string{".mcpblob/", ".mcpblob", ".mcpblob/claims/", ".mcpblob/meta/", "../", "hard/../.mcpblob/", ".MCPBLOB/", "\x00", "%2e%2e%2f"}

// noReserved fails an answer that lists an object of the reserved folder.
func noReserved(_ context.Context, _ *Env, a *wire.Answer) string {
	for _, k := range keyOf(a) {
		for _, p := range reservedPrefixes {
			if k == p || strings.HasPrefix(k, p+"/") || (strings.HasSuffix(p, "/") && strings.HasPrefix(k, p)) {
				return fmt.Sprintf("the listing shows the server's own object %q", k)
			}
		}
	}
	return ""
}

func listPrefixCases() []Case {
	var cs []Case
	for _, p := range listPrefixes {
		target := "/v1/blobs?prefix=" + escapeAll(p)
		c := rawCase("GET "+target, WantEither, http.MethodGet, target, "alice", nil)
		c.Stores, c.Check = false, noReserved
		cs = append(cs, c)
	}
	return cs
}

func listToolCases(era Surface) []Case {
	var cs []Case
	for _, p := range listPrefixes {
		c := toolCase(era, fmt.Sprintf("list_blobs prefix %q", p), WantEither, "list_blobs", func(*Env) map[string]any {
			return map[string]any{"prefix": p}
		})
		c.Check = noReserved
		cs = append(cs, c)
	}
	return cs
}

// routingCases are paths that try to reach /v1 (which needs a key) through
// the token routes, without a key: none may be served.
func routingCases() (d, u, page []Case) {
	for _, p := range []string{"/d/../v1/blobs/" + BaseText, "/d/%2e%2e/v1/blobs/" + BaseText, "/d/..%2f..%2fv1%2fblobs%2f" + escapeAll(BaseText),
		"/d/x/../../v1/blobs/" + BaseText, "/d/", "/d//", "/d/%00", "/v1/blobs/../../d/x"} {
		d = append(d, noStore(rawCase("GET "+p, WantReject, http.MethodGet, p, "", nil)))
	}
	for _, p := range []string{"/u/../v1/blobs/hard/routed-{n}", "/u/%2e%2e/v1/blobs/hard/routed-{n}", "/u/", "/u//"} {
		p = strings.ReplaceAll(p, "{n}", fmt.Sprint(next()))
		u = append(u, rawCase("PUT "+p, WantReject, http.MethodPut, p, "", []byte("routed"), "Content-Type: text/plain"))
	}
	for _, p := range []string{"/upload/../v1/blobs/" + BaseText, "/upload/%2e%2e/v1/blobs/" + BaseText, "/upload/",
		"/upload/%3Cscript%3Ealert(1)%3C%2Fscript%3E", "/upload/%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E"} {
		c := noStore(rawCase("GET "+p, WantReject, http.MethodGet, p, "", nil))
		c.Check = noReflection
		page = append(page, c)
	}
	return d, u, page
}

func noStore(c Case) Case {
	c.Stores = false
	return c
}

// noReflection fails a page that echoes markup from its URL unescaped.
func noReflection(_ context.Context, _ *Env, a *wire.Answer) string {
	for _, m := range []string{"<script>alert(1)", "<img src=x onerror"} {
		if strings.Contains(string(a.Body), m) {
			return "the page echoes markup from its URL: " + m
		}
	}
	return ""
}
