package codec

import (
	"runtime"
	"testing"

	"github.com/mcpblob/mcpblob/asm"
)

// testTiers lists the tiers this machine can run, best first: those the
// asm registry has for "base64" (its own and our "emmansun"), then
// "asm-generic", the asm kernel plumbing with asm's generic code behind it,
// then "generic", encoding/base64 alone.
func testTiers() []string {
	return append(asm.Impls("base64"), tierAsmGeneric, TierGeneric)
}

// selectTier switches the codec to tier and returns a function that
// restores the previous state.
func selectTier(tb testing.TB, tier string) (restore func()) {
	tb.Helper()
	f := forceAsm
	restore = func() {
		asm.Reset("base64")
		forceAsm = f
	}
	name := tier
	if tier == tierAsmGeneric {
		name = TierGeneric
	}
	if !asm.Select("base64", name) {
		tb.Fatalf("asm.Select(base64, %q) failed", name)
	}
	forceAsm = tier == tierAsmGeneric
	if got := Tier(); got != tier {
		restore()
		tb.Fatalf("Tier() = %q after selecting %q", got, tier)
	}
	return restore
}

// forEachTier runs f as a subtest once per tier the machine has.
func forEachTier(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, tier := range testTiers() {
		t.Run(tier, func(t *testing.T) {
			defer selectTier(t, tier)()
			f(t)
		})
	}
}

func TestTierNames(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		if Tier() == "" {
			t.Fatal("empty tier")
		}
	})
}

// TestDecodeTier: decoding uses the tier Tier names, except emmansun's
// outside amd64 (its arm64 decoder passes bytes >= 0x80 as 'A'), where it is
// encoding/base64; the decode tests of every tier run there under qemu-user.
func TestDecodeTier(t *testing.T) {
	forEachTier(t, func(t *testing.T) {
		want := Tier()
		if want == TierEmmansun && runtime.GOARCH != "amd64" {
			want = TierGeneric
		}
		if got := DecodeTier(); got != want {
			t.Fatalf("DecodeTier() = %q, want %q", got, want)
		}
	})
}
