package load

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Body is what the transport saw of one answer's body.
type Body struct {
	Kind    string // the request's X-Load-Kind header (its JSON-RPC method, for MCP calls)
	Tag     string // the request's X-Load-Tag header (whatever the Targeter wants to see again)
	N       int64  // bytes of the body, all of it
	BlobN   int64  // bytes of the decoded "blob" string (DecodeBlob only)
	BlobSHA string // hex sha256 of those bytes
	BlobErr error  // the blob did not decode
}

// KindHeader names the kind of a request for the report's per-kind
// percentiles and the plot's series; Session.Call sets it to the method.
const KindHeader = "X-Load-Kind"

// TagHeader is carried from the request to Body.Tag; FailHeader makes the
// transport fail the request with its value, sending nothing (for a
// Targeter whose own preparation failed, e.g. minting an upload endpoint).
const TagHeader, FailHeader = "X-Load-Tag", "X-Load-Fail"

// observer is an http.RoundTripper that counts every answer's body and,
// with decode set, decodes the first JSON string after "blob": as base64
// into a sha256 while vegeta reads (and mostly discards) it. Answers are
// filed under vegeta's X-Vegeta-Seq request header.
type observer struct {
	next   http.RoundTripper
	decode bool
	seen   sync.Map // seq string → *Body
}

func (o *observer) RoundTrip(req *http.Request) (*http.Response, error) {
	seq := req.Header.Get("X-Vegeta-Seq")
	b := &Body{Kind: req.Header.Get(KindHeader), Tag: req.Header.Get(TagHeader)}
	o.seen.Store(seq, b)
	if msg := req.Header.Get(FailHeader); msg != "" {
		return nil, errors.New(msg)
	}
	res, err := o.next.RoundTrip(req)
	if err != nil {
		return res, err
	}
	cb := &countingBody{rc: res.Body, body: b}
	if o.decode {
		pr, pw := io.Pipe()
		cb.tee = pw
		cb.decoded = make(chan struct{})
		go decodeBlob(pr, b, cb.decoded)
	}
	res.Body = cb
	return res, nil
}

// take returns and forgets what was seen of the answer to seq.
func (o *observer) take(seq string) *Body {
	v, ok := o.seen.LoadAndDelete(seq)
	if !ok {
		return &Body{}
	}
	return v.(*Body)
}

type countingBody struct {
	rc      io.ReadCloser
	body    *Body
	tee     *io.PipeWriter
	decoded chan struct{}
	once    sync.Once
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.rc.Read(p)
	c.body.N += int64(n)
	if n > 0 && c.tee != nil {
		c.tee.Write(p[:n]) //nolint:errcheck // the decoder reports its own errors
	}
	return n, err
}

// Close ends the decoder (it has the whole body once vegeta drained it) and
// waits for it, so the Body is complete before vegeta hands on the result.
func (c *countingBody) Close() error {
	err := c.rc.Close()
	c.once.Do(func() {
		if c.tee != nil {
			c.tee.Close()
			<-c.decoded
		}
	})
	return err
}

// decodeBlob finds `"blob":"` in r and hashes the base64 that follows up
// to the closing quote.
func decodeBlob(r io.Reader, b *Body, done chan<- struct{}) {
	defer close(done)
	defer io.Copy(io.Discard, r) //nolint:errcheck // drain so the writer never blocks
	br := bufio.NewReaderSize(r, 64<<10)
	const marker = `"blob":"`
	matched := 0
	for matched < len(marker) {
		c, err := br.ReadByte()
		if err != nil {
			b.BlobErr = io.ErrUnexpectedEOF
			return
		}
		switch {
		case c == marker[matched]:
			matched++
		case c == marker[0]:
			matched = 1
		default:
			matched = 0
		}
	}
	h := sha256.New()
	n, err := io.Copy(h, base64.NewDecoder(base64.StdEncoding, &untilQuote{r: br}))
	b.BlobN, b.BlobErr = n, err
	b.BlobSHA = hex.EncodeToString(h.Sum(nil))
}

// untilQuote reads up to (not including) the first '"'.
type untilQuote struct {
	r    *bufio.Reader
	done bool
}

func (u *untilQuote) Read(p []byte) (int, error) {
	if u.done {
		return 0, io.EOF
	}
	if u.r.Buffered() == 0 {
		if _, err := u.r.Peek(1); err != nil {
			return 0, err
		}
	}
	chunk, _ := u.r.Peek(min(len(p), u.r.Buffered()))
	if i := bytes.IndexByte(chunk, '"'); i >= 0 {
		n := copy(p, chunk[:i])
		u.r.Discard(i + 1) //nolint:errcheck // buffered
		u.done = true
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
	n := copy(p, chunk)
	u.r.Discard(n) //nolint:errcheck // buffered
	return n, nil
}

// followDownload answers a JSON resources/stream answer that names a
// downloadUrl (the server's url mode) with the GET of that URL.
type followDownload struct{ next http.RoundTripper }

func (f followDownload) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := f.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		return res, err
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	var msg struct {
		Result struct {
			DownloadURL string `json:"downloadUrl"`
		} `json:"result"`
	}
	if json.Unmarshal(raw, &msg) != nil || msg.Result.DownloadURL == "" {
		res.Body = io.NopCloser(bytes.NewReader(raw))
		return res, nil
	}
	get, err := http.NewRequestWithContext(req.Context(), http.MethodGet, msg.Result.DownloadURL, nil)
	if err != nil {
		return nil, err
	}
	get.Header.Set("X-Vegeta-Seq", req.Header.Get("X-Vegeta-Seq"))
	return f.next.RoundTrip(get)
}
