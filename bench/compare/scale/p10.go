package scale

// P10: listing. A folder of 100,000 blobs and one of 100, on the local
// store and on SeaweedFS through mcpblob's S3 backend: a page of 100 from
// the large folder (the first page, and one from the middle of the
// listing) against the page of 100 from the small folder, through
// list_blobs and GET /v1/blobs, and SeaweedFS's own ListObjectsV2 of the
// same pages from the harness; and the whole walk of the large folder
// through GET /v1/blobs pages, local store against SeaweedFS.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/bench/internal/pair"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
)

const (
	p10Big   = "p10/big/"
	p10Small = "p10/small/"
	p10Page  = 100
)

func p10Key(folder string, i int) string { return fmt.Sprintf("%sk%06d", folder, i) }

// p10Content is blob i's few bytes, distinct per blob.
func p10Content(key string) []byte { return []byte("p10 " + key + "\n") }

// p10Store is one store under test, served by an mcpblob.
type p10Store struct {
	name string
	srv  *scaleServer
	mcp  *mcpc.Client
	deep string // cursor of the page in the middle of the large folder
	rig  *s3Rig // set for SeaweedFS: its own listing is timed too
}

// p10Walk is one timed walk of the large folder.
type p10Walk struct {
	seconds   float64 // whole walk (estimated from the pages done when cut)
	pages     int     // pages actually fetched
	estimated bool
	err       error
}

func runP10(ctx context.Context, cfg *Options, work string, bins map[string]string, rig *s3Rig, t *pair.Target, start time.Time) {
	n := 100_000
	walkCap, reps := 8*time.Second, 5
	if cfg.Quick {
		n, walkCap = 10_000, 5*time.Second
	}
	t.Title = fmt.Sprintf("paging %d blobs, %d per page", n, p10Page)
	t.Goal = fmt.Sprintf("a page from %d ≤ 2× a page from 100 (first and middle pages, both stores); local walk ≤ 2× the SeaweedFS walk", n)
	data := filepath.Join(work, "p10data")
	measure.Logf("P10 creating %d + %d blobs on the local store and on SeaweedFS (at once)", n, p10Page)
	var localTime, s3Time time.Duration
	var localErr, s3Err error
	var wg sync.WaitGroup
	wg.Go(func() { localTime, localErr = timed(func() error { return p10SeedLocal(data, n) }) })
	wg.Go(func() { s3Time, s3Err = timed(func() error { return p10SeedS3(ctx, rig, n) }) })
	wg.Wait()
	for _, err := range []error{localErr, s3Err} {
		if err != nil {
			t.Errors = append(t.Errors, "seeding: "+err.Error())
		}
	}
	if len(t.Errors) > 0 {
		return
	}
	measure.Logf("  seeded: local store %.1f s, SeaweedFS %.1f s", localTime.Seconds(), s3Time.Seconds())
	local, err := startScaleServer(ctx, bins["mcpblob"], []string{"--data", data})
	if err != nil {
		t.Errors = append(t.Errors, err.Error())
		return
	}
	defer local.proc.Stop()
	stores := []*p10Store{{name: "local store", srv: local}, {name: "SeaweedFS (S3 backend)", srv: rig.srv, rig: rig}}
	for _, s := range stores {
		if s.mcp, err = s.srv.mcpClient(ctx); err != nil {
			t.Errors = append(t.Errors, err.Error())
			return
		}
	}
	walks := make([][]p10Walk, len(stores))
	pages := map[string][]float64{}
	for r := range scaleRuns {
		if !anotherRun(cfg, start, r, t) {
			break
		}
		for k := range stores {
			si := (k + r) % len(stores)
			w := p10WalkOnce(ctx, stores[si], n, walkCap)
			measure.Logf("  P10 walk %s: %.1f s (%d pages, estimated %v) %v", stores[si].name, w.seconds, w.pages, w.estimated, w.err)
			walks[si] = append(walks[si], w)
		}
		for k := range stores {
			s := stores[(k+r)%len(stores)]
			for _, c := range p10Cases(s) {
				ms, err := p10Time(ctx, s, c, reps)
				if err != nil {
					t.Errors = append(t.Errors, fmt.Sprintf("%s %s: %v", s.name, c.label, err))
				}
				pages[s.name+"|"+c.label] = append(pages[s.name+"|"+c.label], ms)
			}
		}
	}
	p10Report(t, n, stores, walks, pages, localTime, s3Time)
}

func timed(f func() error) (time.Duration, error) {
	t0 := time.Now()
	err := f()
	return time.Since(t0), err
}

