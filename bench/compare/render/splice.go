package render

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A run of one target (-only P6, -only P9) rewrites only that target's
// parts of RESULTS.md: its row of the Targets table, its why lines and its
// "## ID:" section, each taken from the file the run rendered. The rest
// stays as the last full run wrote it, so running one target never loses
// another's figures.

var whyID = regexp.MustCompile(`^- (P\d+)[ :]`)

// SpliceTargets returns old with the targets ids taken from fresh, and
// whether old had every part to replace (when not, the caller writes fresh
// whole). note goes at the top of each replaced section.
func SpliceTargets(old, fresh string, ids []string, note string) (string, bool) {
	out := old
	for _, id := range ids {
		row, ok := line(fresh, "| "+id+" |")
		if !ok {
			return "", false
		}
		if out, ok = replaceLine(out, "| "+id+" |", row); !ok {
			return "", false
		}
		sec, ok := section(fresh, id)
		if !ok {
			return "", false
		}
		head, body, _ := strings.Cut(sec, "\n\n")
		if out, ok = replaceSection(out, id, head+"\n\n"+note+"\n\n"+body); !ok {
			return "", false
		}
	}
	return replaceWhy(out, fresh, ids)
}

// line returns the line of s starting with prefix.
func line(s, prefix string) (string, bool) {
	for l := range strings.Lines(s) {
		if strings.HasPrefix(l, prefix) {
			return l, true
		}
	}
	return "", false
}

func replaceLine(s, prefix, with string) (string, bool) {
	old, ok := line(s, prefix)
	if !ok {
		return "", false
	}
	return strings.Replace(s, old, with, 1), true
}

// section returns "## ID: …" up to the next "## " heading or marker line.
func section(s, id string) (string, bool) {
	i := strings.Index(s, "\n## "+id+": ")
	if i < 0 {
		return "", false
	}
	rest := s[i+1:]
	end := len(rest)
	for _, stop := range []string{"\n## ", "\n<!-- "} {
		if j := strings.Index(rest[1:], stop); j >= 0 && j+1 < end {
			end = j + 1
		}
	}
	return rest[:end], true
}

func replaceSection(s, id, with string) (string, bool) {
	old, ok := section(s, id)
	if !ok {
		return "", false
	}
	if !strings.HasSuffix(with, "\n") {
		with += "\n"
	}
	return strings.Replace(s, old, with, 1), true
}

// replaceWhy rebuilds the why list under the Targets table: old's lines
// of other targets and fresh's of ids, in target order.
func replaceWhy(s, fresh string, ids []string) (string, bool) {
	start, end, ok := whyList(s)
	if !ok {
		return "", false
	}
	var lines []string
	for l := range strings.Lines(s[start:end]) {
		if m := whyID.FindStringSubmatch(l); m != nil && !slices.Contains(ids, m[1]) {
			lines = append(lines, l)
		}
	}
	if fs, fe, ok := whyList(fresh); ok {
		for l := range strings.Lines(fresh[fs:fe]) {
			if m := whyID.FindStringSubmatch(l); m != nil && slices.Contains(ids, m[1]) {
				lines = append(lines, l)
			}
		}
	}
	slices.SortStableFunc(lines, func(a, b string) int { return targetNumber(a) - targetNumber(b) })
	if len(lines) == 0 {
		lines = []string{"- (every measured target is met)\n"}
	}
	return s[:start] + strings.Join(lines, "") + s[end:], true
}

// whyList is the span of the "- …" lines after the Targets table's
// explanation paragraph.
func whyList(s string) (start, end int, ok bool) {
	i := strings.Index(s, "\nRatios are mcpblob ÷ reference")
	if i < 0 {
		return 0, 0, false
	}
	j := strings.Index(s[i+1:], "\n\n")
	if j < 0 {
		return 0, 0, false
	}
	start = i + 1 + j + 2
	k := strings.Index(s[start:], "\n\n")
	if k < 0 {
		return 0, 0, false
	}
	return start, start + k + 1, true
}

func targetNumber(l string) int {
	m := whyID.FindStringSubmatch(l)
	if m == nil {
		return 1 << 30
	}
	n, _ := strconv.Atoi(m[1][1:])
	return n
}
