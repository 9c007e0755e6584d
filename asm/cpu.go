package asm

import (
	"os"
	"strings"

	"github.com/klauspost/cpuid/v2"
)

// The use<ISA> flags hold what this process may use: the CPU (read once with
// cpuid) has the feature, the OS saves its registers, and neither GODEBUG nor
// MCPBLOB_CPU_DISABLE turned it off. Kernels copy them into their own tier
// switches (see impl.go), so tests can select tiers without touching these.
var (
	// useAVX2 enables the AVX2 JSON scanning and base64 kernels.
	useAVX2 = cpuState.on(featAVX2)
	// useAVX512BW enables the AVX-512 JSON scanning kernel (needs F and BW).
	useAVX512BW = cpuState.on(featAVX512F) && cpuState.on(featAVX512BW)
	// useAVX512VBMI enables the AVX-512 base64 kernels (need F, BW and VBMI).
	useAVX512VBMI = useAVX512BW && cpuState.on(featAVX512VBMI)
)

// The features the dispatcher looks at, in the order [Features] lists them.
const (
	featAVX2 = iota
	featAVX512F
	featAVX512BW
	featAVX512VBMI
	numFeatures
)

var featureNames = [numFeatures]string{"AVX2", "AVX512F", "AVX512BW", "AVX512VBMI"}

// cpuState is read once, at package initialisation.
var cpuState = detectCPU(hostFeatures(), os.Getenv("GODEBUG"), os.Getenv("MCPBLOB_CPU_DISABLE"))

// cpuFeatures records, per feature, whether the hardware has it and, when a
// knob turned it off, which knob did.
type cpuFeatures struct {
	has   [numFeatures]bool
	offBy [numFeatures]string // "", "GODEBUG" or "MCPBLOB_CPU_DISABLE"
	notes []string            // unknown names found in MCPBLOB_CPU_DISABLE
}

func (c *cpuFeatures) on(f int) bool { return c.has[f] && c.offBy[f] == "" }

// hostFeatures asks cpuid. cpuid checks OS support (XGETBV) for the AVX and
// AVX-512 register state, and reports nothing when built with -tags noasm.
// The kernels also use TZCNT (BMI1) with AVX2 and BZHI (BMI2) with AVX-512,
// which every such CPU has; they are checked here all the same.
func hostFeatures() [numFeatures]bool {
	return [numFeatures]bool{
		featAVX2:       cpuid.CPU.Supports(cpuid.AVX2, cpuid.BMI1),
		featAVX512F:    cpuid.CPU.Supports(cpuid.AVX512F, cpuid.BMI2),
		featAVX512BW:   cpuid.CPU.Has(cpuid.AVX512BW),
		featAVX512VBMI: cpuid.CPU.Has(cpuid.AVX512VBMI),
	}
}

// knobFeatures maps a lower-case feature name used by GODEBUG ("cpu.<name>=off")
// and MCPBLOB_CPU_DISABLE to the features it turns off. The names follow
// golang.org/x/sys/cpu, so one GODEBUG setting lowers our tiers and those of
// libraries built on x/sys/cpu (emmansun/base64) alike. "avx512" (x/sys/cpu's
// name for the AVX-512 foundation set) and "avx512f" turn off every AVX-512 tier.
var knobFeatures = map[string][]int{
	"all":        {featAVX2, featAVX512F, featAVX512BW, featAVX512VBMI},
	"avx2":       {featAVX2},
	"avx512":     {featAVX512F, featAVX512BW, featAVX512VBMI},
	"avx512f":    {featAVX512F, featAVX512BW, featAVX512VBMI},
	"avx512bw":   {featAVX512BW},
	"avx512vbmi": {featAVX512VBMI},
}

// detectCPU applies the two knobs to the hardware features.
//
// godebug is the GODEBUG value: comma-separated key=value pairs, of which the
// "cpu.<name>=off" and "cpu.<name>=on" ones count, later ones winning, as in
// the runtime and x/sys/cpu. "on" cannot enable what the CPU lacks; other
// GODEBUG keys are ignored, and so are cpu.<name> keys we do not use.
//
// disable is MCPBLOB_CPU_DISABLE: a comma-separated list of the same names
// (case-insensitive, for example "avx512,avx2"); it wins over GODEBUG.
// Unknown names are reported as notes by [Features].
func detectCPU(has [numFeatures]bool, godebug, disable string) *cpuFeatures {
	c := &cpuFeatures{has: has}
	for _, field := range strings.Split(godebug, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(field), "=")
		name, isCPU := strings.CutPrefix(key, "cpu.")
		if !ok || !isCPU {
			continue
		}
		for _, f := range knobFeatures[name] {
			switch value {
			case "off":
				c.offBy[f] = "GODEBUG"
			case "on":
				c.offBy[f] = ""
			}
		}
	}
	for _, name := range strings.Split(disable, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		fs, ok := knobFeatures[name]
		if !ok {
			c.notes = append(c.notes, "MCPBLOB_CPU_DISABLE: unknown feature "+name)
			continue
		}
		for _, f := range fs {
			c.offBy[f] = "MCPBLOB_CPU_DISABLE"
		}
	}
	return c
}

// features renders the state for [Features].
func (c *cpuFeatures) features() []string {
	var out []string
	for f, name := range featureNames {
		switch {
		case !c.has[f]:
		case c.offBy[f] != "":
			out = append(out, name+" (off by "+c.offBy[f]+")")
		default:
			out = append(out, name)
		}
	}
	return append(out, c.notes...)
}

// Features lists the CPU features the dispatcher looks at and found on this
// machine, in a fixed order: "AVX2", "AVX512F", "AVX512BW", "AVX512VBMI".
// A feature the hardware has but a knob turned off is listed as, for example,
// "AVX512F (off by GODEBUG)" or "AVX2 (off by MCPBLOB_CPU_DISABLE)", and
// unknown names in MCPBLOB_CPU_DISABLE are appended as notes. It returns a new
// slice on every call. Under the purego tag the features are still reported,
// though no kernel uses them; with -tags noasm cpuid reports none.
//
// Two knobs, read once at start-up, lower the tiers:
//
//   - GODEBUG=cpu.avx512f=off (also cpu.avx512=off, cpu.avx512bw=off,
//     cpu.avx512vbmi=off, cpu.avx2=off, cpu.all=off): the same setting lowers
//     the Go runtime's and golang.org/x/sys/cpu's tiers. The runtime does not
//     know cpu.avx512 and cpu.avx512vbmi and prints a harmless "unknown cpu
//     feature" line at start-up for them; cpu.avx512f=off avoids that.
//   - MCPBLOB_CPU_DISABLE=avx512,avx2: a comma-separated list of the same
//     names, affecting only this package.
func Features() []string { return cpuState.features() }
