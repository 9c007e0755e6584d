package tus

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/ingest"
	"github.com/mcpblob/mcpblob/storage/localfs"
	"github.com/mcpblob/mcpblob/storage/s3"
	"github.com/mcpblob/mcpblob/storage/storagetest"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// counted is a store's records and staged writes, counting the bytes
// written to the store; failPart makes the write of that part (1 for the
// first part written, 2 for the second, …; the numbers a store names
// them by may skip) and every later one land and then fail, as a node
// that dies before naming the part does.
type counted struct {
	storage.Recorder
	storage.Stager
	written  atomic.Int64
	sent     atomic.Int64 // SendStaged calls
	records  atomic.Int64 // PutRecord calls
	reads    atomic.Int64 // GetRecord calls
	failSend atomic.Int64 // the SendStaged call (1, 2, …) that fails on the way
	failPart atomic.Int64
	// afterPart, when set, runs after each part is written (the n-th),
	// before the record names it.
	afterPart func(n int)
	parts     atomic.Int64 // parts written
	// beforeRecord, when set, runs before each PutRecord, and afterSend
	// after each SendStaged of the store.
	beforeRecord func(ctx context.Context, ifMatch string)
	afterSend    func(ctx context.Context, n int, err error)
	readGate     chan struct{}
	readHold     func()         // when set, called before each ReadStaged
	onPiece      func(size int) // when set, gets each WriteStaged's size
}

func countStore(b storage.Backend) *counted {
	return &counted{Recorder: storage.RecorderOf(b), Stager: storage.StagerOf(b)}
}

func (c *counted) PutRecord(ctx context.Context, name string, data []byte, ifMatch string) (string, error) {
	c.written.Add(int64(len(data)))
	c.records.Add(1)
	if c.beforeRecord != nil {
		c.beforeRecord(ctx, ifMatch)
	}
	return c.Recorder.PutRecord(ctx, name, data, ifMatch)
}

func (c *counted) GetRecord(ctx context.Context, name string) ([]byte, string, error) {
	c.reads.Add(1)
	return c.Recorder.GetRecord(ctx, name)
}

func (c *counted) PutStaged(ctx context.Context, id string, n int, off int64, data []byte) (storage.StagedPart, error) {
	c.written.Add(int64(len(data)))
	p, err := c.Stager.PutStaged(ctx, id, n, off, data)
	return p, c.written1(err)
}

// written1 counts a part written (err nil), runs afterPart and fails the
// failPart-th and later ones.
func (c *counted) written1(err error) error {
	if err != nil {
		return err
	}
	n := c.parts.Add(1)
	if c.afterPart != nil {
		c.afterPart(int(n))
	}
	if f := c.failPart.Load(); f > 0 && n >= f {
		return errors.New("node stopped") // and stays so
	}
	return nil
}

// StagedStreamer gives the store's StagedStreamer, counted, when it has
// one (the local store), so the tests below run the streamed parts there.
func (c *counted) StagedStreamer() storage.StagedStreamer {
	if storage.StreamerOf(c.Stager) == nil {
		return nil
	}
	return countedStreamer{c}
}

// StagedClaimer gives the store's StagedClaimer (the local store's).
func (c *counted) StagedClaimer() storage.StagedClaimer { return storage.ClaimerOf(c.Stager) }

// StagedReader gives the store's StagedReader (the local store's), so the
// tests below hash after the answer there, as a node does; a read waits
// for readGate, when set, to close, and calls readHold, when set.
func (c *counted) StagedReader() storage.StagedReader {
	r := storage.StagedReaderOf(c.Stager)
	if r == nil {
		return nil
	}
	return gatedStagedReader{r, c.readGate, c.readHold}
}

type gatedStagedReader struct {
	r    storage.StagedReader
	gate chan struct{}
	hold func()
}

func (g gatedStagedReader) ReadStaged(ctx context.Context, id string, off int64, p []byte) (int, error) {
	if g.gate != nil {
		<-g.gate
	}
	if g.hold != nil {
		g.hold()
	}
	return g.r.ReadStaged(ctx, id, off, p)
}

