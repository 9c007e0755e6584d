// Package asm holds mcpblob's CPU kernels and their runtime dispatch.
//
// Kernels:
//
//   - [EncodeBase64] and [DecodeBase64]: bulk base64 over whole blocks, AVX-512 VBMI
//     (the Muła–Lemire algorithms) with a pure-Go twin. They handle only the
//     "easy middle" of an input: callers (core/codec) handle tails, padding,
//     newlines and all error reporting.
//   - [IndexJSONSpecial]: index of the first '"', '\\' or control byte (< 0x20)
//     in a JSON string body, AVX-512 and AVX2 with a pure-Go twin.
//
// Dispatch reads cpuid once (cpu.go) into use<ISA> flags. Each flag is
// registered in a small implementation registry (impl.go) so that tests can run
// every tier the machine has. The purego build tag removes all assembly.
//
// Tiers can be lowered at start-up with GODEBUG (cpu.avx512f=off,
// cpu.avx512vbmi=off, cpu.avx2=off), the same knob that lowers the Go runtime's
// and golang.org/x/sys/cpu's tiers.
package asm
