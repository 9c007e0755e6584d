//go:build race

package codec

// raceEnabled trims the largest table tests, which the race detector slows
// down twentyfold; the default leg runs them in full.
const raceEnabled = true
