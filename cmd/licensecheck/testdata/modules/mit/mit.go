// Package mit is a fixture module the licence check tests serve from a
// file proxy; its go.mod and, for agpl, its LICENSE are written by the test.
package mit
