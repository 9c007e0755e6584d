module github.com/mcpblob/mcpblob/cmd/licensecheck

go 1.26.0

require github.com/google/licensecheck v0.3.1
