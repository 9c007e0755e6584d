//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package guardbuf

import "testing"

func TestHeadTail(t *testing.T) {
	b, err := New(5000)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, n := range []int{0, 1, 100, 5000} {
		h, tl := b.Head(n), b.Tail(n)
		if len(h) != n || cap(h) != n || len(tl) != n || cap(tl) != n {
			t.Fatalf("n=%d: bad lengths", n)
		}
		for i := range tl {
			tl[i] = byte(i)
			h[i] = byte(i)
		}
	}
}
