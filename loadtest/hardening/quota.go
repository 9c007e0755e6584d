package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
)

// quotaLimit is alice's bytes quota in the quota abuse class.
const quotaLimit = 1 << 20

// driveQuota is the quota abuse class (docs/quotas.md), on a fresh server
// of its own with --quota-bytes quotaLimit: uploads of one principal
// racing at the limit (declared and chunked PUTs, tus creations at once),
// then size lies (a tus PATCH past its Upload-Length, a PUT that declares
// far more than it sends). Every answer must be 201 or a clear refusal,
// never a 5xx; afterwards the usage is at most the quota, equal to the
// sizes listed, with nothing left reserved, and the log holds no secret.
func driveQuota(bin, work string, sec *secrets, rep *report) error {
	addr, err := proc.FreeAddr()
	if err != nil {
		return err
	}
	t := &target{name: "local", bin: bin, addr: addr, logPath: filepath.Join(work, "quota.log"),
		args: append(serveArgs(addr, sec), "--data", filepath.Join(work, "quota-data"), "--quota-bytes", fmt.Sprint(quotaLimit))}
	if err := t.start(); err != nil {
		return err
	}
	defer t.stop()
	q := &quotaRun{base: t.base(), auth: "Bearer " + sec.apiKeys["alice"], r: rep.row(t.name, "quota abuse"), rep: rep,
		hc: &http.Client{Timeout: 30 * time.Second}}
	q.race()
	q.lies()
	q.settled()
	if !t.alive() {
		rep.fail("local quota abuse", "crash", "(process)", "mcpblob exited: "+t.exitState())
		q.r.crashes++
	}
	if log, err := os.ReadFile(t.logPath); err == nil && len(sec.scan(log)) > 0 {
		q.r.secrets += len(sec.scan(log))
		rep.fail("local quota abuse", "secrets", "(log)", "a secret in the log")
	}
	return nil
}

// quotaRun sends the class's inputs and scores the answers on r.
type quotaRun struct {
	base, auth string
	hc         *http.Client
	mu         sync.Mutex
	r          *row
	rep        *report
}

// score counts one answer: 201 (or ok) accepted, a 4xx whose JSON code is
// one of clear rejected clearly, a 5xx a server fault, anything else wrong.
func (q *quotaRun) score(input string, status int, body []byte, ok int, clear ...string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.r.inputs++
	var e struct{ Error struct{ Code string } }
	_ = json.Unmarshal(body, &e)
	switch {
	case status == ok:
		q.r.accepted++
	case status >= 500:
		q.r.server++
		q.rep.fail("local quota abuse", "5xx", input, fmt.Sprintf("%d %.200s", status, body))
	case status >= 400 && (len(clear) == 0 || slicesContain(clear, e.Error.Code)):
		q.r.clear++
	default:
		q.r.wrong++
		q.rep.fail("local quota abuse", "wrong answer", input, fmt.Sprintf("%d %.200s, want %d or %v", status, body, ok, clear))
	}
}

func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (q *quotaRun) do(method, path string, body io.Reader, size int64, hdr map[string]string) (int, []byte) {
	req, err := http.NewRequest(method, q.base+path, body)
	if err != nil {
		return 0, nil
	}
	req.ContentLength = size
	req.Header.Set("Authorization", q.auth)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := q.hc.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// race sends 24 PUTs of 100 KiB (half declared, half chunked) and 8 tus
// creations of 100 KiB at once: about three times the quota.
func (q *quotaRun) race() {
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Go(func() {
			size := int64(100 << 10)
			if i%2 == 1 {
				size = -1 // chunked
			}
			status, body := q.do("PUT", fmt.Sprintf("/v1/blobs/race-%d", i), bytes.NewReader(make([]byte, 100<<10)), size, nil)
			q.score(fmt.Sprintf("racing PUT %d (Content-Length %d)", i, size), status, body, 201, "quota_exceeded")
		})
	}
	for i := range 8 {
		wg.Go(func() {
			status, body, loc := q.tusCreate(fmt.Sprintf("tus-%d", i), 100<<10)
			if loc != "" {
				status, body = q.tusPatch(loc, 100<<10)
				q.score(fmt.Sprintf("racing tus upload %d", i), status, body, 204, "quota_exceeded")
				return
			}
			q.score(fmt.Sprintf("racing tus creation %d", i), status, body, 201, "quota_exceeded")
		})
	}
	wg.Wait()
}

