// Package miniotest runs a real MinIO server for tests: no mocks. The binary
// is the pinned build that `make tools` installs into <repo>/.tools/bin/minio
// (the environment variable MCPBLOB_MINIO_BIN overrides the path); tests fail,
// with a message saying so, when it is missing.
//
// One server serves a whole test binary: [Shared] starts it on first use and
// [Main] stops it after the tests. The server listens on a free loopback
// port, keeps its data in a temporary folder, and is stopped by PID (SIGTERM,
// then SIGKILL); on Linux it also dies with the test binary.
package miniotest
