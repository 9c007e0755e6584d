package gateway

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// net/http, having sent a request body of known length, reads it once
// more to check for extra bytes; when the upstream answered first, that
// read comes after detach. It must see the body's end, not an error: a
// failed read closes the connection and cuts the upstream's answer (the
// conformance suite's tools-call-with-progress, through the gateway under
// load, got "no result in response body").
func TestClientBodyEndsAfterDetachWhenSentWhole(t *testing.T) {
	for _, tc := range []struct {
		name string
		body *clientBody
	}{
		{"streamed", &clientBody{rest: strings.NewReader("0123456789"), size: 10, metrics: noMetrics{}}},
		{"head only", &clientBody{head: []byte("0123456789"), size: 10, metrics: noMetrics{}}},
		{"head and rest", &clientBody{head: []byte("0123"), rest: strings.NewReader("456789"), size: 10, metrics: noMetrics{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := io.ReadAll(io.LimitReader(tc.body, 10))
			if err != nil || string(got) != "0123456789" {
				t.Fatalf("read %q, %v", got, err)
			}
			tc.body.detach()
			if n, err := tc.body.Read(make([]byte, 8)); n != 0 || err != io.EOF {
				t.Errorf("read after detach of a body sent whole: %d, %v; want 0, io.EOF", n, err)
			}
		})
	}
}

// A body not sent whole (or of unknown length) is still cut at detach.
func TestClientBodyCutAtDetachWhenNotSentWhole(t *testing.T) {
	for _, tc := range []struct {
		name string
		body *clientBody
	}{
		{"part sent", &clientBody{rest: strings.NewReader("0123456789"), size: 10, metrics: noMetrics{}}},
		{"unknown length", &clientBody{rest: strings.NewReader("0123456789"), size: -1, metrics: noMetrics{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.body.Read(make([]byte, 4)); err != nil {
				t.Fatal(err)
			}
			tc.body.detach()
			if _, err := tc.body.Read(make([]byte, 8)); !errors.Is(err, errDetached) {
				t.Errorf("read after detach: %v; want errDetached", err)
			}
		})
	}
}
