package codec

import (
	"testing"

	"github.com/mcpblob/mcpblob/asm"
)

// testTiers lists the tiers this machine can run, best first. "asm-generic"
// drives the asm kernel plumbing with asm's generic code behind it.
func testTiers() []string {
	var ts []string
	if asm.Base64Tier() == TierAVX512VBMI {
		ts = append(ts, TierAVX512VBMI)
	}
	ts = append(ts, tierAsmGeneric)
	if emmansunDefault {
		ts = append(ts, TierEmmansun)
	}
	return append(ts, TierGeneric)
}

// selectTier switches the codec to tier and returns a function that
// restores the previous state.
func selectTier(tb testing.TB, tier string) (restore func()) {
	tb.Helper()
	a, e, f := useAsm, useEmmansun, forceAsm
	restore = func() { useAsm, useEmmansun, forceAsm = a, e, f }
	switch tier {
	case TierAVX512VBMI:
		useAsm, useEmmansun, forceAsm = true, false, false
	case tierAsmGeneric:
		useAsm, useEmmansun, forceAsm = true, false, true
	case TierEmmansun:
		useAsm, useEmmansun, forceAsm = false, true, false
	case TierGeneric:
		useAsm, useEmmansun, forceAsm = false, false, false
	default:
		tb.Fatalf("unknown tier %q", tier)
	}
	if got := Tier(); got != tier && tier != TierAVX512VBMI {
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
