package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// lockPackage is the part of a package-lock.json (lockfileVersion 2 or 3)
// entry that is read.
type lockPackage struct {
	Version string
	License json.RawMessage
	Link    bool
}

// npmRows judges the license field of every package in the lock file: the
// lock's own field, or when the lock has none the installed package.json's
// (under installed, at the lock entry's path).
func npmRows(lockFile, installed string) ([]row, error) {
	if lockFile == "" {
		return nil, nil
	}
	b, err := os.ReadFile(lockFile)
	if err != nil {
		return nil, err
	}
	var lock struct{ Packages map[string]lockPackage }
	if err := json.Unmarshal(b, &lock); err != nil {
		return nil, fmt.Errorf("%s: %w", lockFile, err)
	}
	seen := map[modKey]bool{}
	var rows []row
	for path, p := range lock.Packages {
		name := npmName(path)
		k := modKey{"npm:" + name, p.Version}
		if name == "" || p.Link || seen[k] {
			continue
		}
		seen[k] = true
		licence := licenseField(p.License)
		if licence == "" {
			licence = installedLicense(filepath.Join(installed, path, "package.json"))
		}
		rows = append(rows, row{name: k.path, version: k.version, use: testOnly,
			via: []string{"npm"}, verdict: classifyExpression(licence)})
	}
	return rows, nil
}

// npmName is the package name of a lock entry's path
// ("node_modules/a/node_modules/@s/b" is "@s/b"); "" for the root.
func npmName(path string) string {
	i := strings.LastIndex(path, "node_modules/")
	if i < 0 {
		return ""
	}
	return path[i+len("node_modules/"):]
}

// licenseField reads a license field: an SPDX string, or the legacy
// {"type": ...} object or [{"type": ...}] list (read as alternatives).
func licenseField(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct{ Type string }
	if json.Unmarshal(raw, &obj) == nil && obj.Type != "" {
		return obj.Type
	}
	var list []struct{ Type string }
	if json.Unmarshal(raw, &list) != nil {
		return ""
	}
	var types []string
	for _, l := range list {
		types = append(types, l.Type)
	}
	return strings.Join(types, " OR ")
}

// installedLicense reads license (or legacy licenses) from an installed
// package.json; "" when there is none.
func installedLicense(pkgJSON string) string {
	b, err := os.ReadFile(pkgJSON)
	if err != nil {
		return ""
	}
	var p struct{ License, Licenses json.RawMessage }
	if json.Unmarshal(b, &p) != nil {
		return ""
	}
	if l := licenseField(p.License); l != "" {
		return l
	}
	return licenseField(p.Licenses)
}
