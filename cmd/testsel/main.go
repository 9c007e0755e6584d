package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

func main() {
	whole := flag.Bool("whole", false, "print the directories whose tests cannot be picked one by one")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: testsel [-whole] DIR...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	var tests, wholeDirs []string
	for _, dir := range flag.Args() {
		p, err := loadDir(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsel:", err)
			os.Exit(1)
		}
		picked := p.picked()
		if p.global || len(picked) == 0 {
			wholeDirs = append(wholeDirs, dir)
			continue
		}
		tests = append(tests, picked...)
	}
	if *whole {
		fmt.Println(strings.Join(wholeDirs, "\n"))
		return
	}
	fmt.Println(runPattern(tests))
}

// runPattern is the -run pattern matching exactly the top-level tests
// named (subtests included); one that matches nothing when there are none.
func runPattern(tests []string) string {
	slices.Sort(tests)
	tests = slices.Compact(tests)
	if len(tests) == 0 {
		return "^$"
	}
	quoted := make([]string, len(tests))
	for i, t := range tests {
		quoted[i] = regexp.QuoteMeta(t)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}
