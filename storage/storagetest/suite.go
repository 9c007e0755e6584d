package storagetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// Suite configures a conformance run. Only New is required.
type Suite struct {
	// New returns a new, empty backend. The suite closes it when the
	// subtest that asked for it ends.
	New func(t *testing.T) storage.Backend
	// PartSize is the size of the backend's upload parts, if it has any:
	// round trips, aborts, limits and concurrent writers then cross part
	// boundaries. Keep it small (S3's minimum is 5 MiB). 0 tests sizes
	// around 1 MiB instead.
	PartSize int64
	// LocalFiles requires Open to return an *os.File without a range and a
	// *storage.LimitedFile with one (the sendfile contract of local stores).
	LocalFiles bool
	// LargeSize is the size of RunLarge's stream. Default 1 GiB.
	LargeSize int64
	// MaxHeapGrowth bounds the heap growth during RunLarge's upload.
	// Default 64 MiB.
	MaxHeapGrowth uint64
}

// Run runs the conformance suite with default settings.
func Run(t *testing.T, newBackend func(t *testing.T) storage.Backend) {
	Suite{New: newBackend}.Run(t)
}

// Run runs every conformance test except the large stream.
func (s Suite) Run(t *testing.T) {
	tests := []struct {
		name string
		fn   func(*testing.T, storage.Backend)
	}{
		{"RoundTrip", s.testRoundTrip},
		{"Metadata", s.testMetadata},
		{"Ranges", s.testRanges},
		{"List", s.testList},
		{"ListPrefix", s.testListPrefix},
		{"Overwrite", s.testOverwrite},
		{"ConcurrentWriters", s.testConcurrentWriters},
		{"ConcurrentIfNotExists", s.testConcurrentIfNotExists},
		{"Abort", s.testAbort},
		{"ClosedWriter", s.testClosedWriter},
		{"InvalidKeys", s.testInvalidKeys},
		{"MaxSize", s.testMaxSize},
		{"SizeMismatch", s.testSizeMismatch},
		{"IfNotExists", s.testIfNotExists},
		{"Delete", s.testDelete},
		{"Missing", s.testMissing},
		{"Context", s.testContext},
		{"Claims", s.testClaims},
		{"ConcurrentClaims", s.testConcurrentClaims},
		{"Records", s.testRecords},
		{"ConcurrentRecords", s.testConcurrentRecords},
		{"Staged", s.testStaged},
		{"PathConflict", s.testPathConflict},
		{"Filenames", s.testFilenames},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, s.backend(t))
		})
	}
}

