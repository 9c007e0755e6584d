//go:build tools

// Module weed pins the SeaweedFS server the tests and benchmarks run as
// their S3 (Apache-2.0). `go install …/weed@version` refuses SeaweedFS's
// module because its go.mod has a replace directive, so the Makefile
// builds the weed command from this module instead, with the same
// replace; see the Makefile's $(TOOLBIN)/weed rule.
package tools

import _ "github.com/seaweedfs/seaweedfs/weed"
