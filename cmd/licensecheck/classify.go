package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/google/licensecheck"
)

// accepted are the licences a dependency may carry (SPDX ids, as
// licensecheck names them): permissive ones, MPL-2.0 (file-level copyleft:
// a change to an MPL file is shared, the rest of the program is not bound),
// the public-domain-like dedications, and CC-BY-4.0 (attribution only; some
// modules put their documentation under it beside the code's licence).
// BSD-2-Clause-Views is BSD-2-Clause with a sentence that the views in the
// software are the authors' own.
var accepted = map[string]bool{
	"MIT": true, "MIT-0": true, "BSD-2-Clause": true, "BSD-2-Clause-Views": true, "BSD-3-Clause": true,
	"Apache-2.0": true, "ISC": true, "MPL-2.0": true, "Zlib": true,
	"0BSD": true, "Unlicense": true, "CC0-1.0": true, "BlueOak-1.0.0": true,
	"CC-BY-4.0": true,
}

// deniedPrefixes are the licence families that fail even on the allow-list:
// AGPL, SSPL, BUSL and the Commons Clause (what licensecheck types as
// ShareServer or NonCommercial fails the same way; see isDenied).
var deniedPrefixes = []string{"AGPL", "SSPL", "BUSL", "CommonsClause", "Commons-Clause"}

// minCoverage is the share of a licence file's words the recognised licences
// must cover (pkgsite's threshold); below it the text is unknown.
const minCoverage = 75

// isDenied reports whether the SPDX id is one of the denied families.
func isDenied(id string) bool {
	for _, p := range deniedPrefixes {
		if len(id) >= len(p) && strings.EqualFold(id[:len(p)], p) {
			return true
		}
	}
	return false
}

// isAccepted reports whether the SPDX id is on the accepted list (case
// insensitive, as SPDX ids are).
func isAccepted(id string) bool {
	for a := range accepted {
		if strings.EqualFold(a, id) {
			return true
		}
	}
	return false
}

// verdict is what the licence texts of one module (or the license field of
// one npm package) come to.
type verdict struct {
	licence  string   // the licences found, "+"-joined, or "none"/"unknown"
	problems []string // why it fails; empty when acceptable
	denied   bool     // a denied licence: the allow-list cannot excuse it
}

// classifyFiles classifies each licence text with licensecheck. Every file
// must be recognised (coverage ≥ minCoverage) and name only accepted
// licences; a module with no licence file fails.
func classifyFiles(files map[string][]byte) verdict {
	if len(files) == 0 {
		return verdict{licence: "none", problems: []string{"no licence file"}}
	}
	var v verdict
	ids := map[string]bool{}
	for _, name := range sortedNames(files) {
		cov := licensecheck.Scan(files[name])
		for _, m := range cov.Match {
			ids[m.ID] = true
			v.checkMatch(name, m)
		}
		if cov.Percent < minCoverage {
			ids["unknown"] = true
			v.add(fmt.Sprintf("%s: unknown text (%.0f%% recognised)", name, cov.Percent))
		}
	}
	v.licence = joinSorted(ids)
	return v
}

// checkMatch adds the problem of one recognised licence, if any.
func (v *verdict) checkMatch(file string, m licensecheck.Match) {
	switch {
	case isDenied(m.ID) || m.Type&(licensecheck.ShareServer|licensecheck.NonCommercial) != 0:
		v.denied = true
		v.add(fmt.Sprintf("%s: %s is denied", file, m.ID))
	case !isAccepted(m.ID):
		v.add(fmt.Sprintf("%s: %s is not on the accepted list", file, m.ID))
	}
}

// add records a problem once.
func (v *verdict) add(problem string) {
	for _, p := range v.problems {
		if p == problem {
			return
		}
	}
	v.problems = append(v.problems, problem)
}

func sortedNames(files map[string][]byte) []string {
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func joinSorted(set map[string]bool) string {
	var s []string
	for k := range set {
		s = append(s, k)
	}
	sort.Strings(s)
	return strings.Join(s, "+")
}