func (s Suite) backend(t *testing.T) storage.Backend {
	t.Helper()
	b := s.New(t)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// partSize is the part size that boundary tests work around.
func (s Suite) partSize() int64 {
	if s.PartSize > 0 {
		return s.PartSize
	}
	return 1 << 20
}

// content returns n deterministic bytes, different for each seed.
func content(seed uint64, n int64) []byte { return Bytes(seed, 0, n) }

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// chunkSizes are the Write sizes put cycles through, chosen so that writes
// straddle part boundaries at odd offsets.
var chunkSizes = []int{1, 7, 4096, 64<<10 + 5, 1<<20 + 3}

// writeAll writes data to w in chunks of varying sizes.
func writeAll(w storage.Writer, data []byte) error {
	for i := 0; len(data) > 0; i++ {
		n := min(chunkSizes[i%len(chunkSizes)], len(data))
		m, err := w.Write(data[:n])
		if err != nil {
			return err
		}
		if m != n {
			return fmt.Errorf("write wrote %d of %d bytes without an error", m, n)
		}
		data = data[n:]
	}
	return nil
}

// put stores data under key and checks the Info that Commit returns.
func put(t *testing.T, b storage.Backend, key string, data []byte, opts storage.CreateOptions) storage.Info {
	t.Helper()
	ctx := t.Context()
	began := time.Now()
	w, err := b.Create(ctx, key, opts)
	if err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	defer w.Abort(ctx)
	if err := writeAll(w, data); err != nil {
		t.Fatalf("Write(%q): %v", key, err)
	}
	if got := w.Written(); got != int64(len(data)) {
		t.Errorf("Written() = %d, want %d", got, len(data))
	}
	info, err := w.Commit(ctx)
	if err != nil {
		t.Fatalf("Commit(%q, %d bytes): %v", key, len(data), err)
	}
	noteWrite(info, began)
	checkInfo(t, "Commit", info, key, data, opts)
	return info
}

// commitWindows holds, for each Info a Commit returned in put (and in
// RunLarge), when the write began and when Commit returned. A remote store
// stamps its own ModTime at some moment in between (SeaweedFS's S3, to the
// second, while it took the request; the writer's Commit stamps when the
// request returned), so under load a Stat may differ from Commit's ModTime
// by as long as the request took: a single PUT of 0 bytes that took 8 s in
// a loaded -race run did.
var commitWindows sync.Map // commitKey → writeWindow

type writeWindow struct{ began, ended time.Time }

// noteWrite records the window of the write that began at began and whose
// Commit just returned info.
func noteWrite(info storage.Info, began time.Time) {
	commitWindows.Store(commitKey(info), writeWindow{began, time.Now()})
}

// commitKey names one Commit's Info: Commit's ModTime is a clock reading
// to the nanosecond, so no two commits share it.
func commitKey(i storage.Info) string {
	return i.Key + "\x00" + i.ETag + "\x00" + strconv.FormatInt(i.ModTime.UnixNano(), 10)
}

// checkInfo checks every field of info against what was written.
func checkInfo(t *testing.T, op string, info storage.Info, key string, data []byte, opts storage.CreateOptions) {
	t.Helper()
	mediaType := opts.MediaType
	if mediaType == "" {
		mediaType = storage.DefaultMediaType
	}
	if info.Key != key {
		t.Errorf("%s: Key = %q, want %q", op, info.Key, key)
	}
	if info.Size != int64(len(data)) {
		t.Errorf("%s(%q): Size = %d, want %d", op, key, info.Size, len(data))
	}
	if want := sum(data); info.SHA256 != want {
		t.Errorf("%s(%q): SHA256 = %q, want %q", op, key, info.SHA256, want)
	}
	if info.MediaType != mediaType {
		t.Errorf("%s(%q): MediaType = %q, want %q", op, key, info.MediaType, mediaType)
	}
	if info.Filename != opts.Filename {
		t.Errorf("%s(%q): Filename = %q, want %q", op, key, info.Filename, opts.Filename)
	}
	if want := expiresMillis(opts.Expires); expiresMillis(info.Expires) != want {
		t.Errorf("%s(%q): Expires = %v, want %v", op, key, info.Expires, opts.Expires)
	}
	if len(info.ETag) < 3 || info.ETag[0] != '"' || info.ETag[len(info.ETag)-1] != '"' {
		t.Errorf("%s(%q): ETag = %q, want a quoted strong validator", op, key, info.ETag)
	}
	if d := time.Since(info.ModTime); d < -time.Minute || d > time.Hour {
		t.Errorf("%s(%q): ModTime = %v, not recent", op, key, info.ModTime)
	}
}

// expiresMillis is an expiry as backends keep it (to the millisecond), 0
// for none.
func expiresMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// sameInfo checks that two Infos of one version agree. Their ModTimes
// agree to within 2 s (a store keeps whole seconds), or, when want is what
// put's Commit returned, got's lies within 2 s of that write.
func sameInfo(t *testing.T, op string, got, want storage.Info) {
	t.Helper()
	if got.Key != want.Key || got.Size != want.Size || got.SHA256 != want.SHA256 ||
		got.MediaType != want.MediaType || got.Filename != want.Filename || got.ETag != want.ETag ||
		expiresMillis(got.Expires) != expiresMillis(want.Expires) {
		t.Errorf("%s: Info = %+v, want %+v", op, got, want)
	}
	from, to := want.ModTime, want.ModTime
	if w, ok := commitWindows.Load(commitKey(want)); ok {
		from, to = w.(writeWindow).began, w.(writeWindow).ended
	}
	if got.ModTime.Before(from.Add(-2*time.Second)) || got.ModTime.After(to.Add(2*time.Second)) {
		t.Errorf("%s(%q): ModTime = %v, want within 2 s of %v … %v", op, got.Key, got.ModTime, from, to)
	}
}

// read returns the bytes Open gives for key and rng, checking the concrete
// type local stores must return.
func (s Suite) read(t *testing.T, b storage.Backend, key string, rng *storage.Range) ([]byte, storage.Info, error) {
	t.Helper()
	rc, info, err := b.Open(t.Context(), key, rng)
	if err != nil {
		return nil, info, err
	}
	defer rc.Close()
	if s.LocalFiles {
		switch rc.(type) {
		case *os.File:
			if rng != nil {
				t.Errorf("Open(%q, %+v) returned an *os.File, want a *storage.LimitedFile", key, *rng)
			}
		case *storage.LimitedFile:
			if rng == nil {
				t.Errorf("Open(%q, nil) returned a *storage.LimitedFile, want an *os.File", key)
			}
		default:
			t.Errorf("Open(%q) returned a %T, want *os.File or *storage.LimitedFile", key, rc)
		}
	}
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, info, fmt.Errorf("reading %q: %w", key, err)
	}
	return data, info, nil
}

// mustRead returns the whole object and checks it against want.
func (s Suite) mustRead(t *testing.T, b storage.Backend, key string, want []byte) storage.Info {
	t.Helper()
	got, info, err := s.read(t, b, key, nil)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Open(%q) read %d bytes (sha256 %s), want %d (sha256 %s)", key, len(got), sum(got), len(want), sum(want))
	}
	return info
}

func mustStat(t *testing.T, b storage.Backend, key string) storage.Info {
	t.Helper()
	info, err := b.Stat(t.Context(), key)
	if err != nil {
		t.Fatalf("Stat(%q): %v", key, err)
	}
	return info
}

