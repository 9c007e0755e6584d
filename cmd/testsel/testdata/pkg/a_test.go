package pkg

import "testing"

func TestDirect(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
}

func TestThroughHelpers(t *testing.T) { _ = size(t) }

func size(t *testing.T) int { return deeper() }

func deeper() int {
	if raceEnabled {
		return 1
	}
	return 2
}

func TestThroughMethod(t *testing.T) { var r rig; r.big() }

type rig struct{}

func (rig) big() bool { return testing.Short() }

func TestUnrelated(t *testing.T) { _ = plain() }

func plain() int { return 3 }

func TestFlag(t *testing.T) { _ = flagLookup("test.short") }

func flagLookup(string) bool { return false }

func Testlower(t *testing.T) { _ = testing.Short() }

func ExampleDirect() { _ = testing.Short() }
