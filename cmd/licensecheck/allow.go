package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// allowList maps a module path (or npm:name) to the reason its problems are
// accepted. It excuses a missing or unknown licence text or a licence off the
// accepted list, never a denied one.
type allowList struct {
	reasons map[string]string
	used    map[string]bool
}

// readAllowList reads lines of "module-path reason...", # comments and
// blank lines; an entry without a reason is an error.
func readAllowList(path string) (*allowList, error) {
	a := &allowList{reasons: map[string]string{}, used: map[string]bool{}}
	if path == "" {
		return a, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		if reason = strings.TrimSpace(reason); reason == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason", path, n, name)
		}
		if _, dup := a.reasons[name]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", path, n, name)
		}
		a.reasons[name] = reason
	}
	return a, sc.Err()
}

// apply excuses r's problems when r is on the list and not denied.
func (a *allowList) apply(r *row) {
	reason, ok := a.reasons[r.name]
	if !ok {
		return
	}
	a.used[r.name] = true
	if len(r.problems) > 0 && !r.denied {
		r.allowed = reason
	}
}

// unused lists the entries no row matched.
func (a *allowList) unused() []string {
	var names []string
	for n := range a.reasons {
		if !a.used[n] {
			names = append(names, n)
		}
	}
	return names
}