// wantErr fails unless errors.Is(err, target).
func wantErr(t *testing.T, op string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error = %v, want %v", op, err, target)
	}
}

// absent checks that key is not visible through Stat, Open or List.
func absent(t *testing.T, b storage.Backend, key string) {
	t.Helper()
	ctx := t.Context()
	_, err := b.Stat(ctx, key)
	wantErr(t, "Stat("+strconv.Quote(key)+")", err, storage.ErrNotFound)
	if rc, _, err := b.Open(ctx, key, nil); err == nil {
		rc.Close()
		t.Errorf("Open(%q) succeeded, want ErrNotFound", key)
	} else {
		wantErr(t, "Open("+strconv.Quote(key)+")", err, storage.ErrNotFound)
	}
	if slices.Contains(listKeys(t, b, "", 0), key) {
		t.Errorf("List shows %q", key)
	}
}

// listAll pages through List and returns every Info.
func listAll(t *testing.T, b storage.Backend, prefix string, limit int) []storage.Info {
	t.Helper()
	var all []storage.Info
	cur := ""
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatalf("List(%q, limit %d) never ends", prefix, limit)
		}
		page, err := b.List(t.Context(), prefix, cur, limit)
		if err != nil {
			t.Fatalf("List(%q, %q, %d): %v", prefix, cur, limit, err)
		}
		if limit > 0 && len(page.Items) > limit {
			t.Errorf("List(%q, limit %d) returned %d items", prefix, limit, len(page.Items))
		}
		all = append(all, page.Items...)
		if page.NextCursor == "" {
			return all
		}
		if len(page.Items) == 0 {
			t.Fatalf("List(%q, limit %d) returned an empty page with a cursor", prefix, limit)
		}
		cur = page.NextCursor
	}
}

func listKeys(t *testing.T, b storage.Backend, prefix string, limit int) []string {
	t.Helper()
	var keys []string
	for _, info := range listAll(t, b, prefix, limit) {
		keys = append(keys, info.Key)
	}
	return keys
}

func (s Suite) testRoundTrip(t *testing.T, b storage.Backend) {
	p := s.partSize()
	sizes := []int64{0, 1, 2, 1000, 64<<10 + 1, p - 1, p, p + 1, 2 * p, 2*p + 1}
	for i, n := range sizes {
		for _, known := range []bool{false, true} {
			key := fmt.Sprintf("round/%d-%v", n, known)
			data := content(uint64(i), n)
			opts := storage.CreateOptions{}
			if known {
				opts.Size = n
				// An expiry, on the single PUT and on the multipart path.
				opts.Expires = time.Now().Add(time.Duration(i+1) * time.Hour)
			}
			info := put(t, b, key, data, opts)
			sameInfo(t, "Stat", mustStat(t, b, key), info)
			sameInfo(t, "Open", s.mustRead(t, b, key, data), info)
		}
	}
	infos := listAll(t, b, "round/", 0)
	if len(infos) != 2*len(sizes) {
		t.Fatalf("List found %d objects, want %d", len(infos), 2*len(sizes))
	}
	for _, info := range infos {
		sameInfo(t, "List", info, mustStat(t, b, info.Key))
	}
}

func (s Suite) testMetadata(t *testing.T, b storage.Backend) {
	cases := []storage.CreateOptions{
		{MediaType: "application/pdf", Filename: "report.pdf"},
		{MediaType: "text/plain; charset=utf-8", Filename: "résumé final (1).txt"},
		{Filename: `quote " and ; semicolon, 日本語.bin`},
		{MediaType: "image/png"},
		{MediaType: "image/png", Expires: time.Now().Add(90 * time.Minute)},
	}
	for i, opts := range cases {
		key := fmt.Sprintf("meta/%d", i)
		data := content(uint64(i), 100)
		info := put(t, b, key, data, opts)
		sameInfo(t, "Stat", mustStat(t, b, key), info)
		sameInfo(t, "Open", s.mustRead(t, b, key, data), info)
		_, rinfo, err := s.read(t, b, key, &storage.Range{Offset: 10, Length: 5})
		if err != nil {
			t.Fatalf("Open(%q, range): %v", key, err)
		}
		sameInfo(t, "Open with a range", rinfo, info)
		items := listAll(t, b, key, 0)
		if len(items) != 1 {
			t.Fatalf("List(%q) = %d items, want 1", key, len(items))
		}
		sameInfo(t, "List", items[0], info)
	}
	// Keys with spaces, unicode and punctuation that URLs and file systems
	// treat specially.
	for i, key := range []string{"with space/and+plus", "ünïcödé/日本語.txt", "a%20b", "semi;colon=eq&amp?q#frag", "x.", "..x/y..", ".hidden/.file"} {
		data := content(uint64(i+100), 10)
		put(t, b, key, data, storage.CreateOptions{})
		s.mustRead(t, b, key, data)
		if keys := listKeys(t, b, key, 0); !slices.Contains(keys, key) {
			t.Errorf("List(%q) = %q, want it to contain the key", key, keys)
		}
	}
}

