//go:build !race

package byterange

import "testing"

// Select runs on every ranged GET: it must not allocate for up to four
// ranges.
func TestSelectAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { Select("bytes=0-4, 5-9, 10-20", 100) }); n != 0 {
		t.Errorf("Select allocates %v times", n)
	}
}
