package codec

import (
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
