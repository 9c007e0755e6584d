package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// hookTransport calls before (when set) ahead of each request it forwards;
// a non-nil error fails the request without sending it.
type hookTransport struct {
	mu     sync.Mutex
	before func(r *http.Request) error
}

func (h *hookTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	before := h.before
	h.mu.Unlock()
	if before != nil {
		if err := before(r); err != nil {
			return nil, err
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (h *hookTransport) set(before func(r *http.Request) error) {
	h.mu.Lock()
	h.before = before
	h.mu.Unlock()
}

func isComplete(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Query().Has("uploadId")
}

func isTagging(r *http.Request) bool {
	return r.Method == http.MethodPut && r.URL.Query().Has("tagging")
}

func isPart(r *http.Request) bool {
	return r.Method == http.MethodPut && r.URL.Query().Has("partNumber")
}

func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// writeAll writes data to key in 1 MiB chunks and commits.
func writeAll(ctx context.Context, s *Store, key string, data []byte, opts storage.CreateOptions) (storage.Info, error) {
	w, err := s.Create(ctx, key, opts)
	if err != nil {
		return storage.Info{}, err
	}
	defer w.Abort(ctx)
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 1<<20)
		if _, err := w.Write(rest[:n]); err != nil {
			return storage.Info{}, err
		}
		rest = rest[n:]
	}
	return w.Commit(ctx)
}

// TestMultipartWrittenOnce: an object of several parts goes to the server
// once, as parts of the key's own upload: no server-side copy, no staging.
func TestMultipartWrittenOnce(t *testing.T) {
	var partBytes, parts, copies, staged atomic.Int64
	rt := &hookTransport{before: func(r *http.Request) error {
		if isPart(r) {
			parts.Add(1)
			partBytes.Add(r.ContentLength)
		}
		if r.Header.Get("X-Amz-Copy-Source") != "" {
			copies.Add(1)
		}
		if bytes.Contains([]byte(r.URL.Path), []byte(stagingPrefix)) {
			staged.Add(1)
		}
		return nil
	}}
	s := newStore(t, Options{PartSize: testPartSize, Transport: rt})
	data := storagetest.Bytes(7, 0, 3*testPartSize+123)
	info, err := writeAll(t.Context(), s, "once.bin", data, storage.CreateOptions{MediaType: "application/x-once", Filename: "once.bin"})
	if err != nil {
		t.Fatal(err)
	}
	if got := partBytes.Load(); got != int64(len(data)) || parts.Load() != 4 {
		t.Errorf("%d parts carried %d bytes, want 4 parts of %d bytes in all", parts.Load(), got, len(data))
	}
	if copies.Load() != 0 || staged.Load() != 0 {
		t.Errorf("%d copy requests, %d requests to staging keys; want none", copies.Load(), staged.Load())
	}
	if info.SHA256 != hexSum(data) {
		t.Errorf("Commit SHA256 = %s, want %s", info.SHA256, hexSum(data))
	}
	stat, err := s.Stat(t.Context(), "once.bin")
	if err != nil || stat.SHA256 != info.SHA256 || stat.Size != info.Size || stat.ETag != info.ETag || stat.Filename != "once.bin" || stat.MediaType != "application/x-once" {
		t.Errorf("Stat = %+v, %v; Commit gave %+v", stat, err, info)
	}
	if left := leftovers(t, s); len(left) != 0 {
		t.Errorf("left behind: %q", left)
	}
}

// view is what a reader sees of a key: the SHA-256 by Stat, by Open (with
// the bytes' own SHA-256) and by List, or "missing".
type view struct{ stat, open, body, list string }

func look(t *testing.T, s *Store, key string) view {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	v := view{"missing", "missing", "missing", "missing"}
	if info, err := s.Stat(ctx, key); err == nil {
		v.stat = info.SHA256
	} else if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat: %v", err)
	}
	if rc, info, err := s.Open(ctx, key, nil); err == nil {
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Errorf("read: %v", err)
		}
		v.open, v.body = info.SHA256, hexSum(b)
	} else if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Open: %v", err)
	}
	page, err := s.List(ctx, key, "", 0)
	if err != nil {
		t.Errorf("List: %v", err)
	}
	for _, info := range page.Items {
		if info.Key == key {
			v.list = info.SHA256
		}
	}
	return v
}

func seen(sha string) view { return view{sha, sha, sha, sha} }

