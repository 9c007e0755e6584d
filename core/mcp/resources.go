package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcpblob/mcpblob/core/mcp/contents"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
)

// resources/list: the single resources first, then each template's listing
// in registration order. A cursor names the template listing it continues:
// "<index>:<its cursor>", or the bare cursor for the first lister.
func (s *Server) resourcesList(c *Call) (any, error) {
	cursor, e := c.cursorParam(false)
	if e != nil {
		return nil, e
	}
	items := []any{}
	if cursor == "" {
		for _, r := range s.resources {
			items = append(items, r.object())
		}
	}
	listers := s.listers()
	i, cur, ok := splitCursor(cursor, len(listers))
	if !ok {
		return nil, jsonrpc.InvalidParams("Invalid params: invalid cursor")
	}
	res := Object{}
	for ; i < len(listers); i, cur = i+1, "" {
		page, next, err := listers[i].List(c, cur)
		if err != nil {
			return nil, err
		}
		for _, r := range page {
			items = append(items, r.object())
		}
		if next != "" {
			res["nextCursor"] = joinCursor(i, next)
			break
		}
	}
	res["resources"] = items
	return res, nil
}

func (s *Server) listers() []*template {
	var out []*template
	for _, t := range s.templates {
		if t.List != nil {
			out = append(out, t)
		}
	}
	return out
}

func joinCursor(i int, cursor string) string {
	if i == 0 {
		return cursor
	}
	return strconv.Itoa(i) + ":" + cursor
}

func splitCursor(cursor string, n int) (int, string, bool) {
	if cursor == "" {
		return 0, "", true
	}
	if is, rest, ok := strings.Cut(cursor, ":"); ok {
		if i, err := strconv.Atoi(is); err == nil && i > 0 && i < n && strconv.Itoa(i) == is {
			return i, rest, true
		}
	}
	return 0, cursor, n > 0
}

func (s *Server) resourcesTemplates(c *Call) (any, error) {
	if _, e := c.cursorParam(true); e != nil {
		return nil, e
	}
	ts := make([]any, 0, len(s.templates))
	for _, t := range s.templates {
		ts = append(ts, t.object())
	}
	return Object{"resourceTemplates": ts}, nil
}

func (s *Server) resourcesRead(c *Call) (any, error) {
	uri, e := c.uriParam()
	if e != nil {
		return nil, e
	}
	ct, err := s.readAny(c, uri)
	if err != nil {
		if errors.Is(err, ErrNoResource) {
			return nil, c.NotFound(uri)
		}
		return nil, err
	}
	return s.readResult(c, ct)
}

// readAny reads uri from the single resources, then the templates; it
// answers ErrNoResource when none serves it.
func (s *Server) readAny(c *Call, uri string) (*Contents, error) {
	for _, r := range s.resources {
		if r.URI == uri {
			return r.read(c)
		}
	}
	for _, t := range s.templates {
		ct, err := t.Read(c, uri)
		if !errors.Is(err, ErrNoResource) {
			return ct, err
		}
	}
	return nil, ErrNoResource
}

// ScanText reads n bytes of r and reports whether they are valid UTF-8 and
// their JSON-escaped length: what [Contents].TextLen needs. Serve text
// found this way from a fresh reader (seek back, or reopen and check the
// object did not change).
func ScanText(r io.Reader, n int64) (bool, int64, error) { return contents.ScanText(r, n) }

// encodeReadHead encodes the members a 2026-07-28 resources/read result
// with a body starts with: the same on every call of a server, so encoded
// once (Server.readHead).
func (s *Server) encodeReadHead() ([]byte, error) {
	head := Object{"resultType": "complete", "_meta": Object{metaServerInfo: s.serverInfo()}}
	s.addCacheHints(head)
	return json.Marshal(head)
}

// readResult is the resources/read answer for ct: an Object for small
// contents, a *contents.Body for a Body.
func (s *Server) readResult(c *Call, ct *Contents) (any, error) {
	if ct.Body == nil {
		item := Object{"uri": ct.URI}
		if ct.MIMEType != "" {
			item["mimeType"] = ct.MIMEType
		}
		if ct.Blob == nil {
			item["text"] = ct.Text
		} else {
			item["blob"] = ct.Blob
		}
		return Object{"contents": []any{item}}, nil
	}
	var head []byte // the 2026-07-28 result's members before "contents"
	if c.modern {
		h, err := s.readHead()
		if err != nil {
			ct.Body.Close()
			return nil, fmt.Errorf("mcp: encode result head: %w", err)
		}
		head = h
	}
	return contents.NewReadBody(head, ct.URI, ct.MIMEType, ct.Body, ct.Size, ct.TextLen, ct.BodyText)
}
