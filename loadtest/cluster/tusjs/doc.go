// Package tusjs is the cluster check's tus-js-client step: the npm package
// tus-js-client, run by Node from the npm test tools (make tools-node),
// uploads through nginx to /v1/tus/ with the API key, reading its file from
// disk (upload.mjs, embedded and copied beside the tools so that its import
// resolves there):
//
//   - Size bytes in Chunk PATCHes, the node receiving them SIGKILLed when
//     the upload passes each of Cuts points (a third and two thirds of the
//     way): tus-js-client retries (retryDelays), asks a node for the offset
//     and sends the rest, and each killed node is restarted. The blob must
//     read back with the file's sha256, and what was sent again (bytes read
//     into PATCH bodies beyond the file's size) must be at most one chunk
//     per failed request: a PATCH carries one chunk, and the offset a node
//     reports never goes back past acknowledged bytes. On S3 a killed node
//     loses the segment it was filling, so each cut costs about the whole
//     chunk in flight (Node has read it into the socket's and nginx's
//     buffers by then);
//   - ParallelSize bytes with parallelUploads: Parallel partial uploads and
//     one final upload (concatenation: the client's POSTs are counted by
//     their Upload-Concat header), read back byte-identical.
//
// The receiving node is the one whose reads (/proc/PID/io rchar) grow
// fastest, the others being idle, and still grow by 128 KiB or more in the
// 20 ms before the kill (a PATCH's body arriving). A
// kill that lands between two PATCHes cuts nothing (the next PATCH goes to
// another node); it shows as no retry of tus-js-client's within 2 s, and
// the killer tries again, up to 4 kills per cut: each of the two cuts must
// be a kill that cut a PATCH.
// Node or tus-js-client missing from the tools' folder is a failure, never
// a skip.
package tusjs
