package main

import (
	"os/exec"
	"strings"
)

// features are what the build under test offers that changes what some
// inputs should get, read from `mcpblob serve -h`, so the harness follows
// the build instead of assuming it.
type features struct {
	tenancy     bool // --tenancy: each principal has its own namespace (docs/auth.md)
	downloadURL bool // --download-url: a separate origin for /d links
}

func detectFeatures(bin string) features {
	out, _ := exec.Command(bin, "serve", "-h").CombinedOutput()
	var f features
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "-") {
			continue
		}
		switch strings.TrimLeft(strings.Fields(line)[0], "-") {
		case "tenancy":
			f.tenancy = true
		case "download-url":
			f.downloadURL = true
		}
	}
	return f
}

func (f features) describe() string {
	var s []string
	if f.tenancy {
		s = append(s, "--tenancy (per-principal namespaces: another principal's blobs must be invisible)")
	} else {
		s = append(s, "no --tenancy (one shared namespace: another principal's blobs are not checked for isolation)")
	}
	if f.downloadURL {
		s = append(s, "--download-url")
	}
	return "build under test: " + strings.Join(s, "; ")
}