func (s Suite) testRanges(t *testing.T, b storage.Backend) {
	const n = 10000
	data := content(1, n)
	info := put(t, b, "r", data, storage.CreateOptions{})
	cases := []struct {
		rng  storage.Range
		want []byte
	}{
		{storage.Range{Offset: 0, Length: -1}, data},
		{storage.Range{Offset: 0, Length: 10}, data[:10]},
		{storage.Range{Offset: 0, Length: n}, data},
		{storage.Range{Offset: 4000, Length: 1234}, data[4000:5234]},
		{storage.Range{Offset: 9990, Length: -1}, data[9990:]},
		{storage.Range{Offset: 9990, Length: 100}, data[9990:]},
		{storage.Range{Offset: n - 1, Length: 1}, data[n-1:]},
		{storage.Range{Offset: 0, Length: 1 << 40}, data},
		{storage.Range{Offset: 5, Length: 0}, nil},
	}
	for _, c := range cases {
		got, rinfo, err := s.read(t, b, "r", &c.rng)
		if err != nil {
			t.Errorf("Open(%+v): %v", c.rng, err)
			continue
		}
		if !bytes.Equal(got, c.want) {
			t.Errorf("Open(%+v) read %d bytes, want %d (%x... vs %x...)", c.rng, len(got), len(c.want), head(got), head(c.want))
		}
		sameInfo(t, fmt.Sprintf("Open(%+v)", c.rng), rinfo, info)
	}
	for _, rng := range []storage.Range{{Offset: n, Length: -1}, {Offset: n, Length: 1}, {Offset: n + 5000, Length: 10}, {Offset: 1 << 40, Length: -1}, {Offset: -1, Length: 5}} {
		if rc, _, err := b.Open(t.Context(), "r", &rng); err == nil {
			rc.Close()
			t.Errorf("Open(%+v) of %d bytes succeeded, want ErrInvalidRange", rng, n)
		} else {
			wantErr(t, fmt.Sprintf("Open(%+v)", rng), err, storage.ErrInvalidRange)
		}
	}

	// Every range of an empty object selects nothing, without an error.
	put(t, b, "empty", nil, storage.CreateOptions{})
	for _, rng := range []storage.Range{{Offset: 0, Length: -1}, {Offset: 0, Length: 10}, {Offset: 0, Length: 0}} {
		got, rinfo, err := s.read(t, b, "empty", &rng)
		if err != nil || len(got) != 0 || rinfo.Size != 0 {
			t.Errorf("Open(empty, %+v) = %d bytes, size %d, %v; want 0 bytes, no error", rng, len(got), rinfo.Size, err)
		}
	}
}

func head(b []byte) []byte { return b[:min(8, len(b))] }

// listFixture holds keys whose key order differs from a naive directory
// walk: '-' < '.' < '/' < '0'.
var listFixture = []string{
	"a-b", "a.txt", "a/b", "a/c/d", "a/c/e", "a0", "b", "dir/x1", "dir/x2", "dir2/y", "z/é", "zz",
}

func (s Suite) putFixture(t *testing.T, b storage.Backend) {
	for i, key := range listFixture {
		put(t, b, key, content(uint64(i), int64(i)), storage.CreateOptions{Filename: key})
	}
}

func (s Suite) testList(t *testing.T, b storage.Backend) {
	page, err := b.List(t.Context(), "", "", 0)
	if err != nil || len(page.Items) != 0 || page.NextCursor != "" {
		t.Fatalf("List of an empty store = %+v, %v", page, err)
	}
	s.putFixture(t, b)
	want := slices.Clone(listFixture)
	slices.Sort(want)
	for _, limit := range []int{0, 1, 2, 3, 5, len(want) - 1, len(want), len(want) + 1, 1000} {
		if got := listKeys(t, b, "", limit); !slices.Equal(got, want) {
			t.Errorf("List(limit %d) = %q, want %q", limit, got, want)
		}
	}
	// Items carry full metadata.
	for i, info := range listAll(t, b, "", 4) {
		sameInfo(t, "List", info, mustStat(t, b, info.Key))
		if info.Filename != info.Key {
			t.Errorf("List item %d: Filename = %q, want %q", i, info.Filename, info.Key)
		}
	}
	// A full page is followed by a cursor; the last page has none.
	page, err = b.List(t.Context(), "", "", len(want))
	if err != nil || len(page.Items) != len(want) || page.NextCursor != "" {
		t.Errorf("List(limit %d) = %d items, cursor %q, %v; want all items and no cursor", len(want), len(page.Items), page.NextCursor, err)
	}
	page, err = b.List(t.Context(), "", "", 2)
	if err != nil || len(page.Items) != 2 || page.NextCursor == "" {
		t.Fatalf("List(limit 2) = %+v, %v", page, err)
	}
	// A cursor stays valid after more objects are added: the listing goes on
	// after the last key returned.
	put(t, b, "0first", nil, storage.CreateOptions{})
	put(t, b, "zzz", nil, storage.CreateOptions{})
	rest := listAllFrom(t, b, "", page.NextCursor, 3)
	if wantRest := append(slices.Clone(want[2:]), "zzz"); !slices.Equal(rest, wantRest) {
		t.Errorf("List after cursor = %q, want %q", rest, wantRest)
	}

	for _, c := range []string{"!!!", "%%", "not base64 at all", "YQ==", "Li4v"} {
		_, err := b.List(t.Context(), "", c, 0)
		wantErr(t, fmt.Sprintf("List(cursor %q)", c), err, storage.ErrInvalidCursor)
	}
}

