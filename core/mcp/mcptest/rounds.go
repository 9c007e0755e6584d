package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxRounds bounds the rounds of CallToolRounds.
const MaxRounds = 16

// Answerer answers the input requests of one round, keyed as the server
// keyed them, with the inputResponses object (JSON text) of the next round.
type Answerer func(reqs map[string]InputRequest) (inputResponses string, err error)

// Retry answers prev, an InputRequiredResult (2026-07-28 MRTR), by sending
// its request again: the params of the exchange's first round, then prev's
// requestState (when it has one) and inputResponses (a JSON object).
func (c *Client) Retry(ctx context.Context, prev *Response, inputResponses string) (*Response, error) {
	tr, err := prev.ToolResult()
	if err != nil || !tr.InputRequired() {
		return nil, fmt.Errorf("mcptest: retry: not an InputRequiredResult: %.500q", prev.Body)
	}
	first := prev.Req.Params
	if prev.Req.first != "" {
		first = prev.Req.first
	}
	params := strings.TrimSuffix(strings.TrimSpace(first), "}")
	if !strings.HasSuffix(strings.TrimSpace(params), "{") {
		params += ","
	}
	if tr.RequestState != "" {
		params += `"requestState":` + jsonString(tr.RequestState) + ","
	}
	params += `"inputResponses":` + inputResponses + `}`
	r := c.NewRequest(ctx, prev.Req.RPCMethod, params)
	r.first = first
	return c.Send(r)
}

// CallToolRounds calls tool name with args and answers the server's input
// requests with answer until the call ends: in 2026-07-28, by retrying each
// InputRequiredResult (at most MaxRounds rounds); in 2025-11-25, by
// replying to each request the server sends on the call's SSE stream. It
// returns the final answer.
func (c *Client) CallToolRounds(ctx context.Context, name, args string, answer Answerer) (*Response, error) {
	params := `{"name":` + jsonString(name) + `,"arguments":` + args + `}`
	if !c.Modern() {
		return c.callAnswering(ctx, c.NewRequest(ctx, "tools/call", params), answer)
	}
	res, err := c.Call(ctx, "tools/call", params)
	for round := 0; err == nil; round++ {
		tr, terr := res.ToolResult()
		if terr != nil || !tr.InputRequired() {
			return res, nil
		}
		if round == MaxRounds {
			return res, fmt.Errorf("mcptest: %s: still asking for input after %d rounds", name, MaxRounds)
		}
		responses, aerr := answer(tr.InputRequests)
		if aerr != nil {
			return res, aerr
		}
		res, err = c.Retry(ctx, res, responses)
	}
	return res, err
}

// callAnswering sends r and, while its SSE answer runs, replies to each
// request of the server with what answer gives for it (keyed by its id).
func (c *Client) callAnswering(ctx context.Context, r *Request, answer Answerer) (*Response, error) {
	resp, err := c.Open(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if MediaType(resp.Header) != "text/event-stream" {
		body, err := io.ReadAll(resp.Body)
		out := &Response{Status: resp.StatusCode, Header: resp.Header, Body: body, Req: r}
		if err != nil {
			return out, err
		}
		return out, out.decode()
	}
	s := &Stream{Response: resp, br: bufio.NewReader(resp.Body), req: r}
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Req: r}
	for {
		m, err := s.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("mcptest: %s: %w", r.label(), errNoResponse)
			}
			return out, err
		}
		if m.Method == "" {
			out.Message = m
			return out, r.checkID(m)
		}
		out.Before = append(out.Before, m)
		if m.ID != nil {
			if err := c.replyWith(ctx, m, answer); err != nil {
				return out, err
			}
		}
	}
}

// replyWith answers the server's request m with answer's response for it.
func (c *Client) replyWith(ctx context.Context, m Message, answer Answerer) error {
	key := string(m.ID)
	responses, err := answer(map[string]InputRequest{key: {Method: m.Method, Params: m.Params}})
	if err != nil {
		return err
	}
	var byKey map[string]json.RawMessage
	if err := json.Unmarshal([]byte(responses), &byKey); err != nil || byKey[key] == nil {
		return fmt.Errorf("mcptest: no input response for %s in %.300s", key, responses)
	}
	res, err := c.Reply(ctx, m.ID, string(byKey[key]))
	if err != nil {
		return err
	}
	if res.Status/100 != 2 {
		return fmt.Errorf("mcptest: reply to %s: status %d: %.300s", m.Method, res.Status, res.Body)
	}
	return nil
}
