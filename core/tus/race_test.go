//go:build race

package tus

const raceEnabled = true
