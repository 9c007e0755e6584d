package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// escape is the module cache's case encoding: each upper-case letter becomes
// '!' and its lower case (golang.org/x/mod/module.EscapePath).
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// unescape undoes escape.
func unescape(s string) string {
	var b strings.Builder
	bang := false
	for _, r := range s {
		switch {
		case r == '!':
			bang = true
			continue
		case bang && 'a' <= r && r <= 'z':
			r -= 'a' - 'A'
		}
		bang = false
		b.WriteRune(r)
	}
	return b.String()
}

// cachedVersions lists the versions of path extracted in the module cache.
func (g *graph) cachedVersions(path string) []string {
	matches, _ := filepath.Glob(filepath.Join(g.cache, escape(path)+"@*"))
	var versions []string
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.IsDir() {
			_, v, _ := strings.Cut(filepath.Base(m), "@")
			versions = append(versions, unescape(v))
		}
	}
	return versions
}

// moduleDirs finds each module's folder in the module cache, downloading
// those not there with one `go mod download`. A module it cannot find is in
// the second map instead, with the reason.
func moduleDirs(g *graph) (map[modKey]string, map[modKey]string, error) {
	dirs, failed := map[modKey]string{}, map[modKey]string{}
	var missing []string
	for k, m := range g.mods {
		dir := m.dir
		if dir == "" && k.version != "" {
			dir = filepath.Join(g.cache, escape(k.path)+"@"+escape(k.version))
		}
		if st, err := os.Stat(dir); dir != "" && err == nil && st.IsDir() {
			dirs[k] = dir
		} else if k.version == "" || k.version == "(devel)" {
			failed[k] = "built from a checkout of unknown version: nothing to find in the module cache"
		} else {
			missing = append(missing, k.String())
		}
	}
	if len(missing) > 0 {
		if err := download(missing, dirs, failed); err != nil {
			return nil, nil, err
		}
	}
	return dirs, failed, nil
}

// download runs `go mod download -json` on mods (path@version) in an empty
// folder, so no go.mod takes part, and records each folder or error.
func download(mods []string, dirs, failed map[modKey]string) error {
	tmp, err := os.MkdirTemp("", "licensecheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// go mod download exits 1 when one module fails; its JSON says which.
	out, _ := goCmdOutput(tmp, append([]string{"mod", "download", "-json"}, mods...)...)
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m struct{ Path, Version, Dir, Error string }
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("go mod download: %w", err)
		}
		k := modKey{m.Path, m.Version}
		if m.Error != "" || m.Dir == "" {
			failed[k] = "go mod download: " + m.Error
			continue
		}
		dirs[k] = m.Dir
	}
	for _, s := range mods {
		path, version, _ := strings.Cut(s, "@")
		if k := (modKey{path, version}); dirs[k] == "" && failed[k] == "" {
			failed[k] = "go mod download gave no folder"
		}
	}
	return nil
}

// licenceName matches the file names of licence texts at a module's root
// (LICENSE, LICENCE.md, COPYING, UNLICENSE, LICENSE-APACHE, MIT-LICENSE, ...).
var licenceName = regexp.MustCompile(`(?i)^((un)?licen[cs]e|copying)([-._][a-z0-9._-]*)?$|^[a-z0-9]+[-_]licen[cs]e(\.(md|txt))?$`)

// notText are extensions of files named like a licence that hold no licence
// text (LICENSE.minisig is a signature of LICENSE).
var notText = map[string]bool{".go": true, ".minisig": true, ".sig": true, ".asc": true}

// licenceFiles reads the licence texts at the root of dir.
func licenceFiles(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !licenceName.MatchString(name) || notText[strings.ToLower(filepath.Ext(name))] {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		files[name] = b
	}
	return files, nil
}