// p10SeedLocal writes the two folders straight into a local store (before
// its server starts), 64 writers at once (the time goes to fsyncs): the store's create path, with
// its fsyncs, without HTTP.
func p10SeedLocal(dir string, n int) error {
	st, err := localfs.Open(dir, localfs.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	return p10Parallel(64, n, func(key string) error {
		ctx := context.Background()
		body := p10Content(key)
		w, err := st.Create(ctx, key, storage.CreateOptions{MediaType: "text/plain", Size: int64(len(body))})
		if err != nil {
			return err
		}
		if _, err := w.Write(body); err != nil {
			w.Abort(ctx)
			return err
		}
		_, err = w.Commit(ctx)
		return err
	})
}

// p10Parallel calls put for every key of both folders with workers at once
// and returns the first error.
func p10Parallel(workers, n int, put func(key string) error) error {
	keys := make(chan string, 1024)
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for k := range keys {
				if failed.Load() != nil {
					continue
				}
				if err := put(k); err != nil {
					failed.CompareAndSwap(nil, &err)
				}
			}
		})
	}
	for i := range n {
		keys <- p10Key(p10Big, i)
	}
	for i := range p10Page {
		keys <- p10Key(p10Small, i)
	}
	close(keys)
	wg.Wait()
	if e := failed.Load(); e != nil {
		return *e
	}
	return nil
}

// p10ListAnswer is a page from either surface.
type p10ListAnswer struct {
	Items      []struct{ Key string } `json:"items"`
	NextCursor string                 `json:"nextCursor"`
}

// controlPage fetches one page through GET /v1/blobs.
func controlPage(ctx context.Context, s *p10Store, prefix, cursor string) (p10ListAnswer, error) {
	q := url.Values{"prefix": {prefix}, "limit": {fmt.Sprint(p10Page)}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var a p10ListAnswer
	err := s.srv.control(ctx, "GET", "/v1/blobs?"+q.Encode(), nil, &a)
	return a, err
}

// toolPage fetches one page through tools/call list_blobs.
func toolPage(ctx context.Context, s *p10Store, prefix, cursor string) (p10ListAnswer, error) {
	args := map[string]any{"prefix": prefix, "limit": p10Page}
	if cursor != "" {
		args["cursor"] = cursor
	}
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Blobs      []struct{ Key string } `json:"blobs"`
			NextCursor string                 `json:"nextCursor"`
		} `json:"structuredContent"`
	}
	if err := s.mcp.Call(ctx, "tools/call", map[string]any{"name": "list_blobs", "arguments": args}, &res); err != nil {
		return p10ListAnswer{}, err
	}
	if res.IsError {
		return p10ListAnswer{}, fmt.Errorf("list_blobs answered isError")
	}
	a := p10ListAnswer{NextCursor: res.StructuredContent.NextCursor}
	for _, b := range res.StructuredContent.Blobs {
		a.Items = append(a.Items, struct{ Key string }{b.Key})
	}
	return a, nil
}

// p10WalkOnce walks the large folder through GET /v1/blobs pages, checking
// every key arrives once and in order; the first walk of a store keeps the
// cursor of the middle page. A walk longer than limit stops there and its
// time is extrapolated from the pages done (pages cost the same wherever
// the cursor is, or the deep-page pairs would show otherwise).
func p10WalkOnce(ctx context.Context, s *p10Store, n int, limit time.Duration) p10Walk {
	total := (n + p10Page - 1) / p10Page
	t0 := time.Now()
	var w p10Walk
	cursor, seen := "", 0
	for {
		a, err := controlPage(ctx, s, p10Big, cursor)
		if err != nil {
			w.err = err
			return w
		}
		for j, it := range a.Items {
			if want := p10Key(p10Big, seen+j); it.Key != want {
				w.err = fmt.Errorf("walk: item %d is %q, want %q", seen+j, it.Key, want)
				return w
			}
		}
		seen += len(a.Items)
		w.pages++
		if w.pages == total/2 && s.deep == "" {
			s.deep = a.NextCursor
		}
		if a.NextCursor == "" {
			break
		}
		cursor = a.NextCursor
		if time.Since(t0) > limit {
			w.estimated = true
			break
		}
	}
	w.seconds = time.Since(t0).Seconds()
	if w.estimated {
		w.seconds *= float64(total) / float64(w.pages)
	} else if seen != n {
		w.err = fmt.Errorf("walk: %d keys, want %d", seen, n)
	}
	if s.deep == "" {
		// The walk never reached the middle: resume after the middle key,
		// as the stores' cursors (base64url of the last key) encode it.
		s.deep = base64.RawURLEncoding.EncodeToString([]byte(p10Key(p10Big, total/2*p10Page-1)))
	}
	return w
}

