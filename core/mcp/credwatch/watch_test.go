package credwatch

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestWatch(t *testing.T) {
	if w := New(time.Time{}, nil, time.Millisecond); w.C() != nil || w.Ended() != nil {
		t.Fatal("a credential nothing can end has a timer or ended")
	}
	w := New(time.Now().Add(50*time.Millisecond), nil, time.Hour)
	defer w.Stop()
	if w.Ended() != nil {
		t.Fatal("ended before its expiry")
	}
	<-w.C()
	if e := w.Fired(); e == nil || !strings.Contains(string(mustJSON(t, e.Data)), ReasonExpired) {
		t.Fatalf("at the expiry: %v; want %s", e, ReasonExpired)
	}
	ok := true
	r := New(time.Now().Add(time.Hour), func() bool { return ok }, 10*time.Millisecond)
	defer r.Stop()
	for range 3 { // the revocation check comes round every interval, not at the expiry
		<-r.C()
		if e := r.Fired(); e != nil {
			t.Fatalf("a valid credential ended: %v", e)
		}
	}
	ok = false
	<-r.C()
	if e := r.Fired(); e == nil || !strings.Contains(string(mustJSON(t, e.Data)), ReasonRevoked) {
		t.Fatalf("after revocation: %v; want %s", e, ReasonRevoked)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