func listAllFrom(t *testing.T, b storage.Backend, prefix, cur string, limit int) []string {
	t.Helper()
	var keys []string
	for range 1000 {
		page, err := b.List(t.Context(), prefix, cur, limit)
		if err != nil {
			t.Fatalf("List(%q, %q, %d): %v", prefix, cur, limit, err)
		}
		for _, info := range page.Items {
			keys = append(keys, info.Key)
		}
		if page.NextCursor == "" {
			return keys
		}
		cur = page.NextCursor
	}
	t.Fatalf("List(%q) never ends", prefix)
	return nil
}

func (s Suite) testListPrefix(t *testing.T, b storage.Backend) {
	s.putFixture(t, b)
	cases := map[string][]string{
		"a":      {"a-b", "a.txt", "a/b", "a/c/d", "a/c/e", "a0"},
		"a/":     {"a/b", "a/c/d", "a/c/e"},
		"a/c":    {"a/c/d", "a/c/e"},
		"a/c/":   {"a/c/d", "a/c/e"},
		"a/c/d":  {"a/c/d"},
		"a.":     {"a.txt"},
		"dir":    {"dir/x1", "dir/x2", "dir2/y"},
		"dir/":   {"dir/x1", "dir/x2"},
		"dir/x":  {"dir/x1", "dir/x2"},
		"z":      {"z/é", "zz"},
		"z/é":    {"z/é"},
		"nope":   nil,
		"nope/":  nil,
		"a/b/":   nil,
		"b/c/":   nil,
		"../":    nil,
		"a//":    nil,
		".mcp":   nil,
		"/":      nil,
		"\x00":   nil,
		"a/c/d/": nil,
	}
	for prefix, want := range cases {
		for _, limit := range []int{0, 1, 2} {
			if got := listKeys(t, b, prefix, limit); !slices.Equal(got, want) {
				t.Errorf("List(%q, limit %d) = %q, want %q", prefix, limit, got, want)
			}
		}
	}
}

func (s Suite) testOverwrite(t *testing.T, b storage.Backend) {
	v1 := content(1, 3000)
	v2 := content(2, s.partSize()+10)
	v3 := content(3, 5)
	put(t, b, "k", v1, storage.CreateOptions{MediaType: "text/plain", Filename: "one.txt"})
	info := put(t, b, "k", v2, storage.CreateOptions{MediaType: "application/pdf", Filename: "two.pdf"})
	sameInfo(t, "Stat after overwrite", mustStat(t, b, "k"), info)
	sameInfo(t, "Open after overwrite", s.mustRead(t, b, "k", v2), info)
	info = put(t, b, "k", v3, storage.CreateOptions{})
	sameInfo(t, "Stat after second overwrite", mustStat(t, b, "k"), info)
	s.mustRead(t, b, "k", v3)
	if keys := listKeys(t, b, "", 0); !slices.Equal(keys, []string{"k"}) {
		t.Errorf("List = %q, want [k]", keys)
	}
}

// testConcurrentWriters races writers of distinct contents to one key while
// readers check that every read is one whole version with its own metadata.
func (s Suite) testConcurrentWriters(t *testing.T, b storage.Backend) {
	const writers, rounds = 6, 2
	size := s.partSize() + 1
	if s.PartSize == 0 {
		size = 256<<10 + 1
	}
	valid := map[string]bool{}
	var contents [][]byte
	for i := range writers * rounds {
		c := content(uint64(1000+i), size)
		contents = append(contents, c)
		valid[sum(c)] = true
	}

	stop := make(chan struct{})
	var readers sync.WaitGroup
	var reads int
	readers.Go(func() { reads = s.readRaceUntil(t, b, stop, valid) })

	for round := range rounds {
		s.raceWritersRound(t, b, round, contents[round*writers:(round+1)*writers])
	}
	close(stop)
	readers.Wait()
	t.Logf("%d consistent reads during commits", reads)
}

// readRaceUntil reads "race" until stop is closed, checking that every read
// is one of the valid contents with its own SHA256, and returns how many
// reads succeeded.
func (s Suite) readRaceUntil(t *testing.T, b storage.Backend, stop <-chan struct{}, valid map[string]bool) int {
	var reads int
	for {
		select {
		case <-stop:
			return reads
		default:
		}
		got, info, err := s.read(t, b, "race", nil)
		if errors.Is(err, storage.ErrNotFound) {
			runtime.Gosched()
			continue
		}
		if err != nil {
			t.Errorf("Open during commits: %v", err)
			return reads
		}
		reads++
		if h := sum(got); h != info.SHA256 || !valid[h] {
			t.Errorf("read during commits: %d bytes with sha256 %s, Info.SHA256 %s; not one writer's object", len(got), h, info.SHA256)
			return reads
		}
	}
}

