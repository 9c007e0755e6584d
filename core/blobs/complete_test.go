package blobs

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
)

// TestCompletionPaging: completion/complete on the blob template returns at
// most 100 values, and when more keys match it says so: hasMore true and
// total either absent or the real count (at least the number of matches),
// never the number of values sent.
func TestCompletionPaging(t *testing.T) {
	t.Parallel()
	st := newLocalStore(t)
	var many, few []string
	for i := range 150 {
		k := fmt.Sprintf("regress-many/k%03d.txt", i)
		many = append(many, k)
		putBlob(t, st, k, "text/plain", []byte("x"))
	}
	for i := range 30 {
		k := fmt.Sprintf("regress-few/k%03d.txt", i)
		few = append(few, k)
		putBlob(t, st, k, "text/plain", []byte("x"))
	}
	slices.Sort(many)
	slices.Sort(few)
	s := newToolServer(t, st, mcp.Options{}, Options{})
	for _, era := range []string{legacyVersion, modernVersion} {
		t.Run(era, func(t *testing.T) {
			c := s.client(t, era, `{}`)
			checkCompletion(t, c, "regress-many/", many)
			checkCompletion(t, c, "regress-few/", few)
		})
	}
}

// checkCompletion completes prefix, under which the store holds keys.
func checkCompletion(t *testing.T, c *toolClient, prefix string, keys []string) {
	t.Helper()
	m, err := c.Call(t.Context(), "completion/complete", `{"ref":{"type":"ref/resource","uri":"blob:///{+key}"},"argument":{"name":"key","value":"`+prefix+`"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if m.Error != nil || m.Result == nil {
		t.Fatalf("prefix %q: error %s", prefix, m.Error)
	}
	var r struct {
		Completion struct {
			Values  []string `json:"values"`
			Total   *int     `json:"total"`
			HasMore *bool    `json:"hasMore"`
		} `json:"completion"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("prefix %q: %v: %s", prefix, err, m.Result)
	}
	got := r.Completion
	total, hasMore := "absent", "absent"
	if got.Total != nil {
		total = fmt.Sprint(*got.Total)
	}
	if got.HasMore != nil {
		hasMore = fmt.Sprint(*got.HasMore)
	}
	want := keys[:min(len(keys), 100)]
	if !slices.Equal(got.Values, want) {
		t.Errorf("prefix %q (%d matching keys): got %d values %q…, want the first %d keys in key order",
			prefix, len(keys), len(got.Values), got.Values[:min(len(got.Values), 3)], len(want))
	}
	if len(keys) > 100 {
		if got.HasMore == nil || !*got.HasMore {
			t.Errorf("prefix %q (%d matching keys, %d values sent): hasMore = %s, want true", prefix, len(keys), len(got.Values), hasMore)
		}
		if got.Total != nil && *got.Total < len(keys) {
			t.Errorf("prefix %q (%d matching keys, %d values sent): total = %s, want absent or >= %d", prefix, len(keys), len(got.Values), total, len(keys))
		}
	} else {
		if got.HasMore != nil && *got.HasMore {
			t.Errorf("prefix %q (%d matching keys): hasMore = true, want false or absent", prefix, len(keys))
		}
		if got.Total != nil && *got.Total != len(keys) {
			t.Errorf("prefix %q (%d matching keys): total = %s, want %d or absent", prefix, len(keys), total, len(keys))
		}
	}
	t.Logf("prefix %q: %d matching keys -> %d values, hasMore %s, total %s", prefix, len(keys), len(got.Values), hasMore, total)
}
