package asm

// This registry follows the Go standard library's crypto/internal/impl: every
// alternative (non-generic) implementation of a kernel registers the bool that
// switches it on, so tests on one machine can run each tier the CPU has, plus
// the generic Go code that is always there.

type implementation struct {
	kernel    string
	name      string
	available bool  // detected at registration
	toggle    *bool // the switch the dispatcher reads
}

var implementations []implementation

// Register records an alternative implementation name of kernel, switched by
// *available. *available must hold the detected value at the time of the
// call (true when the CPU supports the tier and no knob turned it off); it is
// remembered for [Reset]. The dispatcher must test the switch of each tier,
// highest first, and fall back to generic Go when all are off, so turning one
// tier off never turns another off.
//
// This package registers, from its init functions:
//
//	kernel "base64"    tiers "avx512vbmi", "avx2"
//	kernel "jsonscan"  tiers "avx512", "avx2"
//
// Other packages may register their own tiers of a kernel, from an init
// function (this package's registrations are done by then). core/codec
// registers its "emmansun" tier (emmansun/base64's AVX2/SSE code) under
// "base64", so [Select]("base64", "emmansun") turns off "avx512vbmi" and
// "avx2" and leaves emmansun on, and [Select]("base64", "generic") turns
// them all off. The
// name "generic" is reserved for the base implementation. Register panics on
// a duplicate (kernel, name) pair.
//
// Register, [Select] and [Reset] are meant for init functions and tests; they
// must not run concurrently with each other or with the kernels.
func Register(kernel, name string, available *bool) {
	if name == "" || name == "generic" {
		panic("bug: asm: tier name " + `"` + name + `"` + " is reserved")
	}
	for _, i := range implementations {
		if i.kernel == kernel && i.name == name {
			panic("bug: asm: tier " + kernel + "/" + name + " registered twice")
		}
	}
	implementations = append(implementations, implementation{
		kernel:    kernel,
		name:      name,
		available: *available,
		toggle:    available,
	})
}

// Impls returns the names of the registered tiers of kernel that are
// available on this machine, in registration order (highest first). The
// implicit "generic" tier is not included. It returns nil under the purego
// tag, where no tier of this package is registered.
func Impls(kernel string) []string {
	var names []string
	for _, i := range implementations {
		if i.kernel == kernel && i.available {
			names = append(names, i.name)
		}
	}
	return names
}

// Select turns the tier name of kernel on and every other registered tier of
// kernel off, so the dispatcher uses name. The name "generic" (or "") turns
// them all off. It reports whether the selection was made: it returns false,
// changing nothing, when name is not registered for kernel or not available
// on this machine.
func Select(kernel, name string) bool {
	if name == "" || name == "generic" {
		for _, i := range implementations {
			if i.kernel == kernel {
				*i.toggle = false
			}
		}
		return true
	}
	found := false
	for _, i := range implementations {
		if i.kernel == kernel && i.name == name {
			found = i.available
		}
	}
	if !found {
		return false
	}
	for _, i := range implementations {
		if i.kernel == kernel {
			*i.toggle = i.name == name
		}
	}
	return true
}

// Reset restores every registered tier of kernel to its detected value,
// undoing [Select].
func Reset(kernel string) {
	for _, i := range implementations {
		if i.kernel == kernel {
			*i.toggle = i.available
		}
	}
}