type countedStreamer struct{ c *counted }

func (s countedStreamer) WriteStaged(ctx context.Context, id string, n int, off int64, data []byte) error {
	s.c.written.Add(int64(len(data)))
	if s.c.onPiece != nil {
		s.c.onPiece(len(data))
	}
	return storage.StreamerOf(s.c.Stager).WriteStaged(ctx, id, n, off, data)
}

func (s countedStreamer) SyncStaged(ctx context.Context, id string, n int, off, size int64) (storage.StagedPart, error) {
	p, err := storage.StreamerOf(s.c.Stager).SyncStaged(ctx, id, n, off, size)
	return p, s.c.written1(err)
}

// StagedSender gives the store's StagedSender, counted, when it has one
// (S3), so the tests below send parts as they arrive there.
func (c *counted) StagedSender() storage.StagedSender {
	if storage.SenderOf(c.Stager) == nil {
		return nil
	}
	return countedSender{c}
}

type countedSender struct{ c *counted }

func (s countedSender) SendStaged(ctx context.Context, id string, n int, off, size int64, r io.Reader) (storage.StagedPart, error) {
	if s.c.sent.Add(1) == s.c.failSend.Load() {
		_, _ = io.CopyN(io.Discard, r, size/2)
		return storage.StagedPart{}, errors.New("connection reset by peer")
	}
	p, err := storage.SenderOf(s.c.Stager).SendStaged(ctx, id, n, off, size, r)
	if s.c.afterSend != nil {
		s.c.afterSend(ctx, n, err)
	}
	if err == nil {
		s.c.written.Add(size)
	}
	return p, s.c.written1(err)
}

// storeHandler is a node serving tus on c, completing through
// storage/ingest as the control API's adapter does.
func storeHandler(c *counted) *Handler {
	spec := func(u *Upload) ingest.Spec {
		return ingest.Spec{Key: u.Metadata["key"], Size: max(u.Length, 0), AllowEmpty: true, NoSniff: true}
	}
	return New(Config{Records: c, Stager: c, Base: "/v1/tus/", MaxSize: 1 << 30,
		Begin: func(ctx context.Context, u *Upload) (string, *Error) {
			id, err := ingest.BeginStaged(ctx, c, spec(u))
			if err != nil {
				return "", internal(err)
			}
			return id, nil
		},
		Complete: func(ctx context.Context, u *Upload, data Data) (string, *Error) {
			s := ingest.Staged{ID: data.Staged, Parts: data.Parts, SHA256: data.SHA256, Head: data.Head}
			if _, err := ingest.CommitStaged(ctx, c, spec(u), s); err != nil {
				return "", internal(err)
			}
			return u.Metadata["key"], nil
		}})
}

func serve(h *Handler, method, id string, headers hdr, body []byte) Response {
	headers["Tus-Resumable"] = Version
	return h.Serve(context.Background(), Request{Method: method, ID: id, Principal: "alice",
		Header: func(n string) string { return headers[n] }, Body: bytes.NewReader(body), ContentLength: int64(len(body))})
}

func createOn(t *testing.T, h *Handler, length int, key string) string {
	t.Helper()
	r := serve(h, http.MethodPost, "", hdr{"Upload-Length": strconv.Itoa(length), "Upload-Metadata": meta("key", key)}, nil)
	wantStatus(t, "create", r, http.StatusCreated)
	return strings.TrimPrefix(header(r, "Location"), "/v1/tus/")
}

func patchOn(h *Handler, id string, off int, body []byte) Response {
	return serve(h, http.MethodPatch, id, hdr{"Content-Type": patchType, "Upload-Offset": strconv.Itoa(off)}, body)
}

func headOffset(t *testing.T, h *Handler, id string) int {
	t.Helper()
	r := serve(h, http.MethodHead, id, hdr{}, nil)
	wantStatus(t, "HEAD", r, http.StatusOK)
	n, _ := strconv.Atoi(header(r, "Upload-Offset"))
	return n
}

