package mcp

import (
	"errors"
	"strings"

	"github.com/mcpblob/mcpblob/core/codec"
	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/mrtr"
	"github.com/mcpblob/mcpblob/core/mcp/observe"
	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// router tells the scanner, as a message arrives, which strings are file
// inputs and where their bytes go: a tool's x-mcp-file arguments (to its
// FileSink, when it has one), the file fields of a 2025-11-25 elicitation
// answer, and those of a 2026-07-28 retry whose requestState came first.
type router struct {
	s     *Server
	r     *Request
	state *mrtr.Envelope // verified requestState, once looked at
	tried bool
}

func (rt *router) Route(seen *scan.Seen, path string) (scan.Route, bool) {
	if arg, ok := strings.CutPrefix(path, "/params/arguments/"); ok && !strings.Contains(arg, "/") {
		return rt.argument(seen, scan.UnescapeElem(arg))
	}
	if field, ok := strings.CutPrefix(path, "/result/content/"); ok && !strings.Contains(field, "/") {
		spec, ok := rt.s.expect.Get(rt.r.Header.Get(headers.SessionID), seen.ID)[scan.UnescapeElem(field)]
		return scan.Route{Spec: spec}, ok
	}
	if rest, ok := strings.CutPrefix(path, "/params/inputResponses/"); ok && seen.State != "" {
		key, field, ok := strings.Cut(rest, "/content/")
		if !ok || strings.Contains(field, "/") {
			return scan.Route{}, false
		}
		if env := rt.verified(seen); env != nil {
			spec, ok := env.Files[scan.UnescapeElem(key)][scan.UnescapeElem(field)]
			return scan.Route{Spec: spec}, ok
		}
	}
	return scan.Route{}, false
}

// argument routes a tools/call argument of a tool whose name came first.
func (rt *router) argument(seen *scan.Seen, arg string) (scan.Route, bool) {
	if seen.Method != "tools/call" || seen.Name == "" {
		return scan.Route{}, false
	}
	t := rt.s.toolMap[seen.Name]
	if t == nil {
		return scan.Route{}, false
	}
	spec, ok := t.files[arg]
	if !ok {
		return scan.Route{}, false
	}
	route := scan.Route{Spec: spec}
	if rt.s.authorize(rt.r.Principal, rt.r.Scopes, seen.Method, seen.Name) != nil {
		// The call will be refused: drop the bytes rather than store them.
		route.Open = func(codec.DataURIHeader) (scan.Sink, error) {
			return nil, &scan.Refusal{Argument: arg, Problem: "not authorized"}
		}
		return route, true
	}
	if t.FileSink != nil {
		route.Open = func(h codec.DataURIHeader) (scan.Sink, error) {
			f := &scan.File{Header: h}
			sink, ok, err := t.FileSink(FileTarget{Ctx: observe.WithValues(rt.s.baseCtx, rt.r.Context), Argument: arg, MediaType: f.MediaType(),
				Spec: FileSpec(spec), Args: seen.Args, Principal: rt.r.Principal, Scopes: rt.r.Scopes})
			var refused *FileError
			switch {
			case errors.As(err, &refused):
				return nil, &scan.Refusal{Argument: refused.Arg, Problem: refused.Reason}
			case err != nil || !ok:
				return nil, err
			}
			return sink, nil
		}
	}
	return route, true
}

func (rt *router) verified(seen *scan.Seen) *mrtr.Envelope {
	if !rt.tried {
		rt.tried = true
		rt.state, _ = mrtr.Verify(rt.s.keyring, seen.State, rt.r.Principal, seen.Method, seen.Name)
	}
	return rt.state
}

// expectFiles expects fields in the answer to the server-to-client request
// id of c's session (session.Expectations) until forgetFiles.
func (s *Server) expectFiles(c *Call, id int64, fields map[string]scan.FileSpec) {
	c.expected = append(c.expected, s.expect.Expect(c.sess.ID, id, fields))
}

// forgetFiles drops the expectations of c's requests.
func (s *Server) forgetFiles(c *Call) {
	s.expect.Forget(c.expected)
	c.expected = nil
}
