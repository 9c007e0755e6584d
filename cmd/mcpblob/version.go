package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); otherwise
// the module version or VCS revision from the build info is used.
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "devel-" + s.Value[:12]
		}
	}
	return "devel"
}

func runVersion(context.Context, []string, func(string) string) int {
	fmt.Printf("mcpblob %s (%s, %s/%s)\n", versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