// raceWritersRound has one writer per content in mine write "race" in
// chunks, then commit all together, and checks that exactly one writer's
// content and metadata won.
func (s Suite) raceWritersRound(t *testing.T, b storage.Backend, round int, mine [][]byte) {
	writers := len(mine)
	written := make(chan struct{})
	var wrote, done sync.WaitGroup
	errs := make([]error, writers)
	ctx := t.Context()
	wrote.Add(writers)
	for i := range writers {
		done.Go(func() { errs[i] = raceWriter(ctx, b, i, mine[i], &wrote, written) })
	}
	wrote.Wait()
	close(written)
	done.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("round %d writer %d: %v", round, i, err)
		}
	}
	info := mustStat(t, b, "race")
	winner := slices.IndexFunc(mine, func(c []byte) bool { return sum(c) == info.SHA256 })
	if winner < 0 {
		t.Fatalf("round %d: Stat.SHA256 %s is no writer's content", round, info.SHA256)
	}
	if info.Filename != strconv.Itoa(winner) {
		t.Errorf("round %d: Filename %q belongs to another writer than the content (%d)", round, info.Filename, winner)
	}
	s.mustRead(t, b, "race", mine[winner])
}

// raceWriter is writer i of a round: it writes data to "race" in chunks,
// marks wrote done (also on failure), and once written is closed commits.
func raceWriter(ctx context.Context, b storage.Backend, i int, data []byte, wrote *sync.WaitGroup, written <-chan struct{}) error {
	w, err := b.Create(ctx, "race", storage.CreateOptions{Filename: strconv.Itoa(i)})
	if err != nil {
		wrote.Done()
		return err
	}
	defer w.Abort(ctx)
	for len(data) > 0 {
		n := min(len(data), 64<<10+i)
		if _, err := w.Write(data[:n]); err != nil {
			wrote.Done()
			return err
		}
		data = data[n:]
		runtime.Gosched()
	}
	wrote.Done()
	<-written // commit all together
	_, err = w.Commit(ctx)
	return err
}

