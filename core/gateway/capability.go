package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/mcpblob/mcpblob/core/gateway/wire"
	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/resstream"
)

// What this node learnt of the upstream's resources.stream capability.
const (
	streamsUnknown int32 = iota
	streamsOffered
	streamsNotOffered
)

// capability relays an initialize (2025-11-25) or server/discover
// (2026-07-28) request and, when the client declared resourceStreaming,
// adds resources.stream to the upstream's capabilities in the answer
// unless the upstream offers it: the gateway serves the method itself
// then. Only that message of the answer is rewritten; everything else
// arrives as the upstream sent it.
func (g *Gateway) capability(r *Request, w ResponseWriter, c call) {
	declared := clientDeclared(c.head, c.method)
	resp, cancel, ok := g.send(r, w, c)
	if !ok {
		return
	}
	if !declared {
		g.relayResponse(w, resp, cancel)
		return
	}
	g.relayEdited(r, w, resp, cancel, c, g.addStream, false)
}

// answerEdit rewrites the JSON-RPC message b when it answers id (found).
type answerEdit func(b []byte, id json.RawMessage) (out []byte, found bool, ue *upstreamError)

// relayEdited relays the upstream's answer resp to c, its response to
// c's id rewritten by edit (read within MaxRewriteBytes; a JSON answer
// over it is relayed unchanged when lenient, else failed); everything
// else arrives as the upstream sent it. An answer the transport holds
// whole (answerInBuffer: go-sdk's one-event answers, within a
// millisecond) goes to the client with its length, headers and body in
// one write; any other streams.
func (g *Gateway) relayEdited(r *Request, w ResponseWriter, resp *http.Response, cancel func(), c call, edit answerEdit, lenient bool) {
	mt := mediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || (mt != "application/json" && mt != "text/event-stream") {
		g.relayResponse(w, resp, cancel)
		return
	}
	inBuffer, _ := answerInBuffer(r, resp) // before any read
	br := editReaders.Get().(*bufio.Reader)
	br.Reset(resp.Body)
	prefix, ue := g.rewriteAnswer(br, mt == "text/event-stream", c.id, edit, lenient) // copies what it keeps
	if ue != nil {
		putEditReader(br)
		resp.Body.Close()
		cancel()
		g.fail(w, c.id, c.method, ue)
		return
	}
	setHeaders(w, resp)
	if inBuffer {
		prefix, err := appendAll(prefix, br) // in memory: no wait
		putEditReader(br)
		if err == nil {
			resp.Body.Close()
			cancel()
			g.metrics.Relayed("to_client", int64(len(prefix)))
			w.SetBody(prefix)
			return
		}
		g.relayRest(w, resp, cancel, errReader{err}, prefix, mt) // relayed as far as it came, then cut
		return
	}
	g.relayRest(w, resp, cancel, br, prefix, mt)
}

// relayRest streams prefix, then rest (the answer's reader after what
// relayEdited read) to the client; a pooled reader goes back at the end.
func (g *Gateway) relayRest(w ResponseWriter, resp *http.Response, cancel func(), rest io.Reader, prefix []byte, mt string) {
	w.SetBodyStream(-1, func(sw StreamWriter) error {
		defer cancel()
		defer resp.Body.Close()
		if br, ok := rest.(*bufio.Reader); ok {
			defer putEditReader(br)
		}
		return g.copyBody(sw, rest, prefix, mt == "text/event-stream")
	})
}

// editReaders are relayEdited's readers of an answer it edits.
var editReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

// putEditReader gives br back, detached from the answer it read.
func putEditReader(br *bufio.Reader) {
	br.Reset(nil)
	editReaders.Put(br)
}

