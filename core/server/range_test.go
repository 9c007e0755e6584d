package server

import (
	"bytes"
	"fmt"
	"testing"
)

// TestRangeRFC9110 sends Range fields at RFC 9110's edges to /v1/blobs
// and to a download link on both stores: a last-pos past int64 is clipped
// (206), a first-pos past int64 is unsatisfiable (416), the unit is
// case-insensitive, a signed position makes the field invalid (ignored:
// 200), and several ranges that touch are served as one.
func TestRangeRFC9110(t *testing.T) {
	parallel(t)
	data := randomBytes(1000)
	n := len(data)
	for _, be := range byteplaneBackends() {
		t.Run(be.name, func(t *testing.T) {
			c := newBPClient(t, Options{Backend: be.new(t)})
			if r := c.put("r/data.bin", data, nil); r.status != 201 {
				t.Fatalf("PUT: %d %s", r.status, r.body)
			}
			for _, u := range []string{"/v1/blobs/r/data.bin", c.link("r/data.bin", "")} {
				for _, tc := range []struct {
					field  string
					status int
					body   []byte
					cr     string
				}{
					{"bytes=0-99999999999999999999", 206, data, fmt.Sprintf("bytes 0-%d/%d", n-1, n)},
					{"bytes=99999999999999999999-", 416, nil, fmt.Sprintf("bytes */%d", n)},
					{"BYTES=1-5", 206, data[1:6], fmt.Sprintf("bytes 1-5/%d", n)},
					{"bytes=+5-10", 200, data, ""},
					{"bytes=-99999999999999999999", 206, data, fmt.Sprintf("bytes 0-%d/%d", n-1, n)},
					{"bytes= 1-5", 200, data, ""},
					{"bytes=10-19, 20-29", 206, data[10:30], fmt.Sprintf("bytes 10-29/%d", n)},
					{"bytes=0-0,5-6", 200, data, ""},
					{"bytes=2000-,3000-", 416, nil, fmt.Sprintf("bytes */%d", n)},
				} {
					r := c.do("GET", u, nil, map[string]string{"Range": tc.field})
					if r.status != tc.status || r.header.Get("Content-Range") != tc.cr || tc.body != nil && !bytes.Equal(r.body, tc.body) {
						t.Errorf("GET %.20s with Range %q: %d %q (%d bytes), want %d %q (%d bytes)",
							u, tc.field, r.status, r.header.Get("Content-Range"), len(r.body), tc.status, tc.cr, len(tc.body))
					}
				}
			}
		})
	}
}
