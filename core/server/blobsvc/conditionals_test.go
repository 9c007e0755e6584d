package blobsvc

import (
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

func TestConditionals(t *testing.T) {
	t.Parallel()
	mod := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	info := storage.Info{ETag: `"abc"`, ModTime: mod.Add(300 * time.Millisecond)}
	for _, tc := range []struct {
		list string
		want bool
	}{{`"abc"`, true}, {`W/"abc"`, true}, {`"x", "abc"`, true}, {`*`, true}, {`"abcd"`, false}, {``, false}} {
		if got := etagMatch(tc.list, info.ETag); got != tc.want {
			t.Errorf("etagMatch(%q) = %v", tc.list, got)
		}
	}
	for _, tc := range []struct {
		v    string
		want bool
	}{{`"abc"`, true}, {`W/"abc"`, false}, {`"other"`, false}, {mod.Format("Mon, 02 Jan 2006 15:04:05 GMT"), true},
		{mod.Add(time.Second).Format("Mon, 02 Jan 2006 15:04:05 GMT"), false}, {"garbage", false}, {"", true}} {
		if got := ifRangeHolds(tc.v, info); got != tc.want {
			t.Errorf("ifRangeHolds(%q) = %v", tc.v, got)
		}
	}
}