// p10Case is one page to time.
type p10Case struct {
	label   string // "GET /v1/blobs, first page"
	surface string // "GET /v1/blobs" or "list_blobs"
	prefix  string
	deep    bool
	tool    bool // list_blobs instead of GET /v1/blobs
	raw     bool // SeaweedFS's own ListObjectsV2 from the harness
}

// p10Cases are the pages timed on s: both surfaces, and on SeaweedFS its
// own listing, which tells what of a page's time is the S3 LIST.
func p10Cases(s *p10Store) []p10Case {
	var cs []p10Case
	if s.rig != nil {
		cs = append(cs,
			p10Case{label: "SeaweedFS ListObjectsV2, folder of 100", surface: "SeaweedFS ListObjectsV2", prefix: p10Small, raw: true},
			p10Case{label: "SeaweedFS ListObjectsV2, first page", surface: "SeaweedFS ListObjectsV2", prefix: p10Big, raw: true})
	}
	for _, tool := range []bool{false, true} {
		surface := "GET /v1/blobs"
		if tool {
			surface = "list_blobs"
		}
		cs = append(cs,
			p10Case{label: surface + ", folder of 100", surface: surface, prefix: p10Small, tool: tool},
			p10Case{label: surface + ", first page", surface: surface, prefix: p10Big, tool: tool},
			p10Case{label: surface + ", middle page", surface: surface, prefix: p10Big, deep: true, tool: tool})
	}
	return cs
}

// p10Time is the median time of reps fetches of the case's page, in ms,
// each checked to hold a full page.
func p10Time(ctx context.Context, s *p10Store, c p10Case, reps int) (float64, error) {
	cursor := ""
	if c.deep {
		cursor = s.deep
	}
	var ms []float64
	for range reps {
		t0 := time.Now()
		var a p10ListAnswer
		var err error
		switch {
		case c.raw:
			a, err = s3Page(ctx, s.rig, c.prefix)
		case c.tool:
			a, err = toolPage(ctx, s, c.prefix, cursor)
		default:
			a, err = controlPage(ctx, s, c.prefix, cursor)
		}
		el := time.Since(t0)
		if err != nil {
			return 0, err
		}
		if len(a.Items) != p10Page {
			return 0, fmt.Errorf("page of %d items, want %d", len(a.Items), p10Page)
		}
		ms = append(ms, float64(el.Microseconds())/1000)
	}
	return measure.Median(ms), nil
}

func p10Report(t *pair.Target, n int, stores []*p10Store, walks [][]p10Walk, pages map[string][]float64, localTime, s3Time time.Duration) {
	var d strings.Builder
	fmt.Fprintf(&d, "Creating %d + %d blobs, both stores at once: local store (64 writers through the store, fsync each) %.1f s (%.0f/s); SeaweedFS (%d PUTs at once from the harness, mcpblob's metadata) %.1f s (%.0f/s).\n\n",
		n, p10Page, localTime.Seconds(), float64(n+p10Page)/localTime.Seconds(), p10Writers, s3Time.Seconds(), float64(n+p10Page)/s3Time.Seconds())
	d.WriteString("| store | page | ms per page (median of each run) |\n|---|---|---|\n")
	for _, s := range stores {
		for _, c := range p10Cases(s) {
			fmt.Fprintf(&d, "| %s | %s | %s |\n", s.name, c.label, msList(pages[s.name+"|"+c.label]))
		}
		for _, c := range p10Cases(s) {
			if c.prefix == p10Small || c.raw {
				continue
			}
			ref := c.surface + ", folder of 100"
			p := pair.Runs{Label: fmt.Sprintf("%s, %s of %d ÷ page of 100", s.name, c.label, n), Unit: "ms/page", RefName: "folder of 100",
				Ours: pages[s.name+"|"+c.label], Ref: pages[s.name+"|"+ref], Want: 2, Max: true, Lower: true}
			t.Pairs = append(t.Pairs, p)
			if !p.Met() {
				t.Why = append(t.Why, p10PageWhy(p, s, n, pages))
			}
		}
	}
	walk := pair.Runs{Label: fmt.Sprintf("walk of %d, local store ÷ SeaweedFS", n), Unit: "s", RefName: "SeaweedFS (S3 backend)", Want: 2, Max: true, Lower: true}
	d.WriteString("\n| walk through GET /v1/blobs | run | seconds | pages fetched |\n|---|---|---|---|\n")
	for si, s := range stores {
		for r, w := range walks[si] {
			note := ""
			if w.estimated {
				note = " (cut at the time cap; extrapolated)"
			}
			fmt.Fprintf(&d, "| %s | %d | %.1f%s | %d |\n", s.name, r+1, w.seconds, note, w.pages)
			if w.err != nil {
				t.Errors = append(t.Errors, fmt.Sprintf("walk %s run %d: %v", s.name, r+1, w.err))
			}
			if si == 0 {
				walk.Ours = append(walk.Ours, w.seconds)
			} else {
				walk.Ref = append(walk.Ref, w.seconds)
			}
		}
	}
	t.Pairs = append(t.Pairs, walk)
	if !walk.Met() {
		_, med, _, _ := walk.Spread()
		t.Why = append(t.Why, fmt.Sprintf("the local walk took %.1f× SeaweedFS's (%.1f s against %.1f s median): each page costs the local store work that grows with the folder (see its deep and first page figures); an index of keys in order, read from the cursor on, would close it.",
			med, measure.Median(walk.Ours), measure.Median(walk.Ref)))
	}
	t.Detail = d.String() + t.Detail
}

