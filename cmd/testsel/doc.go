// Command testsel picks, in packages' test files, the tests that do
// something else without -race -short: the ones make test-full reruns at
// full size after make test-race ran every test with -race -short.
//
//	go run ./cmd/testsel [-whole] DIR...
//
// A test is picked when its function reads testing.Short, the test.short
// flag or raceEnabled (the race_test.go/norace_test.go constant), when it
// calls a function of its package that does, however deep, or when its
// file has a build constraint naming race. Calls are matched by name,
// methods included, so a name shared with such a function picks the test
// too: a test picked that need not be costs time, one missed costs
// coverage.
//
// Printed: one -run pattern matching every test picked in the DIRs. With
// -whole, instead the DIRs whose tests cannot be picked one by one: none
// is picked (so something else, such as a library the test binary links,
// put the package on the list), or TestMain or a package-level variable
// reads one of the switches, which can change any test.
package main
