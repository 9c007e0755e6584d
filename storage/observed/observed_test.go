package observed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/localfs"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

type seen struct {
	mu  sync.Mutex
	ops []string
}

func (s *seen) observe(_ context.Context, op, outcome string, _ time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, op+":"+outcome)
}

func (s *seen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.ops, " ")
}

func openLocal(t *testing.T) *localfs.Store {
	t.Helper()
	st, err := localfs.Open(t.TempDir(), localfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestWrapKeepsInterfaces: the wrapper claims exactly when the backend
// does (a lost Claimer would make single-use links per node).
func TestWrapKeepsInterfaces(t *testing.T) {
	b := Wrap(openLocal(t), func(context.Context, string, string, time.Duration) {})
	if _, ok := b.(storage.Claimer); !ok {
		t.Error("a localfs store wrapped is no Claimer")
	}
	if _, ok := b.(storage.Presigner); ok {
		t.Error("a localfs store wrapped presigns")
	}
	plain := Wrap(struct{ storage.Backend }{openLocal(t)}, func(context.Context, string, string, time.Duration) {})
	if _, ok := plain.(storage.Claimer); ok {
		t.Error("a backend without claims gained them")
	}
}

// TestOutcomes: each operation is observed once with its outcome.
func TestOutcomes(t *testing.T) {
	var s seen
	b := Wrap(openLocal(t), s.observe)
	ctx := context.Background()
	if _, err := b.Stat(ctx, "missing"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatal(err)
	}
	for i, commit := range []bool{true, false} {
		w, err := b.Create(ctx, fmt.Sprintf("k%d", i), storage.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, "abc")
		if commit {
			_, err = w.Commit(ctx)
		} else {
			err = w.Abort(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	c := storage.Claim{Set: "s", Name: "n", Expires: time.Now().Add(time.Hour)}
	cl := b.(storage.Claimer)
	cl.Claim(ctx, c)
	cl.Claim(ctx, c)
	cl.Claimed(ctx, c)
	want := "stat:not_found put:ok put:aborted claim:ok claim:exists claimed:ok"
	if got := s.String(); got != want {
		t.Errorf("observed %q, want %q", got, want)
	}
}

// TestConformance: the wrapped store passes the storage suite.
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Backend {
		return Wrap(openLocal(t), func(context.Context, string, string, time.Duration) {})
	})
}
