//go:build !race

package blobdecode

const raceEnabled = false
