package asm

import (
	"slices"
	"testing"
)

func TestRegistry(t *testing.T) {
	// A kernel of the test's own, with one available and one unavailable tier
	// registered by "another package".
	fast, slow, missing := true, true, false
	Register("impltest", "fast", &fast)
	Register("impltest", "slow", &slow)
	Register("impltest", "missing", &missing)
	mustPanic(t, "duplicate", func() { Register("impltest", "fast", &fast) })
	mustPanic(t, "reserved", func() { Register("impltest", "generic", &fast) })

	if got := Impls("impltest"); !slices.Equal(got, []string{"fast", "slow"}) {
		t.Fatalf("Impls = %q", got)
	}
	if Select("impltest", "missing") || Select("impltest", "nope") || !fast || !slow {
		t.Fatal("selecting an unavailable tier changed something")
	}
	if !Select("impltest", "slow") || fast || !slow || missing {
		t.Fatalf("Select slow: fast=%v slow=%v missing=%v", fast, slow, missing)
	}
	if !Select("impltest", "generic") || fast || slow || missing {
		t.Fatalf("Select generic: fast=%v slow=%v missing=%v", fast, slow, missing)
	}
	Reset("impltest")
	if !fast || !slow || missing {
		t.Fatalf("Reset: fast=%v slow=%v missing=%v", fast, slow, missing)
	}
	if Impls("nokernel") != nil {
		t.Fatal("Impls of an unknown kernel")
	}
}

func TestRegistryKernels(t *testing.T) {
	// Under purego nothing is registered; otherwise each kernel's tiers
	// follow the flags of cpu.go.
	want := map[string][]string{}
	if asmRegistered {
		if useAVX512VBMI {
			want["base64"] = []string{"avx512vbmi"}
		}
		if useAVX2 {
			want["base64"] = append(want["base64"], "avx2")
		}
		if useAVX512BW {
			want["jsonscan"] = append(want["jsonscan"], "avx512")
		}
		if useAVX2 {
			want["jsonscan"] = append(want["jsonscan"], "avx2")
		}
	}
	for _, k := range []string{"base64", "jsonscan"} {
		if got := Impls(k); !slices.Equal(got, want[k]) {
			t.Errorf("Impls(%q) = %q, want %q", k, got, want[k])
		}
	}
}