func msList(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, ", ")
}

// p10PageWhy explains a page of the large folder costing over 2× the small
// folder's; on SeaweedFS it compares with SeaweedFS's own LIST of the same
// pages.
func p10PageWhy(p pair.Runs, s *p10Store, n int, pages map[string][]float64) string {
	_, med, _, _ := p.Spread()
	perKey := (measure.Median(p.Ours) - measure.Median(p.Ref)) / float64(n) * 1e3
	msg := fmt.Sprintf("%s: %.1f× the small folder's page (%.2f ms against %.2f ms), %.1f µs more per blob in the folder", p.Label, med, measure.Median(p.Ours), measure.Median(p.Ref), perKey)
	if s.rig == nil {
		return msg + ": the local store's page cost grows with the folder (first and middle pages alike, so it reads the whole folder for every page); an ordered index read from the cursor on would make a page cost what it returns."
	}
	big, small := measure.Median(pages[s.name+"|SeaweedFS ListObjectsV2, first page"]), measure.Median(pages[s.name+"|SeaweedFS ListObjectsV2, folder of 100"])
	if big <= 0 || small <= 0 {
		return msg + "."
	}
	own := fmt.Sprintf(": SeaweedFS's own ListObjectsV2 of the first 100 (from the harness) takes %.2f ms in the large folder against %.2f ms in the small one (%.1f×)", big, small, big/small)
	if big/small > 2 {
		return msg + own + ", so the growth is SeaweedFS's listing, not mcpblob's (which adds about " + fmt.Sprintf("%.0f", max(0, measure.Median(p.Ours)-big)) + " ms per page on top); only a key index kept beside the bucket would avoid it."
	}
	return msg + own + ", so the growth is in mcpblob's S3 listing path (its LIST per page and the HEADs where metadata is missing), which would need fixing there."
}

// s3Page lists the first 100 keys under prefix with SeaweedFS's own
// ListObjectsV2 (asking for metadata, as the S3 store does), from the
// harness.
func s3Page(ctx context.Context, rig *s3Rig, prefix string) (p10ListAnswer, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var a p10ListAnswer
	opts := minio.ListObjectsOptions{Prefix: prefix, Recursive: true, WithMetadata: true, MaxKeys: p10Page}
	for obj := range rig.client.ListObjectsIter(ctx, rig.bucket, opts) {
		if obj.Err != nil {
			return a, obj.Err
		}
		a.Items = append(a.Items, struct{ Key string }{obj.Key})
		if len(a.Items) == p10Page {
			break
		}
	}
	return a, nil
}

// p10SeedS3 uploads both folders to the rig's bucket, p10Writers PUTs at
// once from the harness, each object with the metadata mcpblob's S3 store
// writes (Content-Type, the SHA-256 as x-amz-meta-sha256), so its listing
// reads them as its own. (MinIO's snowball upload, a tar it extracts,
// is MinIO's own extension: SeaweedFS takes one PUT per object.)
func p10SeedS3(ctx context.Context, rig *s3Rig, n int) error {
	keys := make(chan string, 1024)
	go func() {
		defer close(keys)
		for i := range n {
			keys <- p10Key(p10Big, i)
		}
		for i := range p10Page {
			keys <- p10Key(p10Small, i)
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, p10Writers)
	for range p10Writers {
		go func() {
			var err error
			for key := range keys {
				if err == nil {
					if err = p10Put(ctx, rig, key); err != nil {
						cancel()
					}
				}
			}
			errs <- err
		}()
	}
	var first error
	for range p10Writers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// p10Writers is how many PUTs p10SeedS3 keeps in flight.
const p10Writers = 32

// p10Put stores blob key with mcpblob's metadata through the harness's
// client.
func p10Put(ctx context.Context, rig *s3Rig, key string) error {
	body := p10Content(key)
	sum := sha256.Sum256(body)
	_, err := rig.client.PutObject(ctx, rig.bucket, key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{
		ContentType:  "text/plain",
		UserMetadata: map[string]string{"sha256": hex.EncodeToString(sum[:])},
	})
	return err
}
