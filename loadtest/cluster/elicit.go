package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/mcptest"
)

// toolParams are the params of a 2026-07-28 tools/call (the client puts
// its _meta first), members in the order a client sends them: the retry's
// requestState before its inputResponses (the server bounds the answer by
// the state's limits as it arrives).
type toolParams struct {
	Name           string         `json:"name"`
	Arguments      map[string]any `json:"arguments"`
	RequestState   string         `json:"requestState,omitempty"`
	InputResponses map[string]any `json:"inputResponses,omitempty"`
}

// elicitParams is what the checks read of an elicitation/create request.
type elicitParams struct {
	Mode            string `json:"mode"`
	RequestedSchema struct {
		Properties map[string]map[string]any `json:"properties"`
	} `json:"requestedSchema"`
	UploadEndpoints map[string]struct {
		URL      string `json:"url"`
		Method   string `json:"method"`
		UploadID string `json:"uploadId"`
	} `json:"uploadEndpoints"`
}

// toolResult is what the checks read of a tools/call result.
type toolResult struct {
	ResultType string `json:"resultType"`
	IsError    bool   `json:"isError"`
	Content    []struct {
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent struct {
		Key    string `json:"key"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	} `json:"structuredContent"`
	InputRequests map[string]struct {
		Method string       `json:"method"`
		Params elicitParams `json:"params"`
	} `json:"inputRequests"`
	RequestState string `json:"requestState"`
}

// text is the result's first text block (an isError's reason).
func (r toolResult) text() string {
	if len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

// modernCall sends one 2026-07-28 tools/call to base (MRTR: no session,
// capabilities in every request's _meta, input gathered by retries) with
// the headers SEP-2243 asks for, and decodes its result.
func (cl *cluster) modernCall(ctx context.Context, base string, id int, caps map[string]any, p toolParams) (int, toolResult, error) {
	var res toolResult
	capsJSON, err := json.Marshal(caps)
	if err != nil {
		return 0, res, err
	}
	params, err := json.Marshal(p)
	if err != nil {
		return 0, res, err
	}
	c := mcptest.New(base+"/mcp", mcptest.Version20260728)
	c.HTTP, c.Capabilities = cl.http, string(capsJSON)
	req := c.NewRequestID(ctx, strconv.Itoa(id), "tools/call", string(params))
	// request_upload's key carries "x-mcp-header":"Blob-Key" in its input
	// schema: the client mirrors it in Mcp-Param-Blob-Key (SEP-2243).
	if key, ok := p.Arguments["key"].(string); ok {
		req.Header.Set("Mcp-Param-Blob-Key", mcptest.HeaderValue(key))
	}
	ans, err := c.Send(req)
	if err != nil {
		return 0, res, err
	}
	if ans.Status != http.StatusOK {
		return ans.Status, res, fmt.Errorf("http %d: %s", ans.Status, clip(ans.Body))
	}
	if e := ans.RPCError(); e != nil {
		return ans.Status, res, e
	}
	return ans.Status, res, json.Unmarshal(ans.Result, &res)
}

// mrtrUpload: a 2026-07-28 request_upload in binary mode (SEP-1306) whose
// rounds land on three nodes: the call on mcpblob1 answers input_required
// with an upload endpoint and a requestState, the file goes to that
// endpoint on mcpblob2, and the retry carrying the requestState and the
// accept answer completes on mcpblob3. Every node verifies the state and
// the endpoint's token with the shared token key and finds the upload in
// the shared store; the blob then reads back whole on mcpblob1.
func mrtrUpload(ctx context.Context, cl *cluster, rep *report, n1, n2, n3 *node) {
	const g = "elicitation"
	const key = "cluster/check/mrtr-binary"
	caps := map[string]any{"elicitation": map[string]any{"binary": map[string]any{}}}
	args := map[string]any{"key": key, "message": "cluster check: upload a file"}
	ok := false
	var steps []string // the summary's figures, one per round that happened
	defer func() {
		if !ok {
			steps = append(steps, "failed (rows under elicitation)")
		}
		rep.sum("MRTR request_upload across 3 nodes", ok, strings.Join(steps, "; "))
	}()

	status, first, err := cl.modernCall(ctx, n1.url(), 1, caps, toolParams{Name: "request_upload", Arguments: args})
	ir, has := first.InputRequests["upload"]
	ep, hasEP := ir.Params.UploadEndpoints["file"]
	if err != nil || first.ResultType != "input_required" || first.RequestState == "" || !has || ir.Method != "elicitation/create" ||
		ir.Params.Mode != "binary" || !hasEP || !strings.HasPrefix(ep.URL, cl.lb+"/u/") {
		rep.fail(g, "MRTR round 1: request_upload on mcpblob1", fmt.Sprintf("http %d, err %v, resultType %q, inputRequests %+v, requestState of %d bytes",
			status, err, first.ResultType, first.InputRequests, len(first.RequestState)))
		return
	}
	steps = append(steps, "round 1 on mcpblob1: input_required")
	rep.add(g, "MRTR round 1: request_upload on mcpblob1", true,
		fmt.Sprintf("input_required: binary elicitation, %s endpoint on --public-url (uploadId %s), requestState of %d bytes",
			ep.Method, ep.UploadID, len(first.RequestState)))

	data := content(2 << 20)
	copy(data, "mrtr across three nodes")
	body, ctype := formFile(data)
	status, b, err := cl.call(ctx, ep.Method, on(ep.URL, cl.lb, n2), body, "Content-Type", ctype)
	if err != nil || status != http.StatusCreated {
		rep.fail(g, "MRTR upload: the endpoint on mcpblob2", fmt.Sprintf("%s: http %d, err %v %s", ep.Method, status, err, errText(status, b)))
		return
	}
	steps = append(steps, fmt.Sprintf("upload of %d MiB on mcpblob2: %d", len(data)>>20, status))
	rep.add(g, "MRTR upload: the endpoint on mcpblob2", true, fmt.Sprintf("multipart %s of %d bytes: http %d", ep.Method, len(data), status))

	answer := map[string]any{"upload": map[string]any{"action": "accept", "content": map[string]any{
		"file": map[string]any{"name": "check.bin", "size": len(data), "mimeType": "application/octet-stream", "uploadId": ep.UploadID}}}}
	status, res, err := cl.modernCall(ctx, n3.url(), 2, caps, toolParams{Name: "request_upload", Arguments: args,
		RequestState: first.RequestState, InputResponses: answer})
	retried := err == nil && res.ResultType == "complete" && !res.IsError && res.StructuredContent.Key == key &&
		res.StructuredContent.Size == int64(len(data)) && res.StructuredContent.SHA256 == sum(data)
	rep.add(g, "MRTR round 2: retry with requestState on mcpblob3", retried,
		fmt.Sprintf("http %d, err %v, resultType %q, isError %v %s; blob %s, %d bytes, sha256 %s (want %s)", status, err, res.ResultType, res.IsError,
			clip([]byte(res.text())), res.StructuredContent.Key, res.StructuredContent.Size, short(res.StructuredContent.SHA256), short(sum(data))))
	if !retried {
		return
	}
	steps = append(steps, "retry with requestState on mcpblob3: complete")
	status, got, err := cl.call(ctx, http.MethodGet, n1.url()+"/v1/blobs/"+key, nil)
	ok = err == nil && status == http.StatusOK && sum(got) == sum(data)
	steps = append(steps, fmt.Sprintf("read back on mcpblob1: http %d, sha256 %s (want %s)", status, short(sum(got)), short(sum(data))))
	rep.add(g, "MRTR blob read back on mcpblob1", ok, fmt.Sprintf("http %d, %d bytes, sha256 %s, err %v", status, len(got), short(sum(got)), err))
}

// formElicitation: a 2025-11-25 session through nginx whose tools/call
// (request_upload, form mode) gets elicitation/create on its SSE stream;
// the client answers with a POST through nginx, which hashes it on the
// session id to the node holding the call; the call then returns the
// stored blob. The blob reads back on every node.
func formElicitation(ctx context.Context, cl *cluster, rep *report) {
	const g = "elicitation"
	const key = "cluster/check/form-elicited"
	ok := false
	figures := "failed (rows under elicitation)"
	defer func() { rep.sum("2025-11-25 form elicitation through nginx", ok, figures) }()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	from := markLog(cl.accessLog)
	c := cl.mcp(cl.lb, "")
	if err := c.Init(ctx, map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}); err != nil {
		rep.fail(g, "form elicitation: initialize through nginx", err.Error())
		return
	}
	resp, err := c.Post(ctx, "tools/call", map[string]any{"name": "request_upload", "arguments": map[string]any{"key": key}})
	if err != nil {
		rep.fail(g, "form elicitation: tools/call request_upload through nginx", err.Error())
		return
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || mt != "text/event-stream" {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		rep.fail(g, "form elicitation: tools/call request_upload through nginx", fmt.Sprintf("http %d %q, want an SSE stream: %s", resp.StatusCode, resp.Header.Get("Content-Type"), clip(b)))
		return
	}
	events := mcptest.NewStream(resp.Body, nil)
	req, err := events.Next()
	var p elicitParams
	if err == nil {
		err = json.Unmarshal(req.Params, &p)
	}
	field := p.RequestedSchema.Properties["file"]
	_, isFile := field["x-mcp-file"]
	if err != nil || req.Method != "elicitation/create" || req.ID == nil || (p.Mode != "" && p.Mode != "form") || !isFile {
		rep.fail(g, "form elicitation: elicitation/create on the call's stream", fmt.Sprintf("err %v, method %q, id %s, mode %q, file field %v", err, req.Method, req.ID, p.Mode, field))
		return
	}
	rep.add(g, "form elicitation: elicitation/create on the call's stream", true,
		fmt.Sprintf("request id %s, mode form, field \"file\" with x-mcp-file", req.ID))

	data := content(200 << 10)
	copy(data, "form elicitation through nginx")
	reply, _ := json.Marshal(map[string]any{"action": "accept", "content": map[string]any{
		"file": "data:application/octet-stream;base64," + base64.StdEncoding.EncodeToString(data)}})
	ans, err := c.Reply(ctx, req.ID, string(reply))
	if err != nil {
		rep.fail(g, "form elicitation: answer POSTed through nginx", err.Error())
		return
	}
	if ans.Status != http.StatusAccepted {
		rep.fail(g, "form elicitation: answer POSTed through nginx", fmt.Sprintf("http %d (want 202): %s", ans.Status, clip(ans.Body)))
		return
	}
	res, err := finalResult(events)
	stored := err == nil && !res.IsError && res.StructuredContent.Key == key && res.StructuredContent.SHA256 == sum(data)
	io.Copy(io.Discard, resp.Body)         // to the stream's end, so nginx logs it
	route, one := cl.sessionRoute(from, 4) // initialize, notifications/initialized, tools/call, the answer
	rep.add(g, "form elicitation: answer POSTed (202), result on the call's stream", stored && one,
		fmt.Sprintf("err %v, isError %v %s; blob %s, %d bytes, sha256 %s (want %s); nginx: %s",
			err, res.IsError, clip([]byte(res.text())), res.StructuredContent.Key, res.StructuredContent.Size,
			short(res.StructuredContent.SHA256), short(sum(data)), route))
	if !stored {
		return
	}
	ok = readOnEveryNode(ctx, cl, rep, g, key, data)
	if ok {
		figures = fmt.Sprintf("elicitation/create on the call's SSE stream, answer (%d KiB data URI) 202, result with the sha256; %s; read back on all 3 nodes", len(data)>>10, route)
	}
}

// finalResult reads the call's stream past any further request to its
// result and decodes it.
func finalResult(events *mcptest.Stream) (toolResult, error) {
	var final mcptest.Message
	var err error
	for {
		if final, err = events.Next(); err != nil || final.Method == "" {
			break
		}
	}
	var res toolResult
	if e := final.RPCError(); err == nil && e != nil {
		err = e
	}
	if err == nil {
		err = json.Unmarshal(final.Result, &res)
	}
	return res, err
}

// readOnEveryNode GETs key from every node, adds the row and reports
// whether each answered data.
func readOnEveryNode(ctx context.Context, cl *cluster, rep *report, g, key string, data []byte) bool {
	ok := true
	var read []string
	for _, n := range cl.nodes {
		status, got, err := cl.call(ctx, http.MethodGet, n.url()+"/v1/blobs/"+key, nil)
		ok = ok && err == nil && status == http.StatusOK && sum(got) == sum(data)
		read = append(read, fmt.Sprintf("%s http %d sha256 %s", n.name, status, short(sum(got))))
	}
	rep.add(g, "form-elicited blob read on every node", ok, strings.Join(read, "; "))
	return ok
}

// sessionRoute describes where nginx sent the /mcp requests since from
// (the form check runs alone, so these are its session's): initialize has
// no session id yet (round robin), every later request is hashed on it.
// one is false when those later requests went to more than one node.
// It waits up to a second for want requests to be logged (nginx logs a
// stream when its last byte is sent).
func (cl *cluster) sessionRoute(from logMark, want int) (desc string, one bool) {
	var names []string
	for deadline := time.Now().Add(time.Second); len(names) < want && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		entries, _ := readAccessLog(cl.accessLog, from, logToEnd)
		names = names[:0]
		for _, e := range entries {
			if e.uri == "/mcp" {
				names = append(names, cl.name(e.last()))
			}
		}
	}
	if len(names) < 2 {
		return fmt.Sprintf("%d /mcp requests in nginx's log", len(names)), false
	}
	later := slices.Compact(slices.Sorted(slices.Values(names[1:])))
	return fmt.Sprintf("initialize on %s, then %d requests on %s", names[0], len(names)-1, strings.Join(later, " and ")), len(later) == 1
}
