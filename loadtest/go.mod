// The whole-system test module: mcpblob built and started as a user runs it,
// then driven under load (loadrun, the vegeta scenarios), under attack
// (hardening), across a loopback cluster (cluster) and under a slow-body
// storm (slowstorm). rig/ holds the parts these suites share with the
// benchmarks (bench/ imports them): processes, SeaweedFS, seeding, the MCP
// client, the load scenarios, probing, machine facts and RESULTS.md sections.
// A module of its own so its dependencies (vegeta) never enter mcpblob's
// module graph.
module github.com/mcpblob/mcpblob/loadtest

go 1.26.0

replace github.com/mcpblob/mcpblob => ../

require (
	github.com/bdragon300/tusgo v0.1.2
	github.com/mcpblob/mcpblob v0.0.0
	github.com/minio/minio-go/v7 v7.4.1
	github.com/tsenart/vegeta/v12 v12.13.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/emmansun/base64 v0.9.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/klauspost/compress v1.20.0 // indirect
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	github.com/klauspost/crc32 v1.3.0 // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	github.com/minio/crc64nvme v1.1.1 // indirect
	github.com/minio/md5-simd v1.1.2 // indirect
	github.com/philhofer/fwd v1.2.0 // indirect
	github.com/rs/dnscache v0.0.0-20230804202142-fc85eb664529 // indirect
	github.com/rs/xid v1.6.0 // indirect
	github.com/tinylib/msgp v1.6.4 // indirect
	github.com/tsenart/go-tsz v0.0.0-20180814235614-0bd30b3df1c3 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	gopkg.in/ini.v1 v1.67.3 // indirect
)
