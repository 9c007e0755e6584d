package tus

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// fixture is a Handler on in-memory records whose Complete keeps what it
// stored, by key.
type fixture struct {
	h      *Handler
	rec    *storage.MemRecords
	st     *storage.MemStager // nil: uploads kept in records
	mu     sync.Mutex
	stored map[string][]byte
	now    time.Time
	// storeFails is how many completions fail next as a server fault.
	storeFails int
}

// fixtureStaged, when above 0, makes newFixture's uploads staged
// (storage.MemStager) with that part minimum (TestStaged).
var fixtureStaged int

func newFixture(t *testing.T, seg int) *fixture {
	f := &fixture{rec: &storage.MemRecords{}, stored: map[string][]byte{}, now: time.Unix(1_700_000_000, 0)}
	if fixtureStaged > 0 {
		f.st = &storage.MemStager{PartMin: fixtureStaged}
	}
	f.h = f.handler(seg)
	return f
}

// complete is the fixture's Complete: it keeps what it stored, by key.
func (f *fixture) complete(ctx context.Context, u *Upload, data Data) (string, *Error) {
	b, head := []byte(nil), data.Head
	if data.Reader != nil {
		var err error
		if b, err = io.ReadAll(data.Reader); err != nil {
			return "", internal(err)
		}
		head = b
	}
	if bytes.Equal(head, []byte("refuse me")) {
		return "", refuse(http.StatusUnsupportedMediaType, "not_accepted", "no")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.storeFails > 0 {
		f.storeFails--
		return "", internal(errors.New("store down"))
	}
	if data.Reader == nil {
		if _, err := f.st.CommitStaged(ctx, data.Staged, data.Parts, storage.CreateOptions{Size: u.Length}, data.SHA256); err != nil {
			return "", internal(err)
		}
		b, _ = f.st.Object(u.Metadata["key"])
	}
	f.stored[u.Metadata["key"]] = b
	return u.Metadata["key"], nil
}

// handler is another node on the same records.
func (f *fixture) handler(seg int) *Handler {
	cfg := Config{Records: f.rec, Base: "/v1/tus/", MaxSize: 1 << 20, SegmentSize: seg,
		Now:      func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now },
		Complete: f.complete}
	if f.st != nil {
		cfg.Stager = f.st
		cfg.Begin = func(ctx context.Context, u *Upload) (string, *Error) {
			id, err := f.st.BeginStaged(ctx, u.Metadata["key"], storage.CreateOptions{})
			if err != nil {
				return "", internal(err)
			}
			return id, nil
		}
	}
	return New(cfg)
}

func (f *fixture) advance(d time.Duration) { f.mu.Lock(); f.now = f.now.Add(d); f.mu.Unlock() }

func (f *fixture) object(key string) []byte { f.mu.Lock(); defer f.mu.Unlock(); return f.stored[key] }

type hdr map[string]string

func (f *fixture) do(h *Handler, method, id string, headers hdr, body io.Reader, cl int64) Response {
	if _, ok := headers["Tus-Resumable"]; !ok {
		headers["Tus-Resumable"] = Version
	}
	if body == nil {
		body = strings.NewReader("")
	}
	return h.Serve(context.Background(), Request{Method: method, ID: id, Header: func(n string) string { return headers[n] },
		Body: body, ContentLength: cl, Principal: "alice"})
}

func header(r Response, name string) string {
	for _, kv := range r.Header {
		if kv[0] == name {
			return kv[1]
		}
	}
	return ""
}

func wantStatus(t *testing.T, what string, r Response, status int) {
	t.Helper()
	if r.Status != status {
		msg := ""
		if r.Error != nil {
			msg = r.Error.Message
		}
		t.Fatalf("%s: status %d (%s), want %d", what, r.Status, msg, status)
	}
}

func meta(kv ...string) string {
	var parts []string
	for i := 0; i < len(kv); i += 2 {
		parts = append(parts, kv[i]+" "+base64.StdEncoding.EncodeToString([]byte(kv[i+1])))
	}
	return strings.Join(parts, ",")
}

