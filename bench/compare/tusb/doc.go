// Package tusb is the resumable-upload targets P11 and P12 of bench/compare
// (issue 27), written between the "tus" markers of RESULTS.md.
//
// P11: a 1 GiB upload in 8 MiB chunks over tus 1.0.0 (a raw tus client of
// the harness's own, client.go) to mcpblob's /v1/tus/, against PUT
// /v1/blobs of the same bytes on the same server and against tusd v2.9.1,
// the tus reference server, on the same store: mcpblob's local store
// beside tusd's file store, mcpblob's S3 store beside tusd's S3 store, both
// on one SeaweedFS node (rig.go). Throughput, the server's RSS growth and
// the bytes written per byte uploaded (write_bytes of /proc/PID/io: the
// server's on the local store, SeaweedFS's on S3) are measured per run
// (p11.go). On S3 the store's own pace for a client that waits for each
// chunk (one multipart upload of chunk-sized parts sent one after another
// by minio-go, no server of ours between) runs in the same rotation
// (floor.go): it bounds every tus server on that store, since a PATCH is
// answered only once its bytes are durable.
//
// P12: resume cost on the local store. The server is SIGKILLed while the
// client is half way through the upload, restarted on the same folder and
// address, and the client resumes from HEAD: the bytes it sends again and
// the time from the new process's start to its first accepted PATCH
// (p12.go).
package tusb
