package main

import (
	"regexp"
	"slices"
	"testing"
)

func TestPicked(t *testing.T) {
	p, err := loadDir("testdata/pkg")
	if err != nil {
		t.Fatal(err)
	}
	if p.global {
		t.Errorf("testdata/pkg: global set, want the tests picked one by one")
	}
	got := p.picked()
	slices.Sort(got)
	want := []string{"ExampleDirect", "TestDirect", "TestFlag", "TestOnlyWithoutRace", "TestThroughHelpers", "TestThroughMethod"}
	if !slices.Equal(got, want) {
		t.Errorf("picked %v, want %v", got, want)
	}
}

func TestTestMainMakesItWhole(t *testing.T) {
	p, err := loadDir("testdata/global")
	if err != nil {
		t.Fatal(err)
	}
	p.picked()
	if !p.global {
		t.Errorf("TestMain reads testing.Short, but the package's tests were picked one by one")
	}
}

func TestRunPattern(t *testing.T) {
	re := regexp.MustCompile(runPattern([]string{"TestB", "TestA", "TestA"}))
	for name, want := range map[string]bool{"TestA": true, "TestB": true, "TestAB": false, "XTestA": false, "TestC": false} {
		if re.MatchString(name) != want {
			t.Errorf("%q matched %v, want %v (pattern %s)", name, !want, want, re)
		}
	}
	if runPattern(nil) != "^$" {
		t.Errorf("no tests: pattern %q, want ^$", runPattern(nil))
	}
}
