package main

import (
	"sort"
)

// row is one line of the table: a module version or an npm package.
type row struct {
	name, version string
	use           use
	via           []string
	verdict
	allowed string // the allow-list's reason when it excuses the problems
}

// status is ok, allow (problems the allow-list excuses) or FAIL.
func (r row) status() string {
	switch {
	case len(r.problems) == 0:
		return "ok"
	case r.allowed != "":
		return "allow"
	}
	return "FAIL"
}

// collect loads every build graph cfg names, classifies each module's
// licence texts and each npm package's license field, and returns the rows
// sorted by name and version.
func collect(cfg config) ([]row, error) {
	g, err := newGraph()
	if err != nil {
		return nil, err
	}
	if err := g.addRepoModules(cfg); err != nil {
		return nil, err
	}
	if err := g.addTools(cfg.toolsDir, cfg.makefile); err != nil {
		return nil, err
	}
	rows, err := moduleRows(g)
	if err != nil {
		return nil, err
	}
	npm, err := npmRows(cfg.npmLock, cfg.npmInstalled)
	if err != nil {
		return nil, err
	}
	rows = append(rows, npm...)
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].name != rows[j].name {
			return rows[i].name < rows[j].name
		}
		return rows[i].version < rows[j].version
	})
	return rows, nil
}

// moduleRows classifies the licence files of every module in g.
func moduleRows(g *graph) ([]row, error) {
	dirs, failed, err := moduleDirs(g)
	if err != nil {
		return nil, err
	}
	var rows []row
	for k, m := range g.mods {
		r := row{name: k.path, version: k.version, use: m.use, via: m.sortedVia()}
		if why, ok := failed[k]; ok {
			r.verdict = verdict{licence: "?", problems: []string{why}}
			rows = append(rows, r)
			continue
		}
		files, err := licenceFiles(dirs[k])
		if err != nil {
			return nil, err
		}
		r.verdict = classifyFiles(files)
		rows = append(rows, r)
	}
	return rows, nil
}
