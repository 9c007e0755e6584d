package fileargs

import (
	"bytes"
	"testing"
)

// The elicitation walk forwards the same bytes and reaches the same
// verdict whatever the chunking, never panics, and forwards exactly the
// input when no carrier is the gateway's: on any input.
func FuzzElicitChunking(f *testing.F) {
	f.Add([]byte(`{"result":{"content":{"doc":"data:application/pdf;base64,JVBERi0xLjcK"},"action":"accept"},"id":"C:\"a\""}`), uint8(3), false)
	f.Add([]byte(`{"params":{"inputResponses":{"C:\"k\"":{"content":{"doc":"data:text/plain,hi\u0041"}}}}}`), uint8(1), true)
	f.Add([]byte(`{"id":"C:[[[","result":{"content":{"doc":"data:,x","d":["\\"]}}}`), uint8(5), false)
	f.Fuzz(func(t *testing.T, msg []byte, size uint8, retry bool) {
		form := FormResponse
		if retry {
			form = FormRetry
		}
		whole, werr := feedAll(form, string(msg), len(msg)+1)
		parts, perr := feedAll(form, string(msg), int(size%16)+1)
		if (werr == nil) != (perr == nil) || (werr == nil && whole != parts) {
			t.Fatalf("whole: %q (%v); in chunks of %d: %q (%v)", whole, werr, size%16+1, parts, perr)
		}
		if werr == nil && !bytes.Contains(msg, []byte(`"C:`)) && whole != string(msg) {
			t.Fatalf("no carrier, yet forwarded %q for %q", whole, msg)
		}
		if werr == nil && len(whole) != len(msg) {
			t.Fatalf("forwarded %d bytes of %d", len(whole), len(msg))
		}
	})
}
