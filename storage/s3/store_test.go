package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

// leftovers lists what uploads left in the bucket: objects under the
// reserved prefix but the SHA-256 records of existing objects, and
// incomplete multipart uploads.
func leftovers(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	ctx := context.WithoutCancel(t.Context())
	for obj := range s.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: storage.ReservedDir + "/", Recursive: true}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		if strings.HasPrefix(obj.Key, recordPrefix) {
			stale, err := s.recordStale(ctx, obj)
			if err != nil {
				t.Fatal(err)
			}
			if !stale {
				continue
			}
		}
		out = append(out, "object "+obj.Key)
	}
	for up := range s.client.ListIncompleteUploads(ctx, s.bucket, "", true) {
		if up.Err != nil {
			t.Fatal(up.Err)
		}
		out = append(out, "upload of "+up.Key)
	}
	return out
}

// TestNoLeftovers checks that every way an upload can end, successful or
// not, leaves no staged object and no incomplete multipart upload behind.
func TestNoLeftovers(t *testing.T) {
	s := newStore(t, Options{PartSize: testPartSize})
	existing := []byte("existing")
	w, _ := s.Create(t.Context(), "exists", storage.CreateOptions{})
	w.Write(existing)
	if _, err := w.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	big := storagetest.Bytes(1, 0, 2*testPartSize+1)
	cases := []struct {
		name string
		opts storage.CreateOptions
		key  string
		// end finishes the upload; it returns the error the case expects.
		end     func(w storage.Writer, cancel context.CancelFunc) error
		wantErr error
	}{
		{"commit", storage.CreateOptions{}, "ok", func(w storage.Writer, _ context.CancelFunc) error {
			_, err := w.Commit(t.Context())
			return err
		}, nil},
		{"abort", storage.CreateOptions{}, "aborted", func(w storage.Writer, _ context.CancelFunc) error {
			return w.Abort(t.Context())
		}, nil},
		{"max size", storage.CreateOptions{MaxSize: 2 * testPartSize}, "too-large", nil, storage.ErrTooLarge},
		{"size mismatch", storage.CreateOptions{Size: 3 * testPartSize}, "short", func(w storage.Writer, _ context.CancelFunc) error {
			_, err := w.Commit(t.Context())
			return err
		}, storage.ErrSizeMismatch},
		{"if not exists", storage.CreateOptions{IfNotExists: true}, "exists", func(w storage.Writer, _ context.CancelFunc) error {
			_, err := w.Commit(t.Context())
			return err
		}, storage.ErrExists},
		{"cancelled", storage.CreateOptions{}, "cancelled", func(w storage.Writer, cancel context.CancelFunc) error {
			cancel()
			_, err := w.Write([]byte("more"))
			return err
		}, context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			w, err := s.Create(ctx, c.key, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			// Write in 1 MiB chunks, so that parts go out before any limit
			// is hit.
			multipart := false
			for data := big; len(data) > 0 && err == nil; {
				n := min(len(data), 1<<20)
				_, err = w.Write(data[:n])
				data = data[n:]
				multipart = multipart || w.(*writer).uploadID != ""
			}
			if !multipart {
				t.Fatal("no multipart upload was in progress")
			}
			if err == nil {
				err = c.end(w, cancel)
			}
			if c.wantErr == nil && err != nil || !errors.Is(err, c.wantErr) {
				t.Fatalf("error = %v, want %v", err, c.wantErr)
			}
			w.Abort(t.Context())
			if left := leftovers(t, s); len(left) != 0 {
				t.Errorf("left behind: %q", left)
			}
		})
	}
	if info, err := s.Stat(t.Context(), "exists"); err != nil || info.Size != int64(len(existing)) {
		t.Errorf("existing object: %+v, %v", info, err)
	}
}

// TestAbortUnblocksWrite: Abort from another goroutine stops a Write that
// is waiting on the server.
func TestAbortUnblocksWrite(t *testing.T) {
	s := newStore(t, Options{PartSize: testPartSize})
	w, err := s.Create(t.Context(), "k", storage.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(w, storagetest.NewStream(1, 1<<30))
		done <- err
	}()
	for w.Written() < 2*testPartSize {
		time.Sleep(time.Millisecond)
	}
	if err := w.Abort(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Write succeeded after Abort")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Write still blocked 30 s after Abort")
	}
	if left := leftovers(t, s); len(left) != 0 {
		t.Errorf("left behind: %q", left)
	}
}

