package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// config names what to check; the paths are resolved against root.
type config struct {
	root         string   // repository root
	modules      []string // folders holding a go.mod, relative to root; default: git ls-files
	ship         string   // package pattern of the root module whose build graph is shipped
	toolsDir     string   // installed tool binaries
	makefile     string   // Makefile whose $(TOOLBIN)/name rules list the tools that must be there
	npmLock      string   // package-lock.json of the npm packages the tests install ("" for none)
	npmInstalled string   // folder that lock file was installed into
	allowFile    string   // allow-list ("" for none)
}

// resolve fills in root and the module folders and makes the other paths
// absolute.
func (c *config) resolve() error {
	if c.root == "" {
		out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
		if err != nil {
			return fmt.Errorf("finding the repository root: %w", err)
		}
		c.root = strings.TrimSpace(string(out))
	}
	root, err := filepath.Abs(c.root)
	if err != nil {
		return err
	}
	c.root = root
	if c.modules == nil {
		if c.modules, err = gitModules(root); err != nil {
			return err
		}
	}
	for _, p := range []*string{&c.toolsDir, &c.makefile, &c.npmLock, &c.npmInstalled, &c.allowFile} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(root, *p)
		}
	}
	return nil
}

// gitModules lists the folders of the repository's go.mod files, the root
// module first.
func gitModules(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "--", "*go.mod")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w", root, err)
	}
	dirs := []string{"."}
	for _, f := range strings.Fields(string(out)) {
		if filepath.Base(f) != "go.mod" || f == "go.mod" {
			continue
		}
		dirs = append(dirs, filepath.Dir(f))
	}
	return dirs, nil
}
