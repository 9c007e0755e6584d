package gateway

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// After detach, a body sent whole ends with io.EOF (net/http reads once
// more past the declared length; an error there closed the upstream
// connection under an answer already on its way), and a body cut short
// fails.
func TestClientBodyAfterDetach(t *testing.T) {
	cases := []struct {
		name    string
		head    string
		rest    string
		want    int64
		readAll bool
		wantErr error
	}{
		{"declared length sent", `{"a":`, `1}`, 7, true, io.EOF},
		{"whole in head", `{"a":1}`, "", 7, true, io.EOF},
		{"chunked, rest ended", `{"a":`, `1}`, -1, true, io.EOF},
		{"declared length cut", `{"a":`, `1}`, 7, false, errDetached},
		{"chunked, not ended", `{"a":`, `1}`, -1, false, errDetached},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := &clientBody{head: []byte(tc.head), want: tc.want, metrics: noMetrics{}}
			if tc.rest != "" || tc.head != `{"a":1}` {
				b.rest = strings.NewReader(tc.rest)
			}
			buf := make([]byte, 5)
			if tc.readAll {
				if _, err := io.ReadAll(io.LimitReader(b, 7)); err != nil {
					t.Fatal(err)
				}
				if tc.want < 0 {
					_, _ = b.Read(buf) // the reader's own io.EOF
				}
			} else {
				_, _ = b.Read(buf)
			}
			b.detach()
			if _, err := b.Read(buf); !errors.Is(err, tc.wantErr) {
				t.Fatalf("read after detach: %v, want %v", err, tc.wantErr)
			}
		})
	}
}