func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := mrand.NewChaCha8([32]byte{byte(seed)})
	_, _ = r.Read(b)
	return b
}

// wantObject checks the stored object's bytes and SHA-256.
func wantObject(t *testing.T, b storage.Backend, key string, want []byte) {
	t.Helper()
	rc, info, err := b.Open(context.Background(), key, nil)
	if err != nil {
		t.Fatalf("Open(%s): %v", key, err)
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, rc)
	sum := sha256.Sum256(want)
	if err != nil || n != int64(len(want)) || !bytes.Equal(h.Sum(nil), sum[:]) || info.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("object %s: %d bytes, %v, Info SHA-256 %s; want %d bytes of SHA-256 %x", key, n, err, info.SHA256, len(want), sum)
	}
}

func openLocal(t *testing.T, dir string) *localfs.Store {
	t.Helper()
	s, err := localfs.Open(dir, localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openS3 opens a Store on bucket ("" for a new one) of the shared
// SeaweedFS node: two Stores on one bucket are two nodes.
func openS3(t *testing.T, bucket string) (*s3.Store, string) {
	t.Helper()
	srv := s3test.Shared(t)
	if bucket == "" {
		bucket = "tus" + strings.ToLower(rand.Text()[:12])
	}
	s, err := s3.Open(t.Context(), s3.Options{Endpoint: "http://" + srv.Endpoint, AccessKey: srv.AccessKey,
		SecretKey: srv.SecretKey, Bucket: bucket, CreateBucket: true})
	if err != nil {
		t.Fatal(err)
	}
	return s, bucket
}

// stores are the stores the tests below run on.
var stores = []struct {
	name string
	open func(t *testing.T) storage.Backend
}{
	{"localfs", func(t *testing.T) storage.Backend { return openLocal(t, t.TempDir()) }},
	{"s3", func(t *testing.T) storage.Backend { s, _ := openS3(t, ""); return s }},
}

// TestBytesWrittenPerByte: a multi-chunk upload writes each byte to the
// store once (its part; the records add their small state), so bytes
// written per byte uploaded stay <= 1.05 with no second copy at
// completion; the object is byte-identical; the heap grows by a few
// segment buffers (pooled; the race detector's pool drops some), below
// the upload's size. On the local store, whose
// part minimum is one byte, chunks of any size keep the ratio; on S3
// chunks of the part size (8 MiB, as P11 sends) do.
func TestBytesWrittenPerByte(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(20)) // garbage is not what is measured
	for _, st := range stores {
		chunks := []int{8 << 20}
		if st.name == "localfs" {
			chunks = append(chunks, 3<<20+12345)
		}
		for _, chunk := range chunks {
			t.Run(st.name+"/"+strconv.Itoa(chunk), func(t *testing.T) {
				b := st.open(t)
				c := countStore(b)
				h := storeHandler(c)
				data := randomBytes(72<<20+777, 1)
				id := createOn(t, h, len(data), "big/object")
				peak := storagetest.WatchPeak(time.Millisecond, storagetest.HeapInuse)
				patches := 0
				for off := 0; off < len(data); off += chunk {
					wantStatus(t, "PATCH", patchOn(h, id, off, data[off:min(off+chunk, len(data))]), http.StatusNoContent)
					patches++
				}
				grew := peak.Stop()
				if u, err := h.load(context.Background(), id); err != nil {
					t.Fatal(err)
				} else if u.NextPart-1 != patches {
					t.Errorf("%d part numbers taken by %d PATCHes: S3 has 10,000 to give", u.NextPart-1, patches)
				}
				ratio := float64(c.written.Load()) / float64(len(data))
				t.Logf("%s, %d-byte chunks: %.4f bytes written per byte uploaded, heap +%d MiB", st.name, chunk, ratio, grew>>20)
				if ratio > 1.05 {
					t.Errorf("%.4f bytes written to the store per byte uploaded, want <= 1.05", ratio)
				}
				bound := int64(48 << 20) // below the upload: its bytes are not held
				if raceEnabled {
					bound = 64 << 20 // its sync.Pool drops buffers at random: more garbage between collections
				}
				if grew > bound {
					t.Errorf("heap grew %d MiB during the upload of %d MiB, want <= %d MiB", grew>>20, len(data)>>20, bound>>20)
				}
				wantObject(t, b, "big/object", data)
			})
		}
	}
}

// TestCrashBetweenPartAndRecord: a node writes a part and dies before its
// record names it (the PATCH fails; on the local store the process is
// gone and the store reopened). HEAD reports the durable offset only, the
// client resumes from there, and the object is byte-identical: the part
// no record named was garbage, overwritten (the local store's file cut at
// the durable offset) or left out of the completion (S3).
func TestCrashBetweenPartAndRecord(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			dir := t.TempDir()
			var b storage.Backend
			if st.name == "localfs" {
				b = openLocal(t, dir)
			} else {
				b = st.open(t)
			}
			c := countStore(b)
			c.failPart.Store(2)
			data := randomBytes(20<<20+99, 2)
			id := createOn(t, storeHandler(c), len(data), "crash")
			wantStatus(t, "PATCH cut by the crash", patchOn(storeHandler(c), id, 0, data), http.StatusInternalServerError)
			if st.name == "localfs" {
				if err := b.Close(); err != nil {
					t.Fatal(err)
				}
				b = openLocal(t, dir)
			}
			h := storeHandler(countStore(b)) // another node, or the restarted one
			off := headOffset(t, h, id)
			if off != DefaultSegmentSize {
				t.Fatalf("HEAD after the crash: offset %d, want %d (the part named before it)", off, DefaultSegmentSize)
			}
			wantStatus(t, "resumed PATCH", patchOn(h, id, off, data[off:]), http.StatusNoContent)
			wantObject(t, b, "crash", data)
		})
	}
}

