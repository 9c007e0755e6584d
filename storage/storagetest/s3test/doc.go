// Package s3test runs a real S3 service for tests: one SeaweedFS node
// (`weed server -s3`: a master, a volume server, a filer and the S3
// gateway in one process), no mocks. The binary is the pinned build that
// `make tools` installs into <repo>/.tools/bin/weed (the environment
// variable MCPBLOB_WEED_BIN overrides the path); tests fail, with a message
// saying so, when it is missing: they are never skipped.
//
// One server serves a whole test binary: [Shared] starts it on first use
// and [Main] stops it after the tests; each test makes its own bucket
// ([BucketName] gives a fresh name). Every port the node opens (the HTTP
// and gRPC ports of its master, volume server, filer and S3 gateway) is a
// free port picked here on 127.0.0.1, and the node binds 127.0.0.1 only
// (-ip and -ip.bind); metrics, debug, Iceberg and Lance listeners are off,
// and so is the master's telemetry. The S3 credentials are random and
// reach the node through its environment (AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, which SeaweedFS makes its admin identity). Its
// data, log and local sockets live in a temporary folder, except the Unix
// sockets of its gRPC services, which SeaweedFS puts in /tmp itself; Stop
// removes them all.
//
// The node is its own process group, started and stopped by PID: [Stop]
// sends SIGTERM to the group, then SIGKILL after 2 s, and waits for the
// process; on Linux it also dies with the test binary. The node is ready
// when its S3 health URL answers 200 and its master lists the volume
// server, so that the first write of a test does not race the volume
// server's registration.
package s3test
