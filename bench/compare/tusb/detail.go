package tusb

import (
	"fmt"
	"strings"
)

// p11Detail is P11's method and its table of every run.
func p11Detail(p plan, stores []*storeResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Each run uploads the same %d MiB: mcpblob's tus (POST `/v1/tus/`, then PATCHes of %d MiB, each ending on a multiple of %d MiB, without checksums, over one keep-alive connection), one `PUT /v1/blobs` of the same bytes to the same server, and tusd with the same tus requests. ", p.size>>20, p.chunk>>20, p.chunk>>20)
	fmt.Fprintf(&b, "Local store: `mcpblob serve --data` beside tusd's file store (`-upload-dir`), both on the same disk. S3: both on one SeaweedFS node (`weed server -s3`), each with its own bucket: mcpblob's S3 store beside tusd's S3 store (default part sizes; its part buffers go to temporary files on the node's disk). On S3 a fourth operation measures the store's own pace for a client that waits for each chunk (\"%s\"): the same bytes as one multipart upload of %d MiB parts, each sent by minio-go from memory (unsigned, its CRC32C in a trailer as mcpblob streams a part; no server of ours between) once the one before was stored; a tus server answers a PATCH only once its bytes are durable, so this pace bounds it. ", floorName, p.chunk>>20)
	b.WriteString("The operations' order rotates from run to run; each runs on a server process started for it, after a `sync`. RSS growth: the server's peak (VmHWM reset before the run, VmRSS sampled every 5 ms) minus its RSS when idle after a 1 MiB warm-up upload in that process. ")
	b.WriteString("Written per byte: write_bytes of /proc/PID/io over the run ÷ the bytes uploaded, which counts every page a process dirties (a temporary file deleted before writeback too), so a second copy shows as ≥ 2.0: on the local store the server process's (the store is its own folder), on S3 SeaweedFS's (its volume files and the filer's metadata; a server-side copy counts there); the server's own disk writes are shown beside it. PATCH times: request to answer, at the client; the last PATCH completes the upload. mcpblob's first tus run is checked by sha256 (HEAD `/v1/blobs`, `x-mcp-sha256`).\n\n")
	b.WriteString("| store | operation | run | MB/s | PATCH median / last | server RSS growth | server wrote | SeaweedFS wrote | error |\n|---|---|--:|--:|--:|--:|--:|--:|---|\n")
	for _, st := range stores {
		for i, o := range st.ops {
			for r, s := range st.samples[i] {
				weed := "–"
				if st.name == "S3" {
					weed = fmt.Sprintf("%.2f×", s.s3Written)
				}
				errText := ""
				if s.err != nil {
					errText = strings.ReplaceAll(fmt.Sprintf("%.120s", s.err), "|", "\\|")
				}
				patches := "–"
				if o.tus {
					patches = fmt.Sprintf("%.0f / %.0f ms", s.patchMed, s.lastPatch)
				}
				growth, wrote := fmt.Sprintf("%.0f MiB", s.growth), fmt.Sprintf("%.2f×", s.srvWritten)
				if o.srv == nil {
					growth, wrote = "–", "–"
				}
				fmt.Fprintf(&b, "| %s | %s | %d | %.0f | %s | %s | %s | %s | %s |\n", st.name, o.name, r+1, s.mbps, patches, growth, wrote, weed, errText)
			}
		}
	}
	b.WriteString("\nIdle RSS after the warm-up: ")
	for i, st := range stores {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: mcpblob %.0f MiB, tusd %.0f MiB", st.name, float64(st.idle["mcpblob"])/(1<<20), float64(st.idle["tusd"])/(1<<20))
	}
	b.WriteString(".\n")
	return b.String()
}

// p12Detail is P12's method and its table.
func p12Detail(p plan, runs []resume) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Each run: a tus upload of %d MiB in %d MiB PATCHes to `mcpblob serve` on the local store; once the client has handed %d MiB to the connection (half the upload and half a chunk: in the middle of a PATCH) the server is SIGKILLed. ", p.size>>20, p.chunk>>20, (p.size/2+p.chunk/2)>>20)
	b.WriteString("The harness starts the same command again (same folder, same address) and asks HEAD every millisecond until it answers; the client then sends from the offset HEAD reports, its first PATCH up to the next chunk boundary, and the rest; the blob's sha256 is checked. ")
	b.WriteString("Sent again: the bytes handed to the connection before the kill minus that offset (an upper bound: a few KiB may still have been in the client's buffers). Times from just before the new process started.\n\n")
	b.WriteString("| run | handed over before the kill | offset after the restart | sent again | start → HEAD answered | start → first PATCH accepted | first PATCH | error |\n|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for i, r := range runs {
		errText := ""
		if r.err != nil {
			errText = strings.ReplaceAll(fmt.Sprintf("%.120s", r.err), "|", "\\|")
		}
		fmt.Fprintf(&b, "| %d | %d | %d | %.2f MiB | %.0f ms | %.0f ms | %.2f MiB | %s |\n", i+1, r.sent, r.offset, float64(r.again())/(1<<20),
			float64(r.toHead)/1e6, float64(r.toAccept)/1e6, float64(r.firstSize)/(1<<20), errText)
	}
	return b.String()
}