func (f *fixture) create(t *testing.T, length int, key string) string {
	t.Helper()
	r := f.do(f.h, http.MethodPost, "", hdr{"Upload-Length": strconv.Itoa(length), "Upload-Metadata": meta("key", key)}, nil, 0)
	wantStatus(t, "create", r, http.StatusCreated)
	return strings.TrimPrefix(header(r, "Location"), "/v1/tus/")
}

func (f *fixture) patch(h *Handler, id string, off int, body []byte, extra hdr) Response {
	hd := hdr{"Content-Type": patchType, "Upload-Offset": strconv.Itoa(off)}
	for k, v := range extra {
		hd[k] = v
	}
	return f.do(h, http.MethodPatch, id, hd, bytes.NewReader(body), int64(len(body)))
}

func (f *fixture) offset(t *testing.T, id string) int64 {
	t.Helper()
	r := f.do(f.h, http.MethodHead, id, hdr{}, nil, 0)
	wantStatus(t, "HEAD", r, http.StatusOK)
	n, _ := ParseSize(header(r, "Upload-Offset"))
	return n
}

func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

func TestOptions(t *testing.T) {
	f := newFixture(t, 16)
	r := f.h.Serve(context.Background(), Request{Method: http.MethodOptions, Header: func(string) string { return "" }})
	wantStatus(t, "OPTIONS", r, http.StatusNoContent)
	for name, want := range map[string]string{"Tus-Version": "1.0.0", "Tus-Extension": Extensions, "Tus-Max-Size": "1048576",
		"Tus-Checksum-Algorithm": "sha1,sha256,crc32c", "Tus-Resumable": "1.0.0"} {
		if got := header(r, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// TestUploadInChunks: an upload PATCHed in uneven chunks (short segments
// merged into the next) is stored byte-identical, once complete.
func TestUploadInChunks(t *testing.T) {
	f := newFixture(t, 1000)
	data := payload(10_000)
	id := f.create(t, len(data), "a/b")
	for off, step := 0, 1; off < len(data); step = step*3 + 1 {
		end := min(off+step, len(data))
		if f.object("a/b") != nil {
			t.Fatal("object visible before the upload completed")
		}
		wantStatus(t, "PATCH", f.patch(f.h, id, off, data[off:end], nil), http.StatusNoContent)
		if got := f.offset(t, id); got != int64(end) {
			t.Fatalf("offset %d after PATCH to %d", got, end)
		}
		off = end
	}
	if sha256.Sum256(f.object("a/b")) != sha256.Sum256(data) {
		t.Fatal("stored bytes differ")
	}
	u, err := f.h.load(context.Background(), id)
	if err != nil || !u.Done || len(u.Segments) != 0 {
		t.Fatalf("after completion: %+v, %v; want done without segments", u, err)
	}
	if f.st != nil && (f.st.Written() != int64(len(data)) || f.st.Staged() != 0) {
		t.Fatalf("staged: %d bytes written as parts for %d uploaded, %d staged writes open; want each byte once, none open",
			f.st.Written(), len(data), f.st.Staged())
	}
}

// cutReader gives n bytes, then fails as a dropped connection does.
type cutReader struct {
	r io.Reader
	n int
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.n == 0 {
		return 0, errors.New("connection reset")
	}
	p = p[:min(len(p), c.n)]
	k, err := c.r.Read(p)
	c.n -= k
	return k, err
}

// TestResumeAfterCut: a PATCH cut after 2500 bytes keeps them (HEAD says
// 2500); the client resumes from there and the object is byte-identical.
// With a checksum, a cut PATCH keeps nothing.
func TestResumeAfterCut(t *testing.T) {
	f := newFixture(t, 1000)
	data := payload(6000)
	id := f.create(t, len(data), "cut")
	r := f.do(f.h, http.MethodPatch, id, hdr{"Content-Type": patchType, "Upload-Offset": "0"},
		&cutReader{r: bytes.NewReader(data), n: 2500}, int64(len(data)))
	wantStatus(t, "cut PATCH", r, http.StatusBadRequest)
	if got := f.offset(t, id); got != 2500 {
		t.Fatalf("offset after the cut = %d, want 2500", got)
	}
	sum := sha1.Sum(data[2500:])
	r = f.do(f.h, http.MethodPatch, id, hdr{"Content-Type": patchType, "Upload-Offset": "2500",
		"Upload-Checksum": "sha1 " + base64.StdEncoding.EncodeToString(sum[:])}, &cutReader{r: bytes.NewReader(data[2500:]), n: 1700}, 3500)
	wantStatus(t, "cut PATCH with a checksum", r, http.StatusBadRequest)
	if got := f.offset(t, id); got != 2500 {
		t.Fatalf("offset after a cut checksummed PATCH = %d, want 2500", got)
	}
	wantStatus(t, "resume", f.patch(f.h, id, 2500, data[2500:], nil), http.StatusNoContent)
	if sha256.Sum256(f.object("cut")) != sha256.Sum256(data) {
		t.Fatal("resumed object differs")
	}
}

// TestErrorStatuses: every refusal of the protocol, and nothing appended.
func TestErrorStatuses(t *testing.T) {
	f := newFixture(t, 64)
	id := f.create(t, 100, "e")
	wantStatus(t, "PATCH", f.patch(f.h, id, 0, payload(10), nil), http.StatusNoContent)
	sha := sha256.Sum256([]byte("other"))
	cases := []struct {
		name   string
		r      Response
		status int
	}{
		{"no Tus-Resumable", f.do(f.h, http.MethodHead, id, hdr{"Tus-Resumable": ""}, nil, 0), http.StatusPreconditionFailed},
		{"other Tus-Resumable", f.do(f.h, http.MethodHead, id, hdr{"Tus-Resumable": "0.2.2"}, nil, 0), http.StatusPreconditionFailed},
		{"wrong offset", f.patch(f.h, id, 0, payload(5), nil), http.StatusConflict},
		{"offset ahead", f.patch(f.h, id, 11, payload(5), nil), http.StatusConflict},
		{"sha256 mismatch", f.patch(f.h, id, 10, payload(5), hdr{"Upload-Checksum": "sha256 " + base64.StdEncoding.EncodeToString(sha[:])}), 460},
		{"unknown algorithm", f.patch(f.h, id, 10, payload(5), hdr{"Upload-Checksum": "md5 AAAAAAAAAAAAAAAAAAAAAA=="}), http.StatusBadRequest},
		{"past Upload-Length", f.patch(f.h, id, 10, payload(91), nil), http.StatusRequestEntityTooLarge},
		{"past Upload-Length, length unknown", f.do(f.h, http.MethodPatch, id, hdr{"Content-Type": patchType, "Upload-Offset": "10"},
			bytes.NewReader(payload(200)), -1), http.StatusRequestEntityTooLarge},
		{"over Tus-Max-Size", f.do(f.h, http.MethodPost, "", hdr{"Upload-Length": strconv.Itoa(1<<20 + 1)}, nil, 0), http.StatusRequestEntityTooLarge},
		{"malformed metadata", f.do(f.h, http.MethodPost, "", hdr{"Upload-Length": "1", "Upload-Metadata": "key !!!"}, nil, 0), http.StatusBadRequest},
		{"no length", f.do(f.h, http.MethodPost, "", hdr{}, nil, 0), http.StatusBadRequest},
		{"bad offset", f.do(f.h, http.MethodPatch, id, hdr{"Content-Type": patchType, "Upload-Offset": "-1"}, nil, 0), http.StatusBadRequest},
		{"wrong content type", f.do(f.h, http.MethodPatch, id, hdr{"Content-Type": "text/plain", "Upload-Offset": "10"}, nil, 0), http.StatusUnsupportedMediaType},
		{"unknown upload", f.do(f.h, http.MethodHead, "AAAAAAAAAAAAAAAAAAAAAAAAAA", hdr{}, nil, 0), http.StatusNotFound},
		{"malformed id", f.do(f.h, http.MethodHead, "../x", hdr{}, nil, 0), http.StatusNotFound},
	}
	for _, c := range cases {
		if c.r.Status != c.status || c.r.Error == nil || c.r.Error.Code == "" || c.r.Error.Message == "" {
			t.Errorf("%s: %d %+v, want %d with a code and message", c.name, c.r.Status, c.r.Error, c.status)
		}
	}
	if got := f.offset(t, id); got != 10 {
		t.Fatalf("offset after the refusals = %d, want 10 (nothing appended)", got)
	}
	r := f.h.Serve(context.Background(), Request{Method: http.MethodHead, ID: id, Principal: "mallory",
		Header: func(n string) string { return map[string]string{"Tus-Resumable": Version}[n] }})
	wantStatus(t, "someone else's upload", r, http.StatusNotFound)
}

// TestChecksums: each algorithm's digest of the body is accepted.
func TestChecksums(t *testing.T) {
	f := newFixture(t, 64)
	body := payload(30)
	s1, s256 := sha1.Sum(body), sha256.Sum256(body)
	c := binary.BigEndian.AppendUint32(nil, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	for alg, d := range map[string][]byte{"sha1": s1[:], "sha256": s256[:], "crc32c": c} {
		id := f.create(t, 30, alg)
		r := f.patch(f.h, id, 0, body, hdr{"Upload-Checksum": alg + " " + base64.StdEncoding.EncodeToString(d)})
		wantStatus(t, alg, r, http.StatusNoContent)
		if !bytes.Equal(f.object(alg), body) {
			t.Errorf("%s: object differs", alg)
		}
	}
}

// TestTerminationAndExpiry: DELETE gives 204 then 404; an upload past its
// Upload-Expires gives 410, then 404.
func TestTerminationAndExpiry(t *testing.T) {
	f := newFixture(t, 64)
	id := f.create(t, 100, "t")
	wantStatus(t, "PATCH", f.patch(f.h, id, 0, payload(70), nil), http.StatusNoContent)
	wantStatus(t, "DELETE", f.do(f.h, http.MethodDelete, id, hdr{}, nil, 0), http.StatusNoContent)
	wantStatus(t, "HEAD after DELETE", f.do(f.h, http.MethodHead, id, hdr{}, nil, 0), http.StatusNotFound)
	if n := f.records(); n != 0 {
		t.Fatalf("%d records left after termination", n)
	}
	id = f.create(t, 100, "x")
	r := f.patch(f.h, id, 0, payload(10), nil)
	exp, err := http.ParseTime(header(r, "Upload-Expires"))
	if err != nil || !exp.Equal(f.now.Add(DefaultTTL)) {
		t.Fatalf("Upload-Expires %q, %v", header(r, "Upload-Expires"), err)
	}
	f.advance(DefaultTTL)
	wantStatus(t, "PATCH after expiry", f.patch(f.h, id, 10, payload(5), nil), http.StatusGone)
	wantStatus(t, "HEAD after expiry", f.do(f.h, http.MethodHead, id, hdr{}, nil, 0), http.StatusNotFound)
	if n := f.records(); n != 0 {
		t.Fatalf("%d records left after expiry", n)
	}
	if f.st != nil && f.st.Staged() != 0 {
		t.Fatalf("%d staged writes left after termination and expiry", f.st.Staged())
	}
}

// records counts the records left (MemRecords by reflection-free probing:
// the fixture writes through Handler only, so count via a test hook).
func (f *fixture) records() int { return f.rec.Len() }

// TestDeferLength: an upload created without a length takes it on a PATCH.
func TestDeferLength(t *testing.T) {
	f := newFixture(t, 64)
	r := f.do(f.h, http.MethodPost, "", hdr{"Upload-Defer-Length": "1", "Upload-Metadata": meta("key", "d")}, nil, 0)
	wantStatus(t, "create", r, http.StatusCreated)
	id := strings.TrimPrefix(header(r, "Location"), "/v1/tus/")
	wantStatus(t, "PATCH", f.patch(f.h, id, 0, payload(50), nil), http.StatusNoContent)
	if h := f.do(f.h, http.MethodHead, id, hdr{}, nil, 0); header(h, "Upload-Defer-Length") != "1" {
		t.Fatal("HEAD does not say the length is deferred")
	}
	wantStatus(t, "last PATCH", f.patch(f.h, id, 50, payload(80)[50:], hdr{"Upload-Length": "80"}), http.StatusNoContent)
	if !bytes.Equal(f.object("d"), payload(80)) {
		t.Fatal("object differs")
	}
}

// TestCreationWithUpload: the POST's body is the first PATCH.
func TestCreationWithUpload(t *testing.T) {
	f := newFixture(t, 64)
	body := payload(40)
	r := f.do(f.h, http.MethodPost, "", hdr{"Upload-Length": "40", "Upload-Metadata": meta("key", "w"), "Content-Type": patchType},
		bytes.NewReader(body), 40)
	wantStatus(t, "create with upload", r, http.StatusCreated)
	if header(r, "Upload-Offset") != "40" || !bytes.Equal(f.object("w"), body) {
		t.Fatalf("Upload-Offset %q; object %d bytes", header(r, "Upload-Offset"), len(f.object("w")))
	}
}

// TestEmptyUpload: an upload of length 0 is stored when created, with or
// without an empty body, since no PATCH comes to finish it (tus-js-client
// reports an empty file uploaded after the POST alone).
func TestEmptyUpload(t *testing.T) {
	f := newFixture(t, 64)
	f.create(t, 0, "empty")
	r := f.do(f.h, http.MethodPost, "", hdr{"Upload-Length": "0", "Upload-Metadata": meta("key", "empty2"), "Content-Type": patchType}, nil, 0)
	wantStatus(t, "create with an empty body", r, http.StatusCreated)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, key := range []string{"empty", "empty2"} {
		if b, ok := f.stored[key]; !ok || len(b) != 0 {
			t.Errorf("%s: stored %v, %d bytes; want an empty object", key, ok, len(b))
		}
	}
}

// TestConcatenation: partial uploads made in parallel concatenate in the
// final upload's order; an unfinished or foreign part is refused.
func TestConcatenation(t *testing.T) {
	f := newFixture(t, 64)
	data := payload(300)
	var urls []string
	for i := range 3 {
		r := f.do(f.h, http.MethodPost, "", hdr{"Upload-Length": "100", "Upload-Concat": "partial"}, nil, 0)
		wantStatus(t, "partial", r, http.StatusCreated)
		id := strings.TrimPrefix(header(r, "Location"), "/v1/tus/")
		wantStatus(t, "PATCH partial", f.patch(f.h, id, 0, data[i*100:i*100+100], nil), http.StatusNoContent)
		urls = append(urls, "http://h/v1/tus/"+id)
	}
	if len(f.stored) != 0 {
		t.Fatal("a partial upload was stored as an object")
	}
	r := f.do(f.h, http.MethodPost, "", hdr{"Upload-Concat": "final;" + strings.Join(urls, " "), "Upload-Metadata": meta("key", "cat")}, nil, 0)
	wantStatus(t, "final", r, http.StatusCreated)
	if !bytes.Equal(f.object("cat"), data) {
		t.Fatal("concatenation differs")
	}
	fin := strings.TrimPrefix(header(r, "Location"), "/v1/tus/")
	if h := f.do(f.h, http.MethodHead, fin, hdr{}, nil, 0); !strings.HasPrefix(header(h, "Upload-Concat"), "final;") || header(h, "Upload-Offset") != "300" {
		t.Fatalf("HEAD of the final upload: %v", h.Header)
	}
	wantStatus(t, "PATCH of a final upload", f.patch(f.h, fin, 300, payload(1), nil), http.StatusForbidden)

	r = f.do(f.h, http.MethodPost, "", hdr{"Upload-Length": "100", "Upload-Concat": "partial"}, nil, 0)
	open := header(r, "Location")
	wantStatus(t, "final of an unfinished part", f.do(f.h, http.MethodPost, "", hdr{"Upload-Concat": "final;" + open}, nil, 0), http.StatusBadRequest)
	r = f.h.Serve(context.Background(), Request{Method: http.MethodPost, Principal: "mallory", Body: strings.NewReader(""),
		Header: func(n string) string {
			return map[string]string{"Tus-Resumable": Version, "Upload-Concat": "final;" + open}[n]
		}})
	wantStatus(t, "final of someone else's part", r, http.StatusForbidden)
}

// TestSameOffsetRace: two PATCHes at one offset on two nodes sharing the
// records, both past the offset check before either commits: one appends,
// the other gets 409, and the upload holds the winner's bytes only. In odd
// rounds the upload has a short last segment that both merge.
func TestSameOffsetRace(t *testing.T) {
	for round := range 20 {
		f := newFixture(t, 64)
		nodes := []*Handler{f.h, f.handler(64)}
		id := f.create(t, 200, "race")
		start := 0
		if round%2 == 1 {
			start = 10
			wantStatus(t, "first PATCH", f.patch(f.h, id, 0, payload(10), nil), http.StatusNoContent)
		}
		var ready sync.WaitGroup
		ready.Add(2)
		statuses := make([]int, 2)
		var wg sync.WaitGroup
		for i, h := range nodes {
			wg.Go(func() {
				body := &gatedReader{r: bytes.NewReader(bytes.Repeat([]byte{byte('a' + i)}, 100)), ready: &ready}
				statuses[i] = f.do(h, http.MethodPatch, id, hdr{"Content-Type": patchType, "Upload-Offset": strconv.Itoa(start)}, body, 100).Status
			})
		}
		wg.Wait()
		if !(statuses[0] == 204 && statuses[1] == 409 || statuses[0] == 409 && statuses[1] == 204) {
			t.Fatalf("round %d: statuses %v, want one 204 and one 409", round, statuses)
		}
		if got := f.offset(t, id); got != int64(start+100) {
			t.Fatalf("round %d: offset %d, want %d", round, got, start+100)
		}
		u, _ := f.h.load(context.Background(), id)
		if n := f.records(); n != 1+recordSegments(u) {
			t.Fatalf("round %d: %d records for %d segments: the loser's segments are left", round, n, len(u.Segments))
		}
	}
}

// gatedReader holds its first Read until both racers have started reading
// (both passed the offset check).
type gatedReader struct {
	r     io.Reader
	ready *sync.WaitGroup
	once  sync.Once
}

func (g *gatedReader) Read(p []byte) (int, error) {
	g.once.Do(func() { g.ready.Done(); g.ready.Wait() })
	return g.r.Read(p)
}

// TestCompleteRefused: bytes the surface refuses remove the upload.
func TestCompleteRefused(t *testing.T) {
	f := newFixture(t, 64)
	id := f.create(t, 9, "r")
	wantStatus(t, "PATCH", f.patch(f.h, id, 0, []byte("refuse me"), nil), http.StatusUnsupportedMediaType)
	wantStatus(t, "HEAD", f.do(f.h, http.MethodHead, id, hdr{}, nil, 0), http.StatusNotFound)
}

// TestSweep: Sweep removes the expired uploads with every record they
// hold (an uncommitted segment a stopped node left included) and leaves
// the live ones.
func TestSweep(t *testing.T) {
	f := newFixture(t, 64)
	old := f.create(t, 100, "old")
	wantStatus(t, "PATCH", f.patch(f.h, old, 0, payload(70), nil), http.StatusNoContent)
	if _, err := f.rec.PutRecord(context.Background(), f.h.segmentName(old), []byte("orphan"), ""); err != nil {
		t.Fatal(err)
	}
	f.advance(DefaultTTL / 2)
	live := f.create(t, 100, "live")
	wantStatus(t, "PATCH", f.patch(f.h, live, 0, payload(70), nil), http.StatusNoContent)
	before := f.records()
	u, _ := f.h.load(context.Background(), old)
	gone := 2 + recordSegments(u) // its info, its segment records and the orphan
	f.advance(DefaultTTL/2 + time.Second)
	n, err := f.handler(64).Sweep(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	if got := f.records(); got != before-gone {
		t.Fatalf("%d records after the sweep, want %d (the old upload's info, segments and the orphan gone)", got, before-gone)
	}
	if f.st != nil && f.st.Staged() != 1 {
		t.Fatalf("%d staged writes after the sweep, want the live upload's only", f.st.Staged())
	}
	wantStatus(t, "HEAD of the swept upload", f.do(f.h, http.MethodHead, old, hdr{}, nil, 0), http.StatusNotFound)
	if got := f.offset(t, live); got != 70 {
		t.Fatalf("live upload's offset %d after the sweep, want 70", got)
	}
}

// lostAnswer is a Recorder whose conditional writes of upload records land
// but answer ErrPreconditionFailed, as a retried S3 PUT whose first answer
// was lost does.
type lostAnswer struct{ *storage.MemRecords }

func (l lostAnswer) PutRecord(ctx context.Context, name string, data []byte, ifMatch string) (string, error) {
	v, err := l.MemRecords.PutRecord(ctx, name, data, ifMatch)
	if err == nil && ifMatch != "" && strings.HasSuffix(name, "/info") {
		return "", storage.ErrPreconditionFailed
	}
	return v, err
}

// TestCommitAnswerLost: a commit that landed though the store answered
// ErrPreconditionFailed counts as done: 204, and the segments it names
// are kept, so the upload completes byte-identical.
func TestCommitAnswerLost(t *testing.T) {
	f := newFixture(t, 64)
	h := f.handler(64)
	h.rec = lostAnswer{f.rec}
	id := f.create(t, 200, "lost")
	data := payload(200)
	wantStatus(t, "PATCH", f.patch(h, id, 0, data[:150], nil), http.StatusNoContent)
	if got := f.offset(t, id); got != 150 {
		t.Fatalf("offset %d, want 150", got)
	}
	wantStatus(t, "last PATCH", f.patch(f.h, id, 150, data[150:], nil), http.StatusNoContent)
	if !bytes.Equal(f.object("lost"), data) {
		t.Fatal("object differs: a landed commit's segments were deleted")
	}
}

// TestCompleteFailsThenRetried: a completion that fails on the server's
// side keeps the complete upload; the next HEAD stores it.
func TestCompleteFailsThenRetried(t *testing.T) {
	f := newFixture(t, 64)
	id := f.create(t, 100, "retry")
	f.storeFails = 1
	wantStatus(t, "last PATCH", f.patch(f.h, id, 0, payload(100), nil), http.StatusInternalServerError)
	if got := f.offset(t, id); got != 100 || !bytes.Equal(f.object("retry"), payload(100)) {
		t.Fatalf("after the retrying HEAD: offset %d, object %d bytes", got, len(f.object("retry")))
	}
}

// timeoutErr is a read deadline passing, as a surface's minimum rate
// cuts a body.
type timeoutErr struct{}

func (timeoutErr) Error() string { return "i/o timeout" }
func (timeoutErr) Timeout() bool { return true }

// TestCutAnswers: a body cut by the rate rule (a read timeout) answers
// 408 as the other upload surfaces do, keeping what arrived; a body that
// ends before its Content-Length is a cut (400), not a checksum mismatch
// (460), and with Upload-Checksum appends nothing.
func TestCutAnswers(t *testing.T) {
	f := newFixture(t, 64)
	data := payload(300)
	id := f.create(t, len(data), "cuts")
	slow := io.MultiReader(bytes.NewReader(data[:30]), iotest.ErrReader(timeoutErr{}))
	r := f.do(f.h, http.MethodPatch, id, hdr{"Content-Type": patchType, "Upload-Offset": "0"}, slow, 100)
	wantStatus(t, "PATCH cut by the rate rule", r, http.StatusRequestTimeout)
	if got := f.offset(t, id); got != 30 {
		t.Fatalf("offset after the slow PATCH = %d, want 30", got)
	}
	sum := sha256.Sum256(data[30:130])
	r = f.do(f.h, http.MethodPatch, id, hdr{"Content-Type": patchType, "Upload-Offset": "30",
		"Upload-Checksum": "sha256 " + base64.StdEncoding.EncodeToString(sum[:])}, bytes.NewReader(data[30:90]), 100)
	wantStatus(t, "short PATCH with a checksum", r, http.StatusBadRequest)
	if got := f.offset(t, id); got != 30 {
		t.Fatalf("offset after a short checksummed PATCH = %d, want 30", got)
	}
	r = f.do(f.h, http.MethodPatch, id, hdr{"Content-Type": patchType, "Upload-Offset": "30"}, bytes.NewReader(data[30:90]), 100)
	wantStatus(t, "short PATCH", r, http.StatusBadRequest)
	if got := f.offset(t, id); got != 90 {
		t.Fatalf("offset after a short PATCH = %d, want 90 (what arrived)", got)
	}
	wantStatus(t, "resume", f.patch(f.h, id, 90, data[90:], nil), http.StatusNoContent)
	if !bytes.Equal(f.object("cuts"), data) {
		t.Fatal("object differs")
	}
}
