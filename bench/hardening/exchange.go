package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// maxAnswerBody is how much of a response body is kept for judging.
const maxAnswerBody = 1 << 20

// answer is what the server did with one input: the final response (and
// any 1xx before it), or why there was none.
type answer struct {
	status  int
	header  http.Header
	body    []byte
	interim []int // 1xx statuses before the final answer
	err     error // no final answer: the reason
	// closedEarly: the answer is to an earlier request on the connection,
	// after which the server closed it (see sendPipelined).
	closedEarly bool
}

func (a *answer) contentType() string {
	if a.header == nil {
		return ""
	}
	return a.header.Get("Content-Type")
}

// String is a short description for the failure list.
func (a *answer) String() string {
	if a.status == 0 {
		return fmt.Sprintf("no answer (%v)", a.err)
	}
	s := fmt.Sprintf("HTTP %d", a.status)
	if len(a.interim) > 0 {
		s = fmt.Sprintf("HTTP %v then %s", a.interim, s)
	}
	if ct := a.contentType(); ct != "" {
		s += " " + ct
	}
	if len(a.body) > 0 {
		s += " " + clip(strings.Join(strings.Fields(string(a.body)), " "), 160)
	}
	return s
}

// newClient is the harness's HTTP client: loopback, no redirects followed,
// no compression, no proxy, and a new connection per request, so every
// input is judged on its own (a server that answers early and leaves body
// bytes unread would otherwise hand one input's leftovers to the next;
// the pipelining inputs test that on purpose).
func newClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:              nil,
			DisableCompression: true,
			DisableKeepAlives:  true,
			DialContext:        (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// do sends req and reads its answer.
func do(hc *http.Client, req *http.Request) *answer {
	resp, err := hc.Do(req)
	if err != nil {
		return &answer{err: err}
	}
	defer resp.Body.Close()
	return readAnswer(resp, nil)
}

func readAnswer(resp *http.Response, interim []int) *answer {
	a := &answer{status: resp.StatusCode, header: resp.Header, interim: interim}
	a.body, a.err = io.ReadAll(io.LimitReader(resp.Body, maxAnswerBody))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<20))
	if a.err != nil {
		a.err = fmt.Errorf("reading the body: %w", a.err)
	}
	return a
}

// raw is a hand-made request: bytes net/http would refuse to send.
type raw struct {
	head   string // request line and headers, "\r\n\r\n" included
	body   []byte
	method string // for reading the answer (HEAD has no body); default GET
	// expect: send head only and wait this long for a first answer; a 1xx
	// ends the exchange (the body is never sent).
	expect time.Duration
}

// rawSend writes r on a fresh connection to addr and reads the answer.
func rawSend(ctx context.Context, addr string, r raw, limit time.Duration) *answer {
	d := net.Dialer{Timeout: 3 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return &answer{err: err}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(limit))
	br := bufio.NewReader(c)
	req := &http.Request{Method: r.method}
	if req.Method == "" {
		req.Method = http.MethodGet
	}
	if r.expect > 0 {
		return expectAnswer(c, br, req, r)
	}
	// Write while reading: a server may answer (and stop reading, or close)
	// before the whole request is written, and that answer is the one to
	// judge.
	go c.Write(append([]byte(r.head), r.body...))
	return readFinal(br, req)
}

// expectAnswer sends only the head of r and waits r.expect for a first
// answer; a 1xx ends the exchange (the body is never sent).
func expectAnswer(c net.Conn, br *bufio.Reader, req *http.Request, r raw) *answer {
	if _, err := io.WriteString(c, r.head); err != nil && !isReset(err) {
		return &answer{err: err}
	}
	c.SetReadDeadline(time.Now().Add(r.expect))
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return &answer{err: fmt.Errorf("nothing within %s of the headers: %w", r.expect, err)}
	}
	if resp.StatusCode >= 200 {
		defer resp.Body.Close()
		return readAnswer(resp, nil)
	}
	return &answer{interim: []int{resp.StatusCode}, err: errors.New("the server asked for the body (1xx); it was never sent")}
}

// sendHTTP sends req (built with net/http for convenience) byte for byte
// on a fresh connection, like a hand-made request: a server that answers
// and closes early (431, 413) is still heard.
func (e *env) sendHTTP(ctx context.Context, req *http.Request) *answer {
	req.Close = true
	var b strings.Builder
	if err := req.Write(&b); err != nil {
		return &answer{err: err}
	}
	return e.sendRaw(ctx, raw{head: b.String(), method: req.Method})
}

// readFinal reads responses until a final (non-1xx) one.
func readFinal(br *bufio.Reader, req *http.Request) *answer {
	var interim []int
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return &answer{interim: interim, err: err}
		}
		if resp.StatusCode >= 200 {
			defer resp.Body.Close()
			return readAnswer(resp, interim)
		}
		interim = append(interim, resp.StatusCode)
	}
}

// isReset: the server closed while the body was being written; its answer
// may still be readable.
func isReset(err error) bool {
	s := err.Error()
	return strings.Contains(s, "connection reset") || strings.Contains(s, "broken pipe")
}
