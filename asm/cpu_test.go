package asm

import (
	"slices"
	"strings"
	"testing"
)

func TestDetectCPU(t *testing.T) {
	all := [numFeatures]bool{true, true, true, true}
	noVBMI := [numFeatures]bool{true, true, true, false}
	tests := []struct {
		has              [numFeatures]bool
		godebug, disable string
		avx2, bw, vbmi   bool
		features         []string
	}{
		{all, "", "", true, true, true, []string{"AVX2", "AVX512F", "AVX512BW", "AVX512VBMI"}},
		{noVBMI, "", "", true, true, false, []string{"AVX2", "AVX512F", "AVX512BW"}},
		{[numFeatures]bool{}, "", "", false, false, false, nil},
		{all, "cpu.avx512f=off", "", true, false, false,
			[]string{"AVX2", "AVX512F (off by GODEBUG)", "AVX512BW (off by GODEBUG)", "AVX512VBMI (off by GODEBUG)"}},
		{all, "http2client=0,cpu.avx512vbmi=off", "", true, true, false,
			[]string{"AVX2", "AVX512F", "AVX512BW", "AVX512VBMI (off by GODEBUG)"}},
		{all, "cpu.avx512bw=off", "", true, false, false, nil},
		{all, "cpu.avx512=off,cpu.avx2=off", "", false, false, false, nil},
		{all, "cpu.all=off", "", false, false, false, nil},
		{all, "cpu.all=off,cpu.avx2=on", "", true, false, false, nil},
		{all, "cpu.avx2=off,cpu.avx2=on", "", true, true, true, nil},
		{all, "cpu.avx2", "", true, true, true, nil},                    // no value: ignored
		{all, "cpu.avx2=maybe,cpu.sse3=off", "", true, true, true, nil}, // unknown: ignored
		{noVBMI, "cpu.avx512vbmi=on", "", true, true, false, nil},       // cannot enable
		{all, "", "avx512", true, false, false, nil},
		{all, "", " AVX2 , avx512vbmi", false, true, false, nil},
		{all, "cpu.avx2=on", "avx2", false, true, true, []string{"AVX2 (off by MCPBLOB_CPU_DISABLE)", "AVX512F", "AVX512BW", "AVX512VBMI"}},
		{all, "", "sse9", true, true, true, []string{"AVX2", "AVX512F", "AVX512BW", "AVX512VBMI", "MCPBLOB_CPU_DISABLE: unknown feature sse9"}},
	}
	for _, tt := range tests {
		c := detectCPU(tt.has, tt.godebug, tt.disable)
		avx2 := c.on(featAVX2)
		bw := c.on(featAVX512F) && c.on(featAVX512BW)
		vbmi := bw && c.on(featAVX512VBMI)
		if avx2 != tt.avx2 || bw != tt.bw || vbmi != tt.vbmi {
			t.Errorf("detectCPU(%v, %q, %q): avx2 %v bw %v vbmi %v, want %v %v %v",
				tt.has, tt.godebug, tt.disable, avx2, bw, vbmi, tt.avx2, tt.bw, tt.vbmi)
		}
		if tt.features != nil && !slices.Equal(c.features(), tt.features) {
			t.Errorf("detectCPU(%v, %q, %q).features() = %q, want %q",
				tt.has, tt.godebug, tt.disable, c.features(), tt.features)
		}
	}
}

func TestFeatures(t *testing.T) {
	f := Features()
	t.Logf("features: %q; base64 tier %s, jsonscan tier %s", f, Base64Tier(), JSONScanTier())
	for _, s := range f {
		name, _, _ := strings.Cut(s, " ")
		if !slices.Contains(featureNames[:], name) && !strings.HasPrefix(s, "MCPBLOB_CPU_DISABLE") {
			t.Errorf("unexpected feature %q", s)
		}
	}
	// The flags are consistent with what is reported.
	if useAVX512VBMI && !slices.Contains(f, "AVX512VBMI") {
		t.Errorf("useAVX512VBMI set but not reported in %q", f)
	}
	if useAVX2 && !slices.Contains(f, "AVX2") {
		t.Errorf("useAVX2 set but not reported in %q", f)
	}
}