// TestSameOffsetRaceS3: two nodes (two Stores on one bucket) take PATCHes
// of one upload at one offset, both past the offset check before either
// writes: one appends (204), the other gets 409 before it writes a part,
// and the object holds the winner's bytes.
func TestSameOffsetRaceS3(t *testing.T) {
	one, bucket := openS3(t, "")
	two, _ := openS3(t, bucket)
	sameOffsetRace(t, one, []*Handler{storeHandler(countStore(one)), storeHandler(countStore(two))})
}

// TestSameOffsetRaceLocal: the same on the local store, whose parts are
// streamed to the staged file as they arrive: two requests (one store,
// two handlers) both past the offset check, one appends, the other gets
// 409, and the object holds the winner's bytes.
func TestSameOffsetRaceLocal(t *testing.T) {
	b := openLocal(t, t.TempDir())
	sameOffsetRace(t, b, []*Handler{storeHandler(countStore(b)), storeHandler(countStore(b))})
}

func sameOffsetRace(t *testing.T, one storage.Backend, nodes []*Handler) {
	const half = 6 << 20
	rest := randomBytes(half, 3)
	for round := range 3 {
		key := "race" + strconv.Itoa(round)
		id := createOn(t, nodes[0], 2*half, key)
		bodies := [][]byte{randomBytes(half, 10+uint64(round)), randomBytes(half, 20+uint64(round))}
		var ready, wg sync.WaitGroup
		ready.Add(2)
		statuses := make([]int, 2)
		for i, h := range nodes {
			wg.Go(func() {
				body := &gatedReader{r: bytes.NewReader(bodies[i]), ready: &ready}
				statuses[i] = h.Serve(context.Background(), Request{Method: http.MethodPatch, ID: id, Principal: "alice",
					Header: func(n string) string {
						return map[string]string{"Tus-Resumable": Version, "Content-Type": patchType, "Upload-Offset": "0"}[n]
					}, Body: body, ContentLength: half}).Status
			})
		}
		wg.Wait()
		winner := 0
		switch {
		case statuses[0] == 204 && statuses[1] == 409:
		case statuses[0] == 409 && statuses[1] == 204:
			winner = 1
		default:
			t.Fatalf("round %d: statuses %v, want one 204 and one 409", round, statuses)
		}
		if off := headOffset(t, nodes[1-winner], id); off != half {
			t.Fatalf("round %d: offset %d, want %d", round, off, half)
		}
		wantStatus(t, "last PATCH", patchOn(nodes[1-winner], id, half, rest), http.StatusNoContent)
		wantObject(t, one, key, append(bytes.Clone(bodies[winner]), rest...))
	}
}

