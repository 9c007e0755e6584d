package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
)

// Shape is the error contract of a surface (docs/control-api.md,
// docs/byte-plane.md, docs/uploads.md, docs/protocol.md and docs/tools.md).
type Shape int

const (
	ShapeRPC  Shape = iota // /mcp: a JSON-RPC error object, or a tool result with isError
	ShapeAPI               // /v1, /d, /u: {"error":{"code":"…","message":"…"}}
	ShapePage              // /upload: an HTML page with a message, or the /v1 JSON body
)

// Verdict is how the server answered one input.
type Verdict int

const (
	Accepted    Verdict = iota // 1xx-3xx with no error in the body
	Clear                      // rejected with a clear error (see Rules.Judge)
	Unclear                    // rejected without one, or no answer at all
	ServerError                // 5xx, or JSON-RPC -32603 (internal error)
)

// Judge classifies an answer. A rejection is clear when all of these hold:
//
//   - the HTTP status is 4xx (or 200 for a JSON-RPC error or an isError
//     tool result on /mcp);
//   - the body has the surface's error shape: on /mcp a JSON-RPC message
//     whose error has a non-zero code and a message, or a result with
//     isError true and a non-empty text block; on /v1, /d and /u the JSON
//     object {"error":{"code","message"}} with both strings non-empty; on
//     /upload a non-empty HTML page (or that JSON object);
//   - the message names no internals: no file system path of the host, no
//     Go source position, goroutine trace, "bug:" text or OS error string
//     (see Rules.internalText);
//   - on /mcp, -32700 (parse error) only for a body that was not
//     well-formed JSON.
//
// A 4xx answer to HEAD on /v1, /d and /u is clear without a body: HEAD
// answers carry none (RFC 9110 §9.3.2; docs/uploads.md, tus).
//
// On /mcp a 405 without a body but with Allow is clear too (the transport
// names no body for a GET or DELETE it does not offer). A 1xx with no final
// answer (100 Continue, after which the harness stops) counts as accepted:
// the server asked for the body.
//
// 5xx answers and -32603 are server errors whatever their body says; an
// answer that never came is unclear.
func (r Rules) Judge(sh Shape, wellFormed bool, a *Answer) (Verdict, string) {
	switch {
	case a.Status == 0 && len(a.Interim) > 0:
		return Accepted, "" // the server asked for the body: it took the request
	case a.Status == 0:
		return Unclear, a.String()
	case a.Status >= 500:
		return ServerError, a.String()
	}
	if sh == ShapeRPC {
		return r.judgeRPC(wellFormed, a)
	}
	if a.Status < 400 {
		return Accepted, ""
	}
	if a.Head && len(a.Body) == 0 {
		return Clear, "" // a HEAD answer has no content: the 4xx is the refusal
	}
	code, msg, ok := apiError(a.Body)
	if !ok && sh == ShapePage && strings.HasPrefix(a.ContentType(), "text/html") && len(strings.TrimSpace(pageText(a.Body))) > 0 {
		code, msg, ok = "page", pageText(a.Body), true
	}
	switch {
	case !ok:
		return Unclear, "not the surface's JSON error body: " + a.String()
	case code == "" || strings.TrimSpace(msg) == "":
		return Unclear, "empty error code or message: " + a.String()
	case r.internalText(msg) != "":
		return Unclear, "error names internals (" + r.internalText(msg) + "): " + a.String()
	}
	return Clear, ""
}