func (s Suite) testConcurrentIfNotExists(t *testing.T, b storage.Backend) {
	const writers = 4
	ctx := t.Context()
	errs := make([]error, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range writers {
		wg.Go(func() {
			w, err := b.Create(ctx, "once", storage.CreateOptions{IfNotExists: true})
			if err == nil {
				defer w.Abort(ctx)
				if _, err = w.Write(content(uint64(i), 1000)); err == nil {
					<-start
					_, err = w.Commit(ctx)
				}
			}
			errs[i] = err
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, storage.ErrExists):
			t.Errorf("writer %d: %v, want nil or ErrExists", i, err)
		}
	}
	if won != 1 {
		t.Errorf("%d IfNotExists writers committed, want exactly 1", won)
	}
}

func (s Suite) testAbort(t *testing.T, b storage.Backend) {
	ctx := t.Context()
	for _, n := range []int64{0, 1000, 2*s.partSize() + 1} {
		key := fmt.Sprintf("abort/%d", n)
		w, err := b.Create(ctx, key, storage.CreateOptions{})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		if err := writeAll(w, content(1, n)); err != nil {
			t.Fatalf("Write: %v", err)
		}
		if err := w.Abort(ctx); err != nil {
			t.Errorf("Abort: %v", err)
		}
		absent(t, b, key)
		wantErr(t, "Abort after Abort", w.Abort(ctx), storage.ErrClosed)
		_, err = w.Write([]byte("x"))
		wantErr(t, "Write after Abort", err, storage.ErrClosed)
		_, err = w.Commit(ctx)
		wantErr(t, "Commit after Abort", err, storage.ErrClosed)
		absent(t, b, key)
	}

	// Aborting an overwrite keeps the old version.
	old := content(7, 500)
	info := put(t, b, "abort/kept", old, storage.CreateOptions{Filename: "old"})
	w, err := b.Create(ctx, "abort/kept", storage.CreateOptions{Filename: "new"})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeAll(w, content(8, s.partSize()+1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	sameInfo(t, "Stat after aborted overwrite", mustStat(t, b, "abort/kept"), info)
	s.mustRead(t, b, "abort/kept", old)
	if keys := listKeys(t, b, "", 0); !slices.Equal(keys, []string{"abort/kept"}) {
		t.Errorf("List = %q, want [abort/kept]", keys)
	}
}

func (s Suite) testClosedWriter(t *testing.T, b storage.Backend) {
	ctx := t.Context()
	w, err := b.Create(ctx, "c", storage.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("hello"))
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = w.Write([]byte("x"))
	wantErr(t, "Write after Commit", err, storage.ErrClosed)
	_, err = w.Commit(ctx)
	wantErr(t, "Commit after Commit", err, storage.ErrClosed)
	wantErr(t, "Abort after Commit", w.Abort(ctx), storage.ErrClosed)
	if got := w.Written(); got != 5 {
		t.Errorf("Written after Commit = %d, want 5", got)
	}
	s.mustRead(t, b, "c", []byte("hello"))
}

// InvalidKeys lists keys every backend must reject with ErrInvalidKey.
var InvalidKeys = []string{
	"", ".", "..", "../x", "a/../b", "a/..", "./a", "a/./b", "/abs", "/", "a//b", "a/", "dir/",
	"a\x00b", "\x00", "a\x01b", "tab\tkey", "new\nline", "del\x7f", "back\\slash",
	"\xff\xfe", strings.Repeat("k", storage.MaxKeyLen+1), "dir/" + strings.Repeat("s", storage.MaxSegmentLen+1), storage.ReservedDir,
	storage.ReservedDir + "/tmp/x", storage.ReservedDir + "/meta/k",
}

func (s Suite) testInvalidKeys(t *testing.T, b storage.Backend) {
	ctx := t.Context()
	put(t, b, "valid", []byte("v"), storage.CreateOptions{})
	for _, key := range InvalidKeys {
		q := strconv.Quote(key)
		if len(q) > 40 {
			q = q[:40] + "…"
		}
		_, err := b.Stat(ctx, key)
		wantErr(t, "Stat("+q+")", err, storage.ErrInvalidKey)
		for _, rng := range []*storage.Range{nil, {Offset: 0, Length: 1}} {
			rc, _, err := b.Open(ctx, key, rng)
			if err == nil {
				rc.Close()
			}
			wantErr(t, "Open("+q+")", err, storage.ErrInvalidKey)
		}
		w, err := b.Create(ctx, key, storage.CreateOptions{})
		if err == nil {
			w.Write([]byte("x"))
			_, err = w.Commit(ctx)
			t.Errorf("Create(%s) succeeded", q)
		}
		wantErr(t, "Create("+q+")", err, storage.ErrInvalidKey)
		wantErr(t, "Delete("+q+")", b.Delete(ctx, key), storage.ErrInvalidKey)
	}
	// Nothing was created along the way.
	if keys := listKeys(t, b, "", 0); !slices.Equal(keys, []string{"valid"}) {
		t.Errorf("List = %q, want [valid]", keys)
	}
}

func (s Suite) testMaxSize(t *testing.T, b storage.Backend) {
	ctx := t.Context()
	// Exactly MaxSize bytes are fine.
	put(t, b, "max/exact", content(1, 100), storage.CreateOptions{MaxSize: 100})

	for _, c := range []struct {
		name     string
		max      int64
		data     []byte
		existing bool
	}{
		{"small", 100, content(2, 101), false},
		{"parts", 2 * s.partSize(), content(3, 2*s.partSize()+1), false},
		{"overwrite", 100, content(4, 1000), true},
	} {
		key := "max/" + c.name
		var old []byte
		if c.existing {
			old = content(5, 10)
			put(t, b, key, old, storage.CreateOptions{})
		}
		w, err := b.Create(ctx, key, storage.CreateOptions{MaxSize: c.max})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		err = writeAll(w, c.data)
		wantErr(t, c.name+": Write past MaxSize", err, storage.ErrTooLarge)
		if got := w.Written(); got > c.max {
			t.Errorf("%s: Written = %d, above MaxSize %d", c.name, got, c.max)
		}
		_, err = w.Write([]byte("x"))
		wantErr(t, c.name+": Write after ErrTooLarge", err, storage.ErrTooLarge)
		_, err = w.Commit(ctx)
		wantErr(t, c.name+": Commit after ErrTooLarge", err, storage.ErrTooLarge)
		w.Abort(ctx)
		if c.existing {
			s.mustRead(t, b, key, old)
		} else {
			absent(t, b, key)
		}
	}

	// A declared size above MaxSize fails no later than the first Write.
	w, err := b.Create(ctx, "max/declared", storage.CreateOptions{Size: 200, MaxSize: 100})
	if err == nil {
		_, err = w.Write(content(6, 200))
		w.Abort(ctx)
	}
	wantErr(t, "Size above MaxSize", err, storage.ErrTooLarge)
	absent(t, b, "max/declared")
}

func (s Suite) testSizeMismatch(t *testing.T, b storage.Backend) {
	ctx := t.Context()
	old := content(9, 10)
	for _, c := range []struct {
		name string
		size int64
		data []byte
	}{
		{"short", 100, content(1, 50)},
		{"long", 10, content(2, 11)},
		{"short-parts", 2*s.partSize() + 10, content(3, 2*s.partSize()+1)},
		{"long-parts", s.partSize() + 1, content(4, s.partSize()+2)},
	} {
		for _, existing := range []bool{false, true} {
			key := fmt.Sprintf("size/%s-%v", c.name, existing)
			if existing {
				put(t, b, key, old, storage.CreateOptions{})
			}
			w, err := b.Create(ctx, key, storage.CreateOptions{Size: c.size})
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if err = writeAll(w, c.data); err == nil {
				_, err = w.Commit(ctx)
			}
			wantErr(t, fmt.Sprintf("%s: %d bytes with Size %d", key, len(c.data), c.size), err, storage.ErrSizeMismatch)
			w.Abort(ctx)
			if existing {
				s.mustRead(t, b, key, old)
			} else {
				absent(t, b, key)
			}
		}
	}
}

func (s Suite) testIfNotExists(t *testing.T, b storage.Backend) {
	ctx := t.Context()
	first := content(1, 100)
	info := put(t, b, "ine", first, storage.CreateOptions{IfNotExists: true})
	for _, data := range [][]byte{content(2, 50), content(3, s.partSize()+1)} {
		w, err := b.Create(ctx, "ine", storage.CreateOptions{IfNotExists: true})
		if err == nil {
			if err = writeAll(w, data); err == nil {
				_, err = w.Commit(ctx)
			}
			w.Abort(ctx)
		}
		wantErr(t, "IfNotExists over an existing key", err, storage.ErrExists)
		sameInfo(t, "Stat", mustStat(t, b, "ine"), info)
		s.mustRead(t, b, "ine", first)
	}
	// After a Delete the key is free again.
	if err := b.Delete(ctx, "ine"); err != nil {
		t.Fatal(err)
	}
	put(t, b, "ine", content(4, 10), storage.CreateOptions{IfNotExists: true})
}

func (s Suite) testDelete(t *testing.T, b storage.Backend) {
	ctx := t.Context()
	put(t, b, "d/e/f", []byte("f"), storage.CreateOptions{})
	put(t, b, "d/e/g", []byte("g"), storage.CreateOptions{})
	if err := b.Delete(ctx, "d/e/f"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	absent(t, b, "d/e/f")
	wantErr(t, "Delete twice", b.Delete(ctx, "d/e/f"), storage.ErrNotFound)
	s.mustRead(t, b, "d/e/g", []byte("g"))
	if err := b.Delete(ctx, "d/e/g"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if keys := listKeys(t, b, "", 0); len(keys) != 0 {
		t.Errorf("List after deleting everything = %q", keys)
	}
	// The names that held other objects' folders are free again.
	put(t, b, "d", []byte("d"), storage.CreateOptions{})
	put(t, b, "d2/e", []byte("e"), storage.CreateOptions{})
	s.mustRead(t, b, "d", []byte("d"))
	if keys := listKeys(t, b, "", 0); !slices.Equal(keys, []string{"d", "d2/e"}) {
		t.Errorf("List = %q, want [d d2/e]", keys)
	}
}

func (s Suite) testMissing(t *testing.T, b storage.Backend) {
	ctx := t.Context()
	put(t, b, "present/x", []byte("x"), storage.CreateOptions{})
	for _, key := range []string{"missing", "present", "present/x/y", "present/y", "nested/deeply/missing"} {
		_, err := b.Stat(ctx, key)
		wantErr(t, "Stat("+key+")", err, storage.ErrNotFound)
		if err != nil && !strings.Contains(err.Error(), strconv.Quote(key)) {
			t.Errorf("Stat(%q) error %q does not name the key", key, err)
		}
		for _, rng := range []*storage.Range{nil, {Offset: 0, Length: 1}, {Offset: 100, Length: -1}} {
			rc, _, err := b.Open(ctx, key, rng)
			if err == nil {
				rc.Close()
			}
			wantErr(t, "Open("+key+")", err, storage.ErrNotFound)
		}
		wantErr(t, "Delete("+key+")", b.Delete(ctx, key), storage.ErrNotFound)
	}
}

func (s Suite) testContext(t *testing.T, b storage.Backend) {
	put(t, b, "ctx/old", []byte("old"), storage.CreateOptions{})
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := b.Stat(cancelled, "ctx/old")
	wantErr(t, "Stat with a cancelled context", err, context.Canceled)
	if rc, _, err := b.Open(cancelled, "ctx/old", nil); err == nil {
		rc.Close()
		t.Error("Open with a cancelled context succeeded")
	}
	if w, err := b.Create(cancelled, "ctx/new", storage.CreateOptions{}); err == nil {
		w.Abort(t.Context())
		t.Error("Create with a cancelled context succeeded")
	}
	wantErr(t, "Delete with a cancelled context", b.Delete(cancelled, "ctx/old"), context.Canceled)
	_, err = b.List(cancelled, "", "", 0)
	wantErr(t, "List with a cancelled context", err, context.Canceled)

	// Cancelling Create's context stops the write; nothing is stored.
	ctx, cancel := context.WithCancel(t.Context())
	w, err := b.Create(ctx, "ctx/new", storage.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(content(1, 100)); err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err = w.Write(content(2, 100))
	if err == nil {
		_, err = w.Commit(t.Context())
	}
	wantErr(t, "Write or Commit after cancelling Create's context", err, context.Canceled)
	w.Abort(t.Context())
	absent(t, b, "ctx/new")
	s.mustRead(t, b, "ctx/old", []byte("old"))
}
