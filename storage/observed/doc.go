// Package observed wraps a storage.Backend so that every operation is
// reported to an Observer with its duration and outcome: the source of
// mcpblob's storage metrics. The wrapper keeps the backend's optional
// interfaces (Presigner, Claimer; a Recorder through storage.RecorderOf) and passes readers through untouched, so
// local files still go out by sendfile.
package observed
