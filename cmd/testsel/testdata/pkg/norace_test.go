//go:build !race

package pkg

import "testing"

const raceEnabled = false

func TestOnlyWithoutRace(t *testing.T) {}