// TestCutWhileStreaming: a PATCH whose part goes to the store as it
// arrives (S3: one part upload of the Content-Length's size, sent as the
// body comes in; the local store: pieces written to the file) and whose
// body is cut keeps what arrived: a cut past the part minimum as a part,
// one below it as a record. HEAD says so, the client resumes, and the
// object is byte-identical. On S3 the part upload cut with the body is
// sent again, from the bytes kept, under the number taken for it.
func TestCutWhileStreaming(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			b := st.open(t)
			c := countStore(b)
			h := storeHandler(c)
			data := randomBytes(3*DefaultSegmentSize+555, 4)
			id := createOn(t, h, len(data), "cut")
			off := 0
			for _, cut := range []int{6 << 20, 1 << 20} {
				r := h.Serve(context.Background(), Request{Method: http.MethodPatch, ID: id, Principal: "alice",
					Header: func(n string) string {
						return map[string]string{"Tus-Resumable": Version, "Content-Type": patchType, "Upload-Offset": strconv.Itoa(off)}[n]
					}, Body: &cutReader{r: bytes.NewReader(data[off:]), n: cut}, ContentLength: int64(len(data) - off)})
				wantStatus(t, "cut PATCH", r, http.StatusBadRequest)
				off += cut
				if got := headOffset(t, h, id); got != off {
					t.Fatalf("offset after a cut at %d = %d, want %d", cut, got, off)
				}
			}
			if st.name == "s3" && c.sent.Load() == 0 {
				t.Error("no part was sent as it arrived")
			}
			wantStatus(t, "resumed PATCH", patchOn(h, id, off, data[off:]), http.StatusNoContent)
			wantObject(t, b, "cut", data)
		})
	}
}

