package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
	"github.com/mcpblob/mcpblob/loadtest/rig/seed"
)

// Blobs the checks and the load read (stored through node 1 first).
const (
	smallKey  = "cluster/seed/4KiB"
	smallSize = 4 << 10
	largeKey  = "cluster/seed/1MiB"
	largeSize = 1 << 20
)

// bearer adds the API key to every request.
type bearer struct {
	key string
	rt  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.rt.RoundTrip(r)
}

func newHTTPClient(key string) *http.Client {
	return &http.Client{
		Transport:     bearer{key, mcpc.NewHTTPClient().Transport},
		Timeout:       60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// mcp is an MCP client on base's /mcp that uses session (may be empty).
func (cl *cluster) mcp(base, session string) *mcpc.Client {
	c := mcpc.New(base + "/mcp")
	c.HTTP = cl.http
	c.Session = session
	return c
}

// call sends one request (hdr: name, value pairs) and reads the whole answer.
func (cl *cluster) call(ctx context.Context, method, url string, body []byte, hdr ...string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// mint POSTs a JSON body to a control-API path of base and decodes the 201 answer.
func (cl *cluster) mint(ctx context.Context, base, path string, in, out any) error {
	body, _ := json.Marshal(in)
	status, b, err := cl.call(ctx, http.MethodPost, base+path, body, "Content-Type", "application/json")
	if err != nil {
		return err
	}
	if status != http.StatusCreated {
		return fmt.Errorf("POST %s: http %d: %s", path, status, clip(b))
	}
	return json.Unmarshal(b, out)
}

// put stores data under key through base (control API, sha256 checked by the node).
func (cl *cluster) put(ctx context.Context, base, key string, data []byte) error {
	status, b, err := cl.call(ctx, http.MethodPut, base+"/v1/blobs/"+key, data,
		"Content-Type", "application/octet-stream", "x-mcp-sha256", sum(data))
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("PUT %s: http %d: %s", key, status, clip(b))
	}
	return err
}

// crossNode runs the session, link, upload and elicitation checks, each
// minting or opening on node 1 (or nginx) and using the result on the
// other nodes.
func crossNode(ctx context.Context, cl *cluster, rep *report) {
	n1, n2, n3 := cl.nodes[0], cl.nodes[1], cl.nodes[2]
	large := content(largeSize)
	for key, data := range map[string][]byte{smallKey: large[:smallSize], largeKey: large} {
		if err := cl.put(ctx, n1.url(), key, data); err != nil {
			rep.fail("setup", "seed blobs through mcpblob1", err.Error())
			return
		}
	}
	for _, step := range []struct {
		name string
		run  func()
	}{
		{"sessions", func() { sessions(ctx, cl, rep, n1, n2, n3) }},
		{"links", func() { links(ctx, cl, rep, large, n1, n2, n3) }},
		{"uploads", func() { uploads(ctx, cl, rep, n1, n2, n3) }},
		{"MRTR upload", func() { mrtrUpload(ctx, cl, rep, n1, n2, n3) }},
		{"form elicitation", func() { formElicitation(ctx, cl, rep) }},
		{"claim races", func() { claimRaces(ctx, cl, rep) }},
	} {
		t := time.Now()
		step.run()
		logf("  %s: %.1fs", step.name, time.Since(t).Seconds())
	}
}

func sessions(ctx context.Context, cl *cluster, rep *report, n1, n2, n3 *node) {
	const g = "sessions"
	c := cl.mcp(n1.url(), "")
	if err := c.Init(ctx, nil); err != nil || c.Session == "" {
		rep.fail(g, "initialize on mcpblob1", fmt.Sprintf("session %q, err %v", c.Session, err))
		return
	}
	rep.add(g, "initialize on mcpblob1", true, fmt.Sprintf("Mcp-Session-Id of %d bytes", len(c.Session)))
	sid := c.Session
	for _, t := range []struct{ name, base string }{{n2.name, n2.url()}, {n3.name, n3.url()}, {"nginx", cl.lb}} {
		names, err := cl.mcp(t.base, sid).ToolNames(ctx)
		rep.add(g, "mcpblob1's session: tools/list on "+t.name, err == nil && len(names) > 0, fmt.Sprintf("%d tools, err %v", len(names), err))
		n, got, err := cl.mcp(t.base, sid).ReadSHA256(ctx, "blob:///"+smallKey)
		want := sum(content(smallSize))
		rep.add(g, "mcpblob1's session: resources/read on "+t.name, err == nil && n == smallSize && got == want,
			fmt.Sprintf("%d bytes, sha256 %s, err %v", n, short(got), err))
	}

	// A tampered id must not pass on another node: the nodes verify, not trust.
	forged := sid[:len(sid)-2] + flip(sid[len(sid)-2:])
	status, err := mcpStatus(ctx, cl.mcp(n2.url(), forged), "tools/list")
	rep.add(g, "tampered session id refused on mcpblob2", err == nil && status == http.StatusNotFound, fmt.Sprintf("http %d (want 404), err %v", status, err))

	endSession(ctx, cl, rep, n1, n2, n3)
}

// endSession: a session ended with DELETE /mcp on mcpblob1 is refused with
// 404 on every node (a terminated session is unknown: docs/protocol.md). The
// session is used on all three nodes first, so each holds it in memory
// when it ends.
func endSession(ctx context.Context, cl *cluster, rep *report, n1, n2, n3 *node) {
	const g = "sessions"
	all := []*node{n1, n2, n3}
	c := cl.mcp(n1.url(), "")
	if err := c.Init(ctx, nil); err != nil {
		rep.fail(g, "second session on mcpblob1", err.Error())
		rep.sum("session end exact across 3 nodes", false, "no session: "+err.Error())
		return
	}
	var used []string
	for _, n := range all {
		st, err := mcpStatus(ctx, cl.mcp(n.url(), c.Session), "tools/list")
		used = append(used, fmt.Sprintf("%s %d", n.name, st))
		if err != nil || st != http.StatusOK {
			rep.fail(g, "second session used on every node before its end", fmt.Sprintf("%s: http %d, err %v", n.name, st, err))
			rep.sum("session end exact across 3 nodes", false, "the session did not work on every node before the DELETE")
			return
		}
	}
	rep.add(g, "second session used on every node before its end", true, "tools/list: http "+strings.Join(used, ", "))
	status, b, err := cl.call(ctx, http.MethodDelete, n1.url()+"/mcp", nil, "Mcp-Session-Id", c.Session, "MCP-Protocol-Version", mcpc.Protocol)
	rep.add(g, "DELETE /mcp on mcpblob1", err == nil && status/100 == 2, fmt.Sprintf("http %d, err %v %s", status, err, errText(status, b)))
	refused := 0
	var figures []string
	for _, n := range all {
		st, err := mcpStatus(ctx, cl.mcp(n.url(), c.Session), "tools/list")
		ok := err == nil && st == http.StatusNotFound
		if ok {
			refused++
		}
		figures = append(figures, fmt.Sprintf("%s %d", n.name, st))
		where := "on " + n.name
		if n == n1 {
			where += " (the node that got the DELETE)"
		}
		rep.add(g, "ended session refused "+where, ok, fmt.Sprintf("tools/list: http %d (want 404), err %v", st, err))
	}
	raced := endSessionRace(ctx, cl, rep, all)
	rep.sum("session end exact across 3 nodes", refused == len(all) && raced,
		fmt.Sprintf("DELETE /mcp on mcpblob1; then tools/list with the ended session's id: http %s (want 404 on all %d); a session ended on the three nodes at once refused on all: %v", strings.Join(figures, ", "), len(all), raced))
}

// mcpStatus sends one request on c's session and returns the HTTP status.
func mcpStatus(ctx context.Context, c *mcpc.Client, method string) (int, error) {
	resp, err := c.Post(ctx, method, map[string]any{})
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

type link struct {
	URL string `json:"url"`
}

func links(ctx context.Context, cl *cluster, rep *report, large []byte, n1, n2, n3 *node) {
	const g = "links"
	var l link
	if err := cl.mint(ctx, n1.url(), "/v1/links", map[string]any{"key": largeKey, "ttlSeconds": 600}, &l); err != nil {
		rep.fail(g, "POST /v1/links on mcpblob1", err.Error())
		return
	}
	rep.add(g, "POST /v1/links on mcpblob1", strings.HasPrefix(l.URL, cl.lb+"/d/"), "url on --public-url (nginx): "+clip([]byte(l.URL)))
	want := sum(large)
	for _, n := range []*node{n2, n3} {
		u := on(l.URL, cl.lb, n)
		status, b, err := cl.call(ctx, http.MethodGet, u, nil)
		rep.add(g, "mcpblob1's link: GET on "+n.name, err == nil && status == http.StatusOK && sum(b) == want,
			fmt.Sprintf("http %d, %d bytes, sha256 %s, err %v", status, len(b), short(sum(b)), err))
	}
	status, b, err := cl.call(ctx, http.MethodGet, on(l.URL, cl.lb, n3), nil, "Range", "bytes=1000-1999")
	rep.add(g, "mcpblob1's link: Range on mcpblob3", err == nil && status == http.StatusPartialContent && bytes.Equal(b, large[1000:2000]),
		fmt.Sprintf("http %d, %d bytes, err %v", status, len(b), err))
	status, b, err = cl.call(ctx, http.MethodGet, l.URL, nil)
	rep.add(g, "mcpblob1's link: GET through nginx", err == nil && status == http.StatusOK && sum(b) == want,
		fmt.Sprintf("http %d, %d bytes, err %v", status, len(b), err))

	// Single use through nginx: the redemption is a claim in the shared
	// store, so a second GET is refused whichever node it reaches.
	var once link
	if err := cl.mint(ctx, n1.url(), "/v1/links", map[string]any{"key": smallKey, "singleUse": true}, &once); err != nil {
		rep.fail(g, "single-use link on mcpblob1", err.Error())
		return
	}
	s1, _, err1 := cl.call(ctx, http.MethodGet, once.URL, nil)
	s2, _, err2 := cl.call(ctx, http.MethodGet, once.URL, nil)
	rep.add(g, "single-use link used twice through nginx", err1 == nil && err2 == nil && s1 == http.StatusOK && s2 == http.StatusNotFound,
		fmt.Sprintf("http %d then %d (want 200 then 404)", s1, s2))
	singleUse(ctx, cl, rep, n1, n2, n3)
}

// singleUse: a single-use link minted on mcpblob1 is redeemed on one node
// and refused (404) on the two others, in sequence and when the three race
// for it. The redemption is a claim in the shared store, created only if
// absent (docs/byte-plane.md, "Single use").
func singleUse(ctx context.Context, cl *cluster, rep *report, n1, n2, n3 *node) {
	const g = "links"
	const races = 10
	want := sum(content(smallSize))
	mint := func() (string, error) {
		var l link
		err := cl.mint(ctx, n1.url(), "/v1/links", map[string]any{"key": smallKey, "singleUse": true}, &l)
		return l.URL, err
	}
	u, err := mint()
	if err != nil {
		rep.fail(g, "single-use link on mcpblob1", err.Error())
		rep.sum("single-use exact across 3 nodes", false, err.Error())
		return
	}
	seqOK := true
	var seq []string
	for i, n := range []*node{n2, n1, n3} {
		status, b, err := cl.call(ctx, http.MethodGet, on(u, cl.lb, n), nil)
		wantStatus := http.StatusNotFound
		if i == 0 {
			wantStatus = http.StatusOK
		}
		ok := err == nil && status == wantStatus && (i > 0 || sum(b) == want)
		seqOK = seqOK && ok
		seq = append(seq, fmt.Sprintf("%s %d", n.name, status))
		if err != nil {
			seq = append(seq, err.Error())
		}
	}
	rep.add(g, "single-use link: redeemed on mcpblob2, then refused on mcpblob1 and mcpblob3", seqOK,
		fmt.Sprintf("http %s (want 200 with the blob's sha256, then 404, 404)", strings.Join(seq, ", ")))

	// Races: the three nodes get the same fresh link at once.
	exact := 0
	var tally []string
	for range races {
		u, err := mint()
		if err != nil {
			rep.fail(g, "single-use link on mcpblob1", err.Error())
			break
		}
		statuses := make([]int, nodeCount)
		var wg sync.WaitGroup
		for i, n := range []*node{n1, n2, n3} {
			wg.Go(func() { statuses[i], _, _ = cl.call(ctx, http.MethodGet, on(u, cl.lb, n), nil) })
		}
		wg.Wait()
		won, lost := 0, 0
		for _, st := range statuses {
			switch st {
			case http.StatusOK:
				won++
			case http.StatusNotFound:
				lost++
			}
		}
		if won == 1 && lost == nodeCount-1 {
			exact++
		}
		tally = append(tally, fmt.Sprint(statuses))
	}
	rep.add(g, fmt.Sprintf("single-use link: %d races of the three nodes", races), exact == races,
		fmt.Sprintf("%d of %d with exactly one 200 and two 404 (http per node 1,2,3: %s)", exact, races, strings.Join(tally, " ")))
	rep.sum("single-use exact across 3 nodes", seqOK && exact == races,
		fmt.Sprintf("redeemed on mcpblob2 then refused on mcpblob1 and mcpblob3: %v; %d of %d three-node races had exactly one winner", seqOK, exact, races))
}

type upload struct {
	URL    string `json:"url"`
	Method string `json:"method"`
}

func uploads(ctx context.Context, cl *cluster, rep *report, n1, n2, n3 *node) {
	const g = "uploads"
	data := content(300 << 10)
	data[0] ^= 0x5a // not a prefix of the seeded blobs
	key := "cluster/check/endpoint-multipart"
	var up upload
	if err := cl.mint(ctx, n1.url(), "/v1/uploads", map[string]any{"key": key, "maxSize": len(data), "ttlSeconds": 600}, &up); err != nil {
		rep.fail(g, "POST /v1/uploads on mcpblob1", err.Error())
		return
	}
	body, ctype := formFile(data)
	status, b, err := cl.call(ctx, http.MethodPost, on(up.URL, cl.lb, n2), body, "Content-Type", ctype)
	rep.add(g, "mcpblob1's endpoint: multipart POST on mcpblob2", err == nil && status == http.StatusCreated, fmt.Sprintf("http %d, err %v %s", status, err, errText(status, b)))
	status, got, err := cl.call(ctx, http.MethodGet, n3.url()+"/v1/blobs/"+key, nil)
	rep.add(g, "that upload read on mcpblob3", err == nil && status == http.StatusOK && sum(got) == sum(data),
		fmt.Sprintf("http %d, %d bytes, sha256 %s", status, len(got), short(sum(got))))
	status, b, err = cl.call(ctx, http.MethodPut, on(up.URL, cl.lb, n3), data, "Content-Type", "application/octet-stream")
	rep.add(g, "same endpoint reused on mcpblob3", err == nil && status == http.StatusConflict, fmt.Sprintf("http %d (want 409 already_used) %s", status, errText(status, b)))

	key = "cluster/check/endpoint-put"
	if err := cl.mint(ctx, n1.url(), "/v1/uploads", map[string]any{"key": key, "maxSize": len(data)}, &up); err != nil {
		rep.fail(g, "POST /v1/uploads on mcpblob1", err.Error())
		return
	}
	status, b, err = cl.call(ctx, http.MethodPut, on(up.URL, cl.lb, n3), data, "Content-Type", "application/octet-stream")
	rep.add(g, "mcpblob1's endpoint: raw PUT on mcpblob3", err == nil && status == http.StatusCreated, fmt.Sprintf("http %d, err %v %s", status, err, errText(status, b)))
	status, got, err = cl.call(ctx, http.MethodGet, cl.lb+"/v1/blobs/"+key, nil)
	rep.add(g, "that upload read through nginx", err == nil && status == http.StatusOK && sum(got) == sum(data),
		fmt.Sprintf("http %d, %d bytes, sha256 %s", status, len(got), short(sum(got))))
	raced := uploadEndpointRaces(ctx, cl, rep, n1, n2, n3)
	rep.sum("upload endpoint single use across 3 nodes", raced,
		fmt.Sprintf("%d races of the three nodes for one endpoint: exactly one upload stored each time: %v", uploadRaces, raced))
}

// formFile is a multipart/form-data body with data as the "file" part.
func formFile(data []byte) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	part, _ := mw.CreateFormFile("file", "check.bin")
	part.Write(data)
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// on points a URL minted on --public-url (nginx) at node n directly.
func on(u, lb string, n *node) string { return n.url() + strings.TrimPrefix(u, lb) }

func content(size int) []byte {
	b := make([]byte, size)
	io.ReadFull(seed.Reader(int64(size)), b)
	return b
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12] + "…"
	}
	return sha
}

func clip(b []byte) string {
	if len(b) > 160 {
		return string(b[:160]) + "…"
	}
	return string(b)
}

func errText(status int, b []byte) string {
	if status/100 == 2 {
		return ""
	}
	return clip(b)
}

// flip changes a token's last characters so its signature fails.
func flip(s string) string {
	r := []byte(s)
	for i := range r {
		if r[i] == 'A' {
			r[i] = 'B'
		} else {
			r[i] = 'A'
		}
	}
	return string(r)
}
