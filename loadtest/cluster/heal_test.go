package main

import (
	"slices"
	"testing"
)

func TestVolumeIDs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
	}{
		{" ", nil},
		{"4", []int{4}},
		{"1-3 5 7-8", []int{1, 2, 3, 5, 7, 8}},
	} {
		got, err := volumeIDs(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("volumeIDs(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"1-", "x", "3-1", "1 ..."} {
		if ids, err := volumeIDs(bad); err == nil {
			t.Errorf("volumeIDs(%q) = %v, want an error", bad, ids)
		}
	}
}