// TestStaleCleanup: Open removes what crashed writers left once it is older
// than StaleAfter, and nothing younger.
func TestStaleCleanup(t *testing.T) {
	s := newStore(t, Options{})
	ctx := t.Context()
	if _, err := s.client.PutObject(ctx, s.bucket, stagingPrefix+"crashed", strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.core.NewMultipartUpload(ctx, s.bucket, stagingPrefix+"crashed2", minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.core.NewMultipartUpload(ctx, s.bucket, "copy/in/progress", minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	newStore(t, Options{Bucket: s.bucket}) // default StaleAfter: 24h
	if left := leftovers(t, s); len(left) != 3 {
		t.Fatalf("after Open with the default StaleAfter: %q, want the 3 young leftovers", left)
	}
	time.Sleep(10 * time.Millisecond)
	newStore(t, Options{Bucket: s.bucket, StaleAfter: time.Millisecond})
	if left := leftovers(t, s); len(left) != 0 {
		t.Fatalf("after Open with StaleAfter 1ms: %q", left)
	}
}

// TestForeignObject: objects written by other tools are listed and served,
// with an empty SHA256.
func TestForeignObject(t *testing.T) {
	s := newStore(t, Options{})
	ctx := t.Context()
	if _, err := s.client.PutObject(ctx, s.bucket, "foreign.txt", strings.NewReader("hello"), 5, minio.PutObjectOptions{ContentType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	info, err := s.Stat(ctx, "foreign.txt")
	if err != nil || info.Size != 5 || info.MediaType != "text/plain" || info.SHA256 != "" {
		t.Errorf("Stat = %+v, %v", info, err)
	}
	page, err := s.List(ctx, "", "", 0)
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("List = %+v, %v; want one item", page, err)
	}
	if got := page.Items[0]; got.Key != info.Key || got.Size != info.Size || got.MediaType != info.MediaType || got.SHA256 != "" || got.ETag != info.ETag {
		t.Errorf("listed %+v, want %+v", got, info)
	}
}

// countingTransport counts requests, HEADs and listings (ListObjectsV2).
type countingTransport struct {
	requests, heads, listings atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.requests.Add(1)
	if r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2" {
		c.listings.Add(1)
	}
	if r.Method == http.MethodHead {
		c.heads.Add(1)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestListUsesListingMetadata: List fills every Info, also of objects
// streamed in parts, whether the service lists metadata or not: a service
// that does not (AWS, SeaweedFS) costs one HEAD per listed object, one of
// the object's record at most besides; with the metadata and tags MinIO
// lists (metadata=true), an object costs no request.
func TestListUsesListingMetadata(t *testing.T) {
	var rt countingTransport
	s := newStore(t, Options{Transport: &rt, PartSize: testPartSize})
	ctx := t.Context()
	sums := map[string]string{}
	for _, key := range []string{"a", "b/c", "d", "e"} {
		data := []byte(key)
		if key == "e" {
			data = storagetest.Bytes(1, 0, testPartSize+1)
		}
		info, err := writeAll(ctx, s, key, data, storage.CreateOptions{MediaType: "text/x-" + key[:1], Filename: "ä " + key})
		if err != nil {
			t.Fatal(err)
		}
		sums[key] = info.SHA256
	}
	before, listings := rt.heads.Load(), rt.listings.Load()
	page, err := s.List(ctx, "", "", 0)
	if err != nil || len(page.Items) != len(sums) {
		t.Fatalf("List = %+v, %v", page, err)
	}
	// One listing, and one more past the SHA-256 record of "e" under .mcpblob/.
	if n := rt.listings.Load() - listings; n != 2 {
		t.Errorf("List made %d listing requests, want 2", n)
	}
	if heads := rt.heads.Load() - before; heads > int64(len(sums)+1) {
		t.Errorf("List made %d HEAD requests, want at most %d", heads, len(sums)+1)
	}
	for _, info := range page.Items {
		if info.Filename != "ä "+info.Key || info.MediaType != "text/x-"+info.Key[:1] || info.SHA256 != sums[info.Key] {
			t.Errorf("listed %+v, want SHA256 %s", info, sums[info.Key])
		}
	}
	t.Run("listed metadata", func(t *testing.T) { checkListedMetadata(t, s, &rt, page.Items) })
}

// checkListedMetadata gives listedInfo each listed object as MinIO lists
// it, with its metadata and tags, and wants the same Info without a
// request.
func checkListedMetadata(t *testing.T, s *Store, rt *countingTransport, listed []storage.Info) {
	ctx := t.Context()
	for _, want := range listed {
		oi, err := s.client.StatObject(ctx, s.bucket, want.Key, minio.StatObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tags, err := s.client.GetObjectTagging(ctx, s.bucket, want.Key, minio.GetObjectTaggingOptions{})
		if err != nil {
			t.Fatal(err)
		}
		obj := minio.ObjectInfo{Key: want.Key, Size: oi.Size, ETag: oi.ETag, LastModified: want.ModTime,
			UserMetadata: minio.StringMap{"content-type": oi.ContentType}, UserTags: tags.ToMap()}
		for name, v := range oi.Metadata {
			if strings.HasPrefix(name, "X-Amz-Meta-") {
				obj.UserMetadata[name] = v[0]
			}
		}
		before := rt.requests.Load()
		got, err := s.listedInfo(ctx, obj)
		if n := rt.requests.Load() - before; err != nil || n != 0 || got != want {
			t.Errorf("listedInfo(%s) = %+v, %v after %d requests; want %+v and none", want.Key, got, err, n, want)
		}
	}
}

func TestOpenOptions(t *testing.T) {
	srv := s3test.Shared(t)
	ctx := t.Context()
	base := Options{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Bucket: newBucketName()}
	if _, err := Open(ctx, base); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Open of a missing bucket without CreateBucket: %v", err)
	}
	for _, bad := range []func(*Options){
		func(o *Options) { o.Bucket = "" },
		func(o *Options) { o.PartSize = 1 << 20 },
		func(o *Options) { o.PartSize = 6 << 30 },
		func(o *Options) { o.Endpoint = "ftp://host:21" },
		func(o *Options) { o.Endpoint = "http://host:9000/path" },
		func(o *Options) { o.Endpoint = "" },
		func(o *Options) { o.PublicEndpoint = "http://" },
	} {
		opts := base
		opts.CreateBucket = true
		bad(&opts)
		if _, err := Open(ctx, opts); err == nil {
			t.Errorf("Open(%+v) succeeded", opts)
		}
	}
	// CreateBucket creates it; opening again finds it.
	base.CreateBucket = true
	if _, err := Open(ctx, base); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, base); err != nil {
		t.Fatal(err)
	}
	// Wrong credentials fail at Open.
	wrong := base
	wrong.SecretKey = "wrong"
	if _, err := Open(ctx, wrong); err == nil {
		t.Error("Open with a wrong secret key succeeded")
	}
}

// TestCredentialChain: with no keys in Options, the environment provides
// them.
func TestCredentialChain(t *testing.T) {
	srv := s3test.Shared(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	s, err := Open(t.Context(), Options{Endpoint: srv.Endpoint, Bucket: newBucketName(), CreateBucket: true})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := s.Create(t.Context(), "k", storage.CreateOptions{})
	w.Write([]byte("x"))
	if _, err := w.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestMinioGoUnknownSizeBuffer documents why Writer does not hand unknown
// sizes to minio-go's PutObject: it would buffer one part of this size.
func TestMinioGoUnknownSizeBuffer(t *testing.T) {
	_, part, _, err := minio.OptimalPartInfo(-1, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("minio-go PutObject with size -1 and no PartSize buffers %d MiB per upload; Writer buffers %d MiB", part>>20, defaultPartSize>>20)
	if part <= defaultPartSize {
		t.Errorf("minio-go's part for unknown sizes is %d bytes: the package documentation needs an update", part)
	}
}

// TestSinglePutIsVerified: the one-part path signs the payload with its
// SHA-256, and the server checks it.
func TestSinglePutIsVerified(t *testing.T) {
	s := newStore(t, Options{})
	ctx := t.Context()
	data := []byte("payload")
	_, err := s.core.PutObject(ctx, s.bucket, "k", bytes.NewReader(data), int64(len(data)), "", strings.Repeat("0", 64),
		minio.PutObjectOptions{DisableContentSha256: true})
	if err == nil {
		t.Fatal("PUT with a wrong payload SHA-256 succeeded")
	}
	if _, err := s.Stat(ctx, "k"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat after the rejected PUT: %v", err)
	}
}

// TestListSkipsReservedDir: List steps over the Store's own objects (here
// SHA-256 records) in one request, even with listing pages smaller than
// their number.
func TestListSkipsReservedDir(t *testing.T) {
	var rt countingTransport
	s := newStore(t, Options{Transport: &rt})
	ctx := t.Context()
	const records = 40
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				if err := s.putRecord(ctx, "gone", fmt.Sprintf("R%05d", i), "0"); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for i := range records {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, key := range []string{"-before", "after"} {
		if _, err := writeAll(ctx, s, key, []byte(key), storage.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The first page is full before the records; the second one meets
	// them and lists on past them.
	cur := ""
	for _, step := range []struct {
		want     string
		requests int64
	}{{"-before", 1}, {"after", 2}} {
		before := rt.listings.Load()
		page, err := s.List(ctx, "", cur, 1)
		if err != nil || len(page.Items) != 1 || page.Items[0].Key != step.want {
			t.Fatalf("List = %+v, %v; want %s", page, err, step.want)
		}
		if n := rt.listings.Load() - before; n != step.requests {
			t.Errorf("List of %s made %d listing requests, want %d", step.want, n, step.requests)
		}
		cur = page.NextCursor
	}
	if cur != "" {
		t.Errorf("last page has cursor %q", cur)
	}
}