// lies: a tus upload that declares 1 KiB and PATCHes 64 KiB, and a PUT
// that declares 900 KiB, sends 10 bytes and hangs up.
func (q *quotaRun) lies() {
	status, body, loc := q.tusCreate("liar", 1024)
	q.score("tus creation of 1 KiB", status, body, 201, "quota_exceeded")
	if loc != "" {
		st, b := q.tusPatch(loc, 64<<10)
		q.score("tus PATCH of 64 KiB past an Upload-Length of 1 KiB", st, b, 0)
		st, b = q.do("DELETE", loc, nil, 0, map[string]string{"Tus-Resumable": "1.0.0"})
		q.score("tus termination of the liar's upload", st, b, 204)
	}
	q.shortPut()
}

// tusPatch sends n bytes at offset 0 of the upload at loc.
func (q *quotaRun) tusPatch(loc string, n int64) (int, []byte) {
	return q.do("PATCH", loc, bytes.NewReader(make([]byte, n)), n, map[string]string{"Tus-Resumable": "1.0.0",
		"Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"})
}

// tusCreate creates a tus upload of length bytes under key; loc is its
// path when created.
func (q *quotaRun) tusCreate(key string, length int) (status int, body []byte, loc string) {
	req, err := http.NewRequest("POST", q.base+"/v1/tus/", nil)
	if err != nil {
		return 0, nil, ""
	}
	req.Header.Set("Authorization", q.auth)
	req.Header.Set("Tus-Resumable", "1.0.0")
	req.Header.Set("Upload-Length", fmt.Sprint(length))
	req.Header.Set("Upload-Metadata", "key "+base64.StdEncoding.EncodeToString([]byte(key)))
	resp, err := q.hc.Do(req)
	if err != nil {
		return 0, []byte(err.Error()), ""
	}
	defer resp.Body.Close()
	body, _ = io.ReadAll(resp.Body)
	if u, err := url.Parse(resp.Header.Get("Location")); err == nil && resp.StatusCode == 201 {
		loc = u.Path
	}
	return resp.StatusCode, body, loc
}

// shortPut declares 900 KiB, sends 10 bytes and closes: the reservation
// must be given back (settled checks nothing is left in flight).
func (q *quotaRun) shortPut() {
	conn, err := net.Dial("tcp", strings.TrimPrefix(q.base, "http://"))
	if err != nil {
		return
	}
	fmt.Fprintf(conn, "PUT /v1/blobs/short HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nContent-Length: %d\r\n\r\n0123456789",
		strings.TrimPrefix(q.base, "http://"), q.auth, 900<<10)
	time.Sleep(200 * time.Millisecond)
	conn.Close()
	q.mu.Lock()
	q.r.inputs++
	q.r.clear++ // nothing to answer: the client left
	q.mu.Unlock()
}

// settled checks GET /v1/usage against the listing: at most the quota,
// equal to the listed sizes, nothing in flight (within 10 s).
func (q *quotaRun) settled() {
	var last string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var u struct{ Bytes, Objects, InFlightBytes, InFlightObjects int64 }
		status, body := q.do("GET", "/v1/usage", nil, 0, nil)
		listed, n := q.listed()
		last = fmt.Sprintf("usage %d %s; listed %d bytes in %d objects", status, body, listed, n)
		if status == 200 && json.Unmarshal(body, &u) == nil && u.Bytes <= quotaLimit && u.Bytes == listed &&
			u.Objects == n && u.InFlightBytes == 0 && u.InFlightObjects == 0 {
			return
		}
	}
	q.r.lost++
	q.rep.fail("local quota abuse", "usage", "(after the class)", last)
}

func (q *quotaRun) listed() (bytes, objects int64) {
	status, body := q.do("GET", "/v1/blobs?limit=1000", nil, 0, nil)
	var page struct{ Items []struct{ Size int64 } }
	if status != 200 || json.Unmarshal(body, &page) != nil {
		return -1, -1
	}
	for _, it := range page.Items {
		bytes += it.Size
		objects++
	}
	return bytes, objects
}
