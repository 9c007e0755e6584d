package files

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

func TestParseURI(t *testing.T) {
	good := map[string][2]string{
		"mcp-file://example.com/ABC234":                 {"example.com", "ABC234"},
		"mcp-file://127.0.0.1:8080/x_y-z":               {"127.0.0.1:8080", "x_y-z"},
		"mcp-file://[::1]:9/" + strings.Repeat("a", 64): {"[::1]:9", strings.Repeat("a", 64)},
	}
	for in, want := range good {
		server, id, err := ParseURI(in)
		if err != nil || server != want[0] || id != want[1] {
			t.Errorf("ParseURI(%q) = %q, %q, %v; want %q, %q", in, server, id, err, want[0], want[1])
		}
	}
	for _, in := range []string{"", "mcp-file:", "mcp-file://", "mcp-file://host", "mcp-file://host/",
		"mcp-file:///id", "MCP-FILE://host/id", "mcp-file://host/id?x=1", "mcp-file://host/id#f",
		"mcp-file://host/a/b", "mcp-file://us@er/id", "mcp-file://host/%41", "data:,x",
		"mcp-file://host/" + strings.Repeat("a", 65), "mcp-file://ho_st/id"} {
		if _, _, err := ParseURI(in); !errors.Is(err, ErrBadURI) {
			t.Errorf("ParseURI(%q) = %v; want ErrBadURI", in, err)
		}
	}
	if got := URI("h:1", "ID"); got != "mcp-file://h:1/ID" {
		t.Errorf("URI = %q", got)
	}
	if !IsURI("MCP-File:x") || IsURI("data:,x") || IsURI("mcp-file") {
		t.Error("IsURI misreads the scheme")
	}
}

func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"mcp-file://h/id", "mcp-file://[::1]:80/a_b", "mcp-file://h/", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		server, id, err := ParseURI(s)
		if err != nil {
			return
		}
		if URI(server, id) != s {
			t.Fatalf("ParseURI(%q) = %q, %q: does not round-trip", s, server, id)
		}
		if strings.ContainsAny(server+id, "/?#%@ ") {
			t.Fatalf("ParseURI(%q) let a delimiter through: %q, %q", s, server, id)
		}
	})
}

func TestParseDigest(t *testing.T) {
	sum := sha256.Sum256([]byte("hello"))
	wire := base64.RawURLEncoding.EncodeToString(sum[:])
	got, err := ParseDigest(Digest{Algorithm: "sha-256", Value: wire})
	if err != nil || got != hex.EncodeToString(sum[:]) {
		t.Fatalf("ParseDigest = %q, %v", got, err)
	}
	if w := WireDigest(got); w == nil || w.Value != wire {
		t.Fatalf("WireDigest = %+v; want %q", w, wire)
	}
	for d, reason := range map[Digest]string{
		{Algorithm: "md5", Value: wire}:                           "unsupportedDigestAlgorithm",
		{Algorithm: "sha-256", Value: wire + "="}:                 "invalidDigest",
		{Algorithm: "sha-256", Value: wire[:40]}:                  "invalidDigest",
		{Algorithm: "sha-256", Value: hex.EncodeToString(sum[:])}: "invalidDigest",
	} {
		var de *DigestError
		if _, err := ParseDigest(d); !errors.As(err, &de) || de.Reason != reason {
			t.Errorf("ParseDigest(%+v) = %v; want reason %s", d, err, reason)
		}
	}
}

func FuzzParseDigest(f *testing.F) {
	f.Add("sha-256", "LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ")
	f.Fuzz(func(t *testing.T, alg, value string) {
		h, err := ParseDigest(Digest{Algorithm: alg, Value: value})
		if err == nil && (len(h) != 64 || WireDigest(h).Value != value) {
			t.Fatalf("ParseDigest(%q, %q) = %q: not a round-tripping sha-256", alg, value, h)
		}
	})
}

func TestCheck(t *testing.T) {
	f := &File{Size: 5, Digest: strings.Repeat("a", 64), MaxSize: 10}
	for st, want := range map[Stored]string{
		{Size: 5, SHA256: strings.Repeat("a", 64)}:  "",
		{Size: 11, SHA256: strings.Repeat("a", 64)}: "maxSizeExceeded",
		{Size: 4, SHA256: strings.Repeat("a", 64)}:  "sizeMismatch",
		{Size: 5, SHA256: strings.Repeat("b", 64)}:  "digestMismatch",
	} {
		if got := f.Check(st); got != want {
			t.Errorf("Check(%+v) = %q; want %q", st, got, want)
		}
	}
}

