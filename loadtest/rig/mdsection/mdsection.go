// Package mdsection rewrites one generated section of a markdown file, the
// lines between "<!-- NAME:begin -->" and "<!-- NAME:end -->", leaving the
// rest of the file as it is, so several programs can write one RESULTS.md.
package mdsection

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Markers returns the begin and end lines of section name.
func Markers(name string) (begin, end string) {
	return "<!-- " + name + ":begin -->", "<!-- " + name + ":end -->"
}

// Extract returns the body of section name in s, and whether s has it.
func Extract(s, name string) (string, bool) {
	begin, end := Markers(name)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j <= i {
		return "", false
	}
	return s[i+len(begin)+1 : j], true
}

// Rewrite replaces the body of section name in file with body (a string
// ending in a newline), appending the section when the file has none.
func Rewrite(file, name, body string) error {
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	begin, end := Markers(name)
	section := begin + "\n" + body + end
	s := string(old)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	switch {
	case i >= 0 && j > i:
		s = s[:i] + section + s[j+len(end):]
	case i >= 0 || j >= 0:
		return fmt.Errorf("%s: only one of %s and %s present", file, begin, end)
	default:
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		if s != "" {
			s += "\n"
		}
		s += section + "\n"
	}
	return os.WriteFile(file, []byte(s), 0o644)
}
