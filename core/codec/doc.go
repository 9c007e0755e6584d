// Package codec is mcpblob's base64 and data URI codec: a drop-in for
// encoding/base64 (block and streaming) that runs on SIMD kernels, RFC 2397
// data URIs (parse, format, streaming decode and encode, redaction) and
// SEP-2356 accept matching ([MatchAccept]).
//
// # Tiers
//
// Bulk data goes through the best tier available, chosen on every call
// (see [Tier]):
//
//  1. "avx512vbmi": the asm package's AVX-512 VBMI kernels
//     ([asm.EncodeBase64], [asm.DecodeBase64]), when asm.Base64Tier
//     reports them;
//  2. "avx2": the asm package's AVX2 kernels, for the alphabets they serve
//     (the standard and URL ones among them: see asm.Alphabet.Tier);
//  3. "emmansun": github.com/emmansun/base64 v0.9.0, whose AVX2/SSE code
//     dispatches itself through golang.org/x/sys/cpu (off under purego):
//     what a CPU without AVX2 (but with SSE/AVX) gets; outside amd64 it
//     only encodes (see [DecodeTier]);
//  4. "generic": encoding/base64 alone.
//
// The emmansun tier is registered with the asm registry as
// "base64"/"emmansun", so asm.Select and asm.Reset move tests (and
// benchmarks) between all tiers on one machine; GODEBUG=cpu.avx512f=off
// lowers asm's tier to "avx2", and cpu.avx2=off lowers it to "emmansun" and
// emmansun's own code to its SSE path.
//
// # Invariants
//
//   - Results are those of encoding/base64 for the same input, whatever the
//     tier: the same bytes, the same count, and the same
//     encoding/base64.CorruptInputError (the stdlib type itself) at the same
//     offset, including CR/LF handling, padding rules, Strict and trailing
//     garbage. The differential tests and fuzz targets check this for every
//     tier, with canary bytes past len(dst).
//   - A kernel only ever sees a prefix of whole groups: 3-byte groups to
//     encode, or 4-character quanta made only of alphabet characters to
//     decode (no padding, no CR/LF). It may stop early. Quanta split by CR/LF
//     are decoded in plain Go, and the kernel resumes after them; at the
//     first quantum holding anything else the rest goes to encoding/base64,
//     starting on a quantum boundary, so its semantics are untouched, and the
//     error offset is rebased by the length of the prefix. Nothing is ever
//     written past len(dst).
//   - The streaming [NewEncoder] and [NewDecoder] work in chunks of 48/64
//     KiB through buffers allocated once per stream: Write, Read, ReadFrom
//     and WriteTo do not allocate, and memory stays flat whatever the stream
//     length (tested with 256 MiB). The decoder follows base64.NewDecoder's
//     semantics but counts error offsets from the start of the stream (see
//     [NewDecoder] for the exact relation).
//   - Data URI errors are [*DataURIError]s and never contain payload bytes;
//     [DataURI.String] and [RedactDataURI] print "data:<type>,[N bytes]".
//     [ParseDataURI] is [NewDataURIReader] over a string, so the block and
//     streaming forms accept the same inputs with the same errors.
//
// The package has no interfaces: variation comes from dispatch, and all
// exported functions and methods are safe for concurrent use except the
// streams, which belong to one goroutine each.
package codec