func TestStoreOwnerAndCAS(t *testing.T) {
	ctx := context.Background()
	s := NewStore(new(storage.MemRecords))
	f := &File{ID: NewID(), Owner: "alice", Size: -1, State: Prepared}
	if err := s.Create(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, &File{ID: f.ID, Owner: "bob"}); !errors.Is(err, storage.ErrPreconditionFailed) {
		t.Fatalf("second Create of one id = %v; want ErrPreconditionFailed", err)
	}
	if _, err := s.Get(ctx, "bob", f.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bob's Get of alice's file = %v; want ErrNotFound", err)
	}
	if _, err := s.Get(ctx, "alice", "../x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a malformed id = %v; want ErrNotFound", err)
	}
	// Concurrent updates each add one: none is lost.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := s.Update(ctx, "alice", f.ID, func(f *File) error { f.Size++; return nil }); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.Get(ctx, "alice", f.ID)
	if err != nil || got.Size != 3 {
		t.Fatalf("after 4 concurrent increments of -1: %+v, %v; want size 3", got, err)
	}
}

func TestClaimReplay(t *testing.T) {
	ctx := context.Background()
	s := NewStore(new(storage.MemRecords))
	if err := s.Create(ctx, &File{ID: "A", Owner: "alice"}); err != nil { // a key binds a file that exists
		t.Fatal(err)
	}
	if id, err := s.Claim(ctx, "alice", "k1", "A"); err != nil || id != "A" {
		t.Fatalf("first Claim = %q, %v", id, err)
	}
	if id, err := s.Claim(ctx, "alice", "k1", "B"); err != nil || id != "A" {
		t.Fatalf("replayed Claim = %q, %v; want A", id, err)
	}
	if id, err := s.Claim(ctx, "bob", "k1", "C"); err != nil || id != "C" {
		t.Fatalf("bob's Claim of the same key = %q, %v; want his own C", id, err)
	}
}

// TestSweep: records of files without their bytes (prepared, uploading,
// failed) go once expired, with their idempotency keys (a replay then
// binds the key anew); usable files and unexpired records stay; a record
// changed between the sweeper's read and its mark lives on.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	s := NewStore(new(storage.MemRecords))
	now := time.Now()
	past, future := now.Add(-time.Minute), now.Add(time.Hour)
	mk := func(id string, st State, exp time.Time, idem string) {
		if err := s.Create(ctx, &File{ID: id, Owner: "al", State: st, Expires: exp, IdempotencyKey: idem}); err != nil {
			t.Fatal(err)
		}
		if idem != "" {
			if _, err := s.Claim(ctx, "al", idem, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("PREP", Prepared, past, "k1")
	mk("UPING", Uploading, past, "")
	mk("FAIL", Failed, past, "")
	mk("FRESH", Prepared, future, "")
	mk("DONE", Uploaded, past, "")
	mk("COMPL", Completed, time.Time{}, "")
	n, err := s.Sweep(ctx, now)
	if err != nil || n != 3 {
		t.Fatalf("Sweep = %d, %v; want 3 removed", n, err)
	}
	for id, want := range map[string]bool{"PREP": false, "UPING": false, "FAIL": false, "FRESH": true, "DONE": true, "COMPL": true} {
		if _, err := s.Get(ctx, "al", id); (err == nil) != want {
			t.Errorf("after the sweep, file %s: %v; want kept %v", id, err, want)
		}
	}
	if got, err := s.Claim(ctx, "al", "k1", "NEW"); err != nil || got != "NEW" {
		t.Errorf("replaying the swept file's key: %q, %v; want the key bound to the new file", got, err)
	}
	if n, err := s.Sweep(ctx, now); err != nil || n != 0 {
		t.Errorf("second sweep = %d, %v", n, err)
	}
	// A record that changed after the sweeper read it is not swept.
	mk("RACE", Prepared, past, "")
	f, _ := s.Lookup(ctx, "RACE")
	if _, err := s.Update(ctx, "al", "RACE", func(f *File) error { f.State = Uploaded; return nil }); err != nil {
		t.Fatal(err)
	}
	f.Expired = true
	if err := s.save(ctx, f); !errors.Is(err, storage.ErrPreconditionFailed) {
		t.Fatalf("marking a stale read expired: %v; want ErrPreconditionFailed", err)
	}
}
