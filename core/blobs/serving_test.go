package blobs

import "testing"

func TestInert(t *testing.T) {
	for mt, want := range map[string]bool{
		"image/png": true, "IMAGE/PNG": true, "image/jpeg": true, "text/plain": true, "text/plain; charset=utf-8": true,
		"audio/mpeg": true, "video/mp4": true, "video/webm; codecs=vp9": true,
		"text/html": false, "application/xhtml+xml": false, "image/svg+xml": false, "text/xml": false,
		"application/xml": false, "text/javascript": false, "application/json": false, "application/pdf": false,
		"application/octet-stream": false, "": false, "text/plain, text/html": false, "text/plain;": true,
		"video/vnd.x+xml": false, "audio/xml": false, "text/css": false, "image/x-unknown": false,
	} {
		if got := Inert(mt); got != want {
			t.Errorf("Inert(%q) = %v, want %v", mt, got, want)
		}
		h := SafetyHeaders(mt)
		if h[0] != [2]string{"X-Content-Type-Options", "nosniff"} || (len(h) == 2) == want ||
			!want && h[1] != [2]string{"Content-Security-Policy", "sandbox; default-src 'none'"} {
			t.Errorf("SafetyHeaders(%q) = %v", mt, h)
		}
	}
}