// TestCommitWindows: readers see the previous object (or none) until the
// multipart upload completes, and the new one with its SHA-256 from then
// on, before its tags are written too.
func TestCommitWindows(t *testing.T) {
	for _, overwrite := range []bool{false, true} {
		name := map[bool]string{false: "new", true: "overwrite"}[overwrite]
		t.Run(name, func(t *testing.T) {
			rt := &hookTransport{}
			s := newStore(t, Options{PartSize: testPartSize, Transport: rt})
			reader := newStore(t, Options{Bucket: s.bucket})
			ctx := t.Context()
			before := seen("missing")
			if overwrite {
				old := storagetest.Bytes(1, 0, 2*testPartSize)
				if _, err := writeAll(ctx, s, "k", old, storage.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				before = seen(hexSum(old))
			}
			data := storagetest.Bytes(2, 0, 2*testPartSize+1)
			after := seen(hexSum(data))
			var atComplete, atTagging view
			rt.set(func(r *http.Request) error {
				switch {
				case isComplete(r):
					atComplete = look(t, reader, "k")
				case isTagging(r):
					atTagging = look(t, reader, "k")
				}
				return nil
			})
			if _, err := writeAll(ctx, s, "k", data, storage.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			rt.set(nil)
			if atComplete != before {
				t.Errorf("just before completion, readers saw %+v, want %+v", atComplete, before)
			}
			if atTagging != after {
				t.Errorf("completed, before the tags, readers saw %+v, want %+v", atTagging, after)
			}
			if got := look(t, reader, "k"); got != after {
				t.Errorf("after Commit, readers saw %+v, want %+v", got, after)
			}
			if left := leftovers(t, s); len(left) != 0 {
				t.Errorf("left behind (the replaced object's record?): %q", left)
			}
		})
	}
}

// TestListTrustsOnlyOwnTags: tags that another upload wrote (writers
// racing on a key) do not fool List, nor do missing tags.
func TestListTrustsOnlyOwnTags(t *testing.T) {
	s := newStore(t, Options{PartSize: testPartSize})
	ctx := t.Context()
	data := storagetest.Bytes(3, 0, testPartSize+1)
	if _, err := writeAll(ctx, s, "k", data, storage.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := seen(hexSum(data))
	foreign, _ := tags.NewTags(map[string]string{tagUpload: "OTHER", tagSHA256: hexSum(nil)}, true)
	if err := s.client.PutObjectTagging(ctx, s.bucket, "k", foreign, minio.PutObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := look(t, s, "k"); got != want {
		t.Errorf("with another upload's tags, readers saw %+v, want %+v", got, want)
	}
	if err := s.client.RemoveObjectTagging(ctx, s.bucket, "k", minio.RemoveObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := look(t, s, "k"); got != want {
		t.Errorf("without tags, readers saw %+v, want %+v", got, want)
	}
}

// TestLostRecord: an object whose record was deleted by hand stays
// readable and deletable, with an empty SHA-256.
func TestLostRecord(t *testing.T) {
	s := newStore(t, Options{PartSize: testPartSize})
	ctx := t.Context()
	data := storagetest.Bytes(4, 0, testPartSize+1)
	if _, err := writeAll(ctx, s, "k", data, storage.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	upload, err := s.uploadOf(ctx, "k")
	if err != nil || upload == "" {
		t.Fatalf("upload token %q, %v", upload, err)
	}
	s.removeRecord(ctx, upload)
	s.client.RemoveObjectTagging(ctx, s.bucket, "k", minio.RemoveObjectTaggingOptions{})
	if got, want := look(t, s, "k"), (view{"", "", hexSum(data), ""}); got != want {
		t.Errorf("readers saw %+v, want %+v", got, want)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
}

// TestCrashLeftovers: what a writer that dies between its record and the
// completion leaves (an incomplete upload of the key, a record) is
// invisible, and Open removes it once older than StaleAfter, keeping the
// records of live objects.
func TestCrashLeftovers(t *testing.T) {
	s := newStore(t, Options{PartSize: testPartSize})
	ctx := t.Context()
	live := storagetest.Bytes(5, 0, testPartSize+1)
	if _, err := writeAll(ctx, s, "live", live, storage.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A replaced object's record, when the replacing writer could not
	// delete it.
	if _, err := writeAll(ctx, s, "replaced", live, storage.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stale, _ := s.uploadOf(ctx, "replaced")
	if _, err := writeAll(ctx, s, "replaced", []byte("small"), storage.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The crash: the writer dies after its record, before the completion.
	opts := minio.PutObjectOptions{UserMetadata: map[string]string{metaSHA256Record: "CRASHED"}}
	id, err := s.core.NewMultipartUpload(ctx, s.bucket, "crashed", opts)
	if err != nil {
		t.Fatal(err)
	}
	part := storagetest.Bytes(6, 0, testPartSize)
	if _, err := s.core.PutObjectPart(ctx, s.bucket, "crashed", id, 1, bytes.NewReader(part), int64(len(part)), minio.PutObjectPartOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.putRecord(ctx, "crashed", "CRASHED", hexSum(part)); err != nil {
		t.Fatal(err)
	}

	if got := look(t, s, "crashed"); got != seen("missing") {
		t.Errorf("readers saw the crashed upload: %+v", got)
	}
	left := leftovers(t, s)
	if len(left) != 3 {
		t.Fatalf("leftovers = %q, want the crashed upload, its record and the replaced object's record", left)
	}
	newStore(t, Options{Bucket: s.bucket}) // default StaleAfter: 24h
	if again := leftovers(t, s); len(again) != len(left) {
		t.Errorf("Open with the default StaleAfter removed young leftovers: %q, was %q", again, left)
	}
	time.Sleep(10 * time.Millisecond)
	newStore(t, Options{Bucket: s.bucket, StaleAfter: time.Millisecond})
	if left := leftovers(t, s); len(left) != 0 {
		t.Errorf("after Open with StaleAfter 1ms: %q", left)
	}
	if _, err := s.client.StatObject(ctx, s.bucket, recordPrefix+stale, minio.StatObjectOptions{}); !errors.Is(mapError(err), storage.ErrNotFound) {
		t.Errorf("the replaced object's record: %v", err)
	}
	if got := look(t, s, "live"); got != seen(hexSum(live)) {
		t.Errorf("after the sweep, the live object reads %+v", got)
	}
}

// TestConcurrentIfNotExistsMultipart: of writers of several parts racing
// with IfNotExists, exactly one wins; the others' records are removed.
func TestConcurrentIfNotExistsMultipart(t *testing.T) {
	s := newStore(t, Options{PartSize: testPartSize})
	ctx := t.Context()
	const writers = 4
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, writers)
	infos := make([]storage.Info, writers)
	ready.Add(writers)
	for i := range writers {
		done.Go(func() {
			w, err := s.Create(ctx, "k", storage.CreateOptions{IfNotExists: true})
			if err != nil {
				errs[i] = err
				ready.Done()
				return
			}
			defer w.Abort(ctx)
			_, errs[i] = w.Write(storagetest.Bytes(uint64(10+i), 0, testPartSize+1))
			ready.Done()
			<-start
			if errs[i] == nil {
				infos[i], errs[i] = w.Commit(ctx)
			}
		})
	}
	ready.Wait()
	close(start)
	done.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("writers %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, storage.ErrExists):
			t.Errorf("writer %d: %v, want ErrExists", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer won")
	}
	if got := look(t, s, "k"); got != seen(infos[winner].SHA256) {
		t.Errorf("readers saw %+v, want the winner's %s", got, infos[winner].SHA256)
	}
	if left := leftovers(t, s); len(left) != 0 {
		t.Errorf("left behind: %q", left)
	}
}

// TestRemoveStaleOnOpenStore: a store that stays open removes a crashed
// writer's incomplete upload and record once they are older than
// StaleAfter (RemoveStale, which the lifecycle sweeper calls), and not
// before: right after Open, with the default StaleAfter, it leaves them.
func TestRemoveStaleOnOpenStore(t *testing.T) {
	s := newStore(t, Options{PartSize: testPartSize})
	ctx := t.Context()
	opts := minio.PutObjectOptions{UserMetadata: map[string]string{metaSHA256Record: "CRASHED"}}
	id, err := s.core.NewMultipartUpload(ctx, s.bucket, "crashed", opts)
	if err != nil {
		t.Fatal(err)
	}
	part := storagetest.Bytes(7, 0, testPartSize)
	if _, err := s.core.PutObjectPart(ctx, s.bucket, "crashed", id, 1, bytes.NewReader(part), int64(len(part)), minio.PutObjectPartOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.putRecord(ctx, "crashed", "CRASHED", hexSum(part)); err != nil {
		t.Fatal(err)
	}
	left := leftovers(t, s)
	if n := s.RemoveStale(ctx); n != 0 || len(leftovers(t, s)) != len(left) {
		t.Fatalf("RemoveStale with the default StaleAfter removed %d young leftovers", n)
	}
	open := newStore(t, Options{Bucket: s.bucket, StaleAfter: time.Hour})
	open.staleAfter = time.Millisecond // as if an hour had passed since Open
	time.Sleep(10 * time.Millisecond)
	if n := open.RemoveStale(ctx); n != len(left) {
		t.Errorf("RemoveStale removed %d, want the %d leftovers %q", n, len(left), left)
	}
	if again := leftovers(t, s); len(again) != 0 {
		t.Errorf("after RemoveStale: %q", again)
	}
}
