package localfs

import (
	"crypto/sha256"
	"math/rand/v2"
	"testing"
)

// TestHashPipeMatchesSHA256 feeds writes on both sides of parallelHashMin,
// with the caller reusing its buffer as soon as wait returns, and compares
// the sum with crypto/sha256 over the same bytes.
func TestHashPipeMatchesSHA256(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	want := sha256.New()
	hp := newHashPipe()
	defer hp.stop()
	buf := make([]byte, 4*parallelHashMin)
	for range 200 {
		p := buf[:rng.IntN(len(buf))+1]
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		want.Write(p)
		hp.begin(p)
		hp.wait()
	}
	if got, w := hp.sum(), want.Sum(nil); string(got) != string(w) {
		t.Fatalf("sum %x, want %x", got, w)
	}
}
