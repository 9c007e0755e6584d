//go:build !race

package tus

const raceEnabled = false