// TestPartLimit: an S3 upload whose next part number is past S3's 10,000
// (many cut requests took numbers) answers 413 naming the limit, not a
// server error, and nothing is appended.
func TestPartLimit(t *testing.T) {
	b, _ := openS3(t, "")
	h := storeHandler(countStore(b))
	data := randomBytes(DefaultSegmentSize+10, 5)
	id := createOn(t, h, len(data), "limit")
	u, err := h.load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	u.NextPart = 10001
	if err := h.save(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	r := patchOn(h, id, 0, data)
	wantStatus(t, "PATCH past 10,000 parts", r, http.StatusRequestEntityTooLarge)
	if r.Error == nil || !strings.Contains(r.Message, "10,000") {
		t.Fatalf("413 without naming the limit: %+v", r.Error)
	}
	if off := headOffset(t, h, id); off != 0 {
		t.Fatalf("offset %d after the refusal, want 0", off)
	}
}

// TestSendFailsOnTheWay: a part upload sent as the body arrives that
// fails on the way (a reset connection to S3) is written again from the
// buffer, which holds the whole part, under the number taken for it: the
// PATCH succeeds and the object is byte-identical.
func TestSendFailsOnTheWay(t *testing.T) {
	b, _ := openS3(t, "")
	c := countStore(b)
	c.failSend.Store(2)
	h := storeHandler(c)
	data := randomBytes(2*DefaultSegmentSize+77, 6)
	id := createOn(t, h, len(data), "resend")
	for off := 0; off < len(data); off += DefaultSegmentSize {
		wantStatus(t, "PATCH", patchOn(h, id, off, data[off:min(off+DefaultSegmentSize, len(data))]), http.StatusNoContent)
	}
	if c.sent.Load() < 2 {
		t.Fatalf("%d parts sent as they arrived, want the failing second one among them", c.sent.Load())
	}
	wantObject(t, b, "resend", data)
}

// TestOneRecordWritePerPatch: on the local store, whose staged parts have
// one writer process, a PATCH of one part claims its number in memory and
// writes the upload's record once (the commit, after the part is
// durable), not first to take the number: a record write (two fsyncs) the
// part's bytes waited for. The durability tests above still hold.
func TestOneRecordWritePerPatch(t *testing.T) {
	b := openLocal(t, t.TempDir())
	c := countStore(b)
	h := storeHandler(c)
	data := randomBytes(4*DefaultSegmentSize, 7)
	id := createOn(t, h, len(data), "once")
	before := c.records.Load()
	for off := 0; off < len(data)-DefaultSegmentSize; off += DefaultSegmentSize {
		wantStatus(t, "PATCH", patchOn(h, id, off, data[off:off+DefaultSegmentSize]), http.StatusNoContent)
	}
	if n := c.records.Load() - before; n != 3 {
		t.Errorf("3 PATCHes wrote the upload's record %d times, want 3", n)
	}
	off := len(data) - DefaultSegmentSize
	wantStatus(t, "last PATCH", patchOn(h, id, off, data[off:]), http.StatusNoContent)
	wantObject(t, b, "once", data)
}

// slowTaker marks the context of the request whose take TestTakeLosesWhileSending holds.
type slowTaker struct{}

// TestTakeLosesWhileSending: on S3 a part upload starts before the
// compare-and-swap that takes its number, under the number the take will
// give, and its last byte waits for the take. Request A's take is held
// (and its body's last byte with it) until request B, at the same offset
// on another node, took the same number, sent its part and committed it;
// A's take then fails, A answers 409, and its part upload, cut before its
// last byte, stored nothing:
// the part B's record names is not overwritten and the object holds B's
// bytes.
func TestTakeLosesWhileSending(t *testing.T) {
	one, bucket := openS3(t, "")
	two, _ := openS3(t, bucket)
	ca, cb := countStore(one), countStore(two)
	ha, hb := storeHandler(ca), storeHandler(cb)
	seg := DefaultSegmentSize
	data := randomBytes(3*seg, 8)
	other := randomBytes(seg, 9)
	id := createOn(t, hb, len(data), "gate")
	wantStatus(t, "first PATCH", patchOn(hb, id, 0, data[:seg]), http.StatusNoContent)
	held, release := make(chan struct{}), make(chan struct{})
	ca.beforeRecord = func(ctx context.Context, ifMatch string) {
		if ctx.Value(slowTaker{}) != nil && ifMatch != "" {
			close(held)
			<-release
		}
	}
	var storedA atomic.Int64 // A's part uploads that stored a part
	ca.afterSend = func(ctx context.Context, _ int, err error) {
		if ctx.Value(slowTaker{}) != nil && err == nil {
			storedA.Add(1)
		}
	}
	statusA := make(chan int)
	go func() {
		ctx := context.WithValue(context.Background(), slowTaker{}, true)
		statusA <- ha.Serve(ctx, Request{Method: http.MethodPatch, ID: id, Principal: "alice",
			Header: func(n string) string {
				return map[string]string{"Tus-Resumable": Version, "Content-Type": patchType, "Upload-Offset": strconv.Itoa(seg)}[n]
			}, Body: &holdLast{r: bytes.NewReader(other), left: seg, release: release}, ContentLength: int64(seg)}).Status
	}()
	<-held
	wantStatus(t, "B's PATCH", patchOn(hb, id, seg, data[seg:2*seg]), http.StatusNoContent)
	close(release)
	if st := <-statusA; st != http.StatusConflict {
		t.Fatalf("A's PATCH at the offset B appended at answered %d, want 409", st)
	}
	if n := storedA.Load(); n != 0 {
		t.Fatalf("A's part upload stored %d part(s) under the number B took and named", n)
	}
	wantStatus(t, "last PATCH", patchOn(hb, id, 2*seg, data[2*seg:]), http.StatusNoContent)
	wantObject(t, one, "gate", data)
}

// holdLast reads r's left bytes but the last one at once, and the last
// once release is closed.
type holdLast struct {
	r       io.Reader
	left    int
	release chan struct{}
}

func (h *holdLast) Read(p []byte) (int, error) {
	if h.left == 1 {
		<-h.release
	}
	if h.left > 1 && len(p) >= h.left {
		p = p[:h.left-1]
	}
	n, err := h.r.Read(p)
	h.left -= n
	return n, err
}

// TestPatchAfterPatchReadsNoRecord: on S3 a PATCH that follows a PATCH of
// the same upload on the same node reads no record (the node kept a copy
// of the one it wrote, recentUploads); the object is byte-identical.
func TestPatchAfterPatchReadsNoRecord(t *testing.T) {
	b, _ := openS3(t, "")
	c := countStore(b)
	h := storeHandler(c)
	seg := DefaultSegmentSize
	data := randomBytes(3*seg, 11)
	id := createOn(t, h, len(data), "kept")
	wantStatus(t, "first PATCH", patchOn(h, id, 0, data[:seg]), http.StatusNoContent)
	before := c.reads.Load()
	wantStatus(t, "second PATCH", patchOn(h, id, seg, data[seg:2*seg]), http.StatusNoContent)
	if n := c.reads.Load() - before; n != 0 {
		t.Errorf("the second PATCH on the node read %d records, want 0", n)
	}
	wantStatus(t, "last PATCH", patchOn(h, id, 2*seg, data[2*seg:]), http.StatusNoContent)
	wantObject(t, b, "kept", data)
}

// TestStaleCopyOfRecord: a node's copy of an upload's record goes stale
// when another node changes the record. A PATCH at the right offset still
// appends (the record moved on without new bytes: another node's request
// took part numbers and was cut), a PATCH at an offset another node
// appended at gets 409 without overwriting the part the record names, and
// one on an upload another node terminated gets 404.
func TestStaleCopyOfRecord(t *testing.T) {
	one, bucket := openS3(t, "")
	two, _ := openS3(t, bucket)
	ha, hb := storeHandler(countStore(one)), storeHandler(countStore(two))
	seg := DefaultSegmentSize
	data := randomBytes(4*seg, 12)
	id := createOn(t, ha, len(data), "stale")
	wantStatus(t, "A's first PATCH", patchOn(ha, id, 0, data[:seg]), http.StatusNoContent)
	u, err := hb.load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	u.NextPart += 3 // B's cut request took numbers
	if err := hb.save(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "A's PATCH after B took numbers", patchOn(ha, id, seg, data[seg:2*seg]), http.StatusNoContent)
	wantStatus(t, "B's PATCH", patchOn(hb, id, 2*seg, data[2*seg:3*seg]), http.StatusNoContent)
	wantStatus(t, "A's PATCH at the offset B appended at", patchOn(ha, id, 2*seg, randomBytes(seg, 13)), http.StatusConflict)
	wantStatus(t, "B's last PATCH", patchOn(hb, id, 3*seg, data[3*seg:]), http.StatusNoContent)
	wantObject(t, one, "stale", data)

	id = createOn(t, ha, len(data), "gone")
	wantStatus(t, "A's first PATCH", patchOn(ha, id, 0, data[:seg]), http.StatusNoContent)
	wantStatus(t, "B's DELETE", serve(hb, http.MethodDelete, id, hdr{}, nil), http.StatusNoContent)
	wantStatus(t, "A's PATCH of a terminated upload", patchOn(ha, id, seg, data[seg:2*seg]), http.StatusNotFound)
}