// appendAll appends what is left in r to b.
func appendAll(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// errReader is a reader that fails with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// setHeaders sends the upstream's status and headers (but those of the
// hop and Content-Length).
func setHeaders(w ResponseWriter, resp *http.Response) {
	w.SetStatus(resp.StatusCode)
	eachHeader(resp.Header, dropResponse, func(name string, values []string) {
		for _, v := range values {
			w.AddHeader(name, v)
		}
	})
}

// clientDeclared reports whether the request body declares the client
// capability resourceStreaming (SEP-2532): in params.capabilities of an
// initialize, in params._meta's clientCapabilities of a server/discover.
func clientDeclared(body []byte, method string) bool {
	var m struct {
		Params struct {
			Capabilities json.RawMessage            `json:"capabilities"`
			Meta         map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	caps := m.Params.Capabilities
	if method == methodDiscover {
		caps = m.Params.Meta[headers.MetaClientCapabilities]
	}
	ok, _ := resstream.Capability(caps)
	return ok
}

// rewriteAnswer reads the upstream's answer from br up to and including
// the response to id, within MaxRewriteBytes, and returns those bytes
// with the response rewritten; the rest stays in br.
func (g *Gateway) rewriteAnswer(br *bufio.Reader, sse bool, id json.RawMessage, edit answerEdit, lenient bool) ([]byte, *upstreamError) {
	budget := g.opts.MaxRewriteBytes
	if !sse {
		b, err := io.ReadAll(io.LimitReader(br, budget+1))
		switch {
		case err != nil:
			return nil, &upstreamError{kind: kindBroken, status: http.StatusBadGateway, msg: "the upstream's answer broke off"}
		case int64(len(b)) > budget && lenient:
			return b, nil // relayed as it came
		case int64(len(b)) > budget:
			return nil, overBounds()
		}
		out, _, ue := edit(b, id)
		return out, ue
	}
	var prefix []byte
	for {
		raw, data, err := wire.ReadEvent(br, &budget)
		switch {
		case errors.Is(err, wire.ErrOverBounds):
			return nil, overBounds()
		case errors.Is(err, io.EOF):
			return prefix, nil // no response to id: relayed as it came
		case err != nil:
			return nil, &upstreamError{kind: kindBroken, status: http.StatusBadGateway, msg: "the upstream's answer broke off"}
		}
		if len(bytes.TrimSpace(data)) == 0 {
			prefix = append(prefix, raw...)
			continue
		}
		out, found, ue := edit(data, id)
		if ue != nil {
			return nil, ue
		}
		if !found {
			prefix = append(prefix, raw...)
			continue
		}
		return append(prefix, wire.ReplaceData(raw, out)...), nil
	}
}

func overBounds() *upstreamError {
	return &upstreamError{kind: kindOverBounds, status: http.StatusBadGateway,
		msg: "the upstream's answer is over the gateway's rewrite limit"}
}

// addStream returns msg, the JSON-RPC message b, with resources.stream
// added to its result's capabilities when b is the response to id
// (found) and the upstream declares resources but not resources.stream;
// otherwise b as it is. It records what the upstream offers.
func (g *Gateway) addStream(b []byte, id json.RawMessage) (out []byte, found bool, ue *upstreamError) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(b, &msg) != nil {
		return nil, false, &upstreamError{kind: kindMalformed, status: http.StatusBadGateway,
			msg: "the upstream's answer is not a JSON-RPC message"}
	}
	if jsonrpc.IDKey(msg["id"]) != jsonrpc.IDKey(id) {
		return b, false, nil
	}
	var result, caps, res map[string]json.RawMessage
	if json.Unmarshal(msg["result"], &result) != nil || json.Unmarshal(result["capabilities"], &caps) != nil {
		return b, true, nil // an error answer, or no capabilities: nothing to add to
	}
	if json.Unmarshal(caps["resources"], &res) != nil || res == nil {
		g.streams.Store(streamsNotOffered)
		return b, true, nil // no resources, nothing to stream
	}
	if string(res["stream"]) == "true" {
		g.streams.Store(streamsOffered)
		return b, true, nil
	}
	g.streams.Store(streamsNotOffered)
	res["stream"] = json.RawMessage("true")
	caps["resources"] = mustMarshal(res)
	result["capabilities"] = mustMarshal(caps)
	msg["result"] = mustMarshal(result)
	return mustMarshal(msg), true, nil
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("bug: gateway: re-encoding a decoded message: " + err.Error())
	}
	return b
}