// judgeRPC judges an /mcp answer.
func (r Rules) judgeRPC(wellFormed bool, a *Answer) (Verdict, string) {
	if a.Status == http.StatusMethodNotAllowed && len(bytes.TrimSpace(a.Body)) == 0 && a.Header.Get("Allow") != "" {
		return Clear, "" // GET or DELETE not offered: 405, no body needed
	}
	if a.Status < 400 && !strings.Contains(a.ContentType(), "json") && !strings.HasPrefix(a.ContentType(), "text/event-stream") {
		return Accepted, "" // 202 without a body, resources/stream bytes, a redirect
	}
	msg, err := mcpc.Message(a.ContentType(), a.Body)
	var env struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err != nil || json.Unmarshal(msg, &env) != nil || (env.Error == nil && env.Result == nil) {
		if a.Status < 400 && len(a.Body) == 0 {
			return Accepted, ""
		}
		if transportRefusal(a) {
			// Refused while reading the request line and headers, before
			// the path is known: the HTTP error body of every surface.
			return Clear, ""
		}
		return Unclear, "not a JSON-RPC answer: " + a.String()
	}
	if env.Error != nil {
		e := env.Error
		switch {
		case e.Code == -32603:
			return ServerError, "JSON-RPC internal error: " + a.String()
		case e.Code == 0 || strings.TrimSpace(e.Message) == "":
			return Unclear, "JSON-RPC error without code or message: " + a.String()
		case e.Code == -32700 && wellFormed:
			return Unclear, "parse error (-32700) for well-formed JSON: " + a.String()
		case r.internalText(e.Message) != "":
			return Unclear, "error names internals (" + r.internalText(e.Message) + "): " + a.String()
		}
		return Clear, ""
	}
	if a.Status >= 400 {
		return Unclear, fmt.Sprintf("HTTP %d with a JSON-RPC result: %s", a.Status, a.String())
	}
	if !env.Result.IsError {
		return Accepted, ""
	}
	var text strings.Builder
	for _, c := range env.Result.Content {
		text.WriteString(c.Text)
	}
	switch {
	case strings.TrimSpace(text.String()) == "":
		return Unclear, "isError result without text: " + a.String()
	case r.internalText(text.String()) != "":
		return Unclear, "tool error names internals (" + r.internalText(text.String()) + "): " + a.String()
	}
	return Clear, ""
}

// apiError parses the control API's error body.
func apiError(body []byte) (code, msg string, ok bool) {
	var e struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == nil {
		return "", "", false
	}
	return e.Error.Code, e.Error.Message, true
}

var tagRE = regexp.MustCompile(`(?s)<script.*?</script>|<style.*?</style>|<[^>]*>`)

// pageText is the visible text of an HTML page, roughly.
func pageText(b []byte) string {
	return strings.Join(strings.Fields(tagRE.ReplaceAllString(string(b), " ")), " ")
}

// Rules hold what error messages must not show: absolute paths of this
// host (starting at a word boundary with /tmp/, /home/, /root/, /proc/,
// /usr/, /var/ or /etc/, so an echoed key such as "a/tmp/b" is not
// mistaken for one), and the run's work folder and repository root.
type Rules struct{ paths []string }

// NewRules returns the rules with extra exact paths (the work folder,
// the repository root) added to the host paths no message may show.
func NewRules(extra ...string) Rules { return Rules{paths: extra} }

var hostPathRE = regexp.MustCompile(`(^|[\s"'(=:,])/(tmp|home|root|proc|usr|var|etc)/`)

var internalRE = regexp.MustCompile(`\.go:\d+|goroutine \d+|runtime error|(^|\W)bug: |` +
	`(?i)no such file or directory|file name too long|is a directory|not a directory|too many open files|` +
	`input/output error|no space left on device|read-only file system|directory not empty|` +
	`bad file descriptor|errno`)

// internalText returns what in msg gives internals away, or "".
func (r Rules) internalText(msg string) string {
	for _, p := range r.paths {
		if strings.Contains(msg, p) {
			return "host path " + p + "…"
		}
	}
	if m := hostPathRE.FindString(msg); m != "" {
		return "host path " + strings.TrimLeft(m, " \t\n\"'(=:,") + "…"
	}
	if m := internalRE.FindString(msg); m != "" {
		return strings.TrimSpace(m)
	}
	return ""
}

// transportRefusal reports an answer given before the request was parsed
// (malformed framing, headers over the limit, a read timeout): a 400, 408,
// 413 or 431 with the HTTP JSON error body, which names the problem.
func transportRefusal(a *Answer) bool {
	switch a.Status {
	case http.StatusBadRequest, http.StatusRequestTimeout, http.StatusRequestEntityTooLarge, http.StatusRequestHeaderFieldsTooLarge:
		code, msg, ok := apiError(a.Body)
		return ok && code != "" && strings.TrimSpace(msg) != ""
	}
	return false
}
