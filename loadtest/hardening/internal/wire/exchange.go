package wire

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

// Answer is what the server did with one input: the final response (and
// any 1xx before it), or why there was none.
type Answer struct {
	Status  int
	Header  http.Header
	Body    []byte
	Interim []int // 1xx statuses before the final answer
	Err     error // no final answer: the reason
	// closedEarly: the answer is to an earlier request on the connection,
	// after which the server closed it (see sendPipelined).
	ClosedEarly bool
	// Head: the answer is to a HEAD request, which has no content (RFC
	// 9110 §9.3.2), so a refusal carries its status and headers only.
	Head bool
	// After is what the connection did after this answer (SendWatch);
	// Second is the answer that followed, when one did.
	After  After
	Second *Answer
}

// After is what a connection did after its first answer.
type After int

const (
	NotWatched    After = iota // the connection was not watched
	AfterClosed                // the server closed it
	AfterOpen                  // it stayed open and nothing more came
	AfterAnswered              // a second answer came: bytes after the request were served as one
)

func (w After) String() string {
	return [...]string{"not watched", "closed", "kept open", "answered again"}[w]
}

// ContentType is the answer's Content-Type ("" without an answer).
func (a *Answer) ContentType() string {
	if a.Header == nil {
		return ""
	}
	return a.Header.Get("Content-Type")
}

// String is a short description for the failure list.
func (a *Answer) String() string {
	if a.Status == 0 {
		return fmt.Sprintf("no answer (%v)", a.Err)
	}
	s := fmt.Sprintf("HTTP %d", a.Status)
	if len(a.Interim) > 0 {
		s = fmt.Sprintf("HTTP %v then %s", a.Interim, s)
	}
	if ct := a.ContentType(); ct != "" {
		s += " " + ct
	}
	if len(a.Body) > 0 {
		s += " " + Clip(strings.Join(strings.Fields(string(a.Body)), " "), 160)
	}
	return s
}

// NewClient is the harness's HTTP client: loopback, no redirects followed,
// no compression, no proxy, and a new connection per request, so every
// input is judged on its own (a server that answers early and leaves body
// bytes unread would otherwise hand one input's leftovers to the next;
// the pipelining inputs test that on purpose).
func NewClient() *http.Client {
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

// Do sends req and reads its answer.
func Do(hc *http.Client, req *http.Request) *Answer {
	resp, err := hc.Do(req)
	if err != nil {
		return &Answer{Err: err}
	}
	defer resp.Body.Close()
	return ReadAnswer(resp, nil)
}

// ReadAnswer reads resp (at most maxAnswerBody of its body is kept).
func ReadAnswer(resp *http.Response, interim []int) *Answer {
	a := &Answer{Status: resp.StatusCode, Header: resp.Header, Interim: interim}
	a.Body, a.Err = io.ReadAll(io.LimitReader(resp.Body, maxAnswerBody))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<20))
	if a.Err != nil {
		a.Err = fmt.Errorf("reading the body: %w", a.Err)
	}
	return a
}

// Raw is a hand-made request: bytes net/http would refuse to send.
type Raw struct {
	Head   string // request line and headers, "\r\n\r\n" included
	Body   []byte
	Method string // for reading the answer (HEAD has no body); default GET
	// expect: send head only and wait this long for a first answer; a 1xx
	// ends the exchange (the body is never sent).
	Expect time.Duration
}

// Send writes r on a fresh connection to addr and reads the answer.
func Send(ctx context.Context, addr string, r Raw, limit time.Duration) *Answer {
	d := net.Dialer{Timeout: 3 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return &Answer{Err: err}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(limit))
	br := bufio.NewReader(c)
	req := &http.Request{Method: r.Method}
	if req.Method == "" {
		req.Method = http.MethodGet
	}
	if r.Expect > 0 {
		return expectAnswer(c, br, req, r)
	}
	// Write while reading: a server may answer (and stop reading, or close)
	// before the whole request is written, and that answer is the one to
	// judge.
	go c.Write(append([]byte(r.Head), r.Body...))
	a := ReadFinal(br, req)
	a.Head = req.Method == http.MethodHead
	return a
}

// SendWatch writes payload (a request, then bytes a server must never take
// for a request of their own) on a fresh connection to addr, reads the
// first answer (to a request of method), then watches the connection for
// wait: closed by the server, still open, or a second answer.
func SendWatch(ctx context.Context, addr string, payload []byte, method string, limit, wait time.Duration) *Answer {
	c, err := (&net.Dialer{Timeout: 3 * time.Second}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return &Answer{Err: err}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(limit))
	go c.Write(payload)
	br := bufio.NewReader(c)
	a := ReadFinal(br, &http.Request{Method: method})
	if a.Status == 0 {
		return a
	}
	c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	var ne net.Error
	switch {
	case err == nil:
		a.After, a.Second = AfterAnswered, ReadAnswer(resp, nil)
		resp.Body.Close()
	case errors.As(err, &ne) && ne.Timeout():
		a.After = AfterOpen
	default:
		a.After = AfterClosed
	}
	return a
}

// expectAnswer sends only the head of r and waits r.expect for a first
// answer; a 1xx ends the exchange (the body is never sent).
func expectAnswer(c net.Conn, br *bufio.Reader, req *http.Request, r Raw) *Answer {
	if _, err := io.WriteString(c, r.Head); err != nil && !isReset(err) {
		return &Answer{Err: err}
	}
	c.SetReadDeadline(time.Now().Add(r.Expect))
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return &Answer{Err: fmt.Errorf("nothing within %s of the headers: %w", r.Expect, err)}
	}
	if resp.StatusCode >= 200 {
		defer resp.Body.Close()
		return ReadAnswer(resp, nil)
	}
	return &Answer{Interim: []int{resp.StatusCode}, Err: errors.New("the server asked for the body (1xx); it was never sent")}
}

// ReadFinal reads responses until a final (non-1xx) one.
func ReadFinal(br *bufio.Reader, req *http.Request) *Answer {
	var interim []int
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return &Answer{Interim: interim, Err: err}
		}
		if resp.StatusCode >= 200 {
			defer resp.Body.Close()
			return ReadAnswer(resp, interim)
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

// Clip shortens s to n bytes for a report line.
func Clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// WalkJSON calls f for every JSON object in v, outermost first.
func WalkJSON(v any, f func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		f(x)
		for _, c := range x {
			WalkJSON(c, f)
		}
	case []any:
		for _, c := range x {
			WalkJSON(c, f)
		}
	}
}
