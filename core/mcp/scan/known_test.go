package scan

import (
	"strings"
	"testing"
	"testing/iotest"
)

// TestKnownKeysAndPaths holds the constant keys and paths to what the
// general code builds: a typo in either table would route a member to the
// wrong place.
func TestKnownKeysAndPaths(t *testing.T) {
	keys := []string{"jsonrpc", "id", "method", "params", "uri", "name", "arguments", "cursor", "_meta",
		"progressToken", "key", "version", metaProtocol, metaCapabilities, metaClientInfo}
	for _, k := range keys {
		if got := knownKey([]byte(k)); got != k {
			t.Errorf("knownKey(%q) = %q", k, got)
		}
	}
	for _, k := range []string{"", "ur", "uri ", "Method", "params/"} {
		if got := knownKey([]byte(k)); got != "" {
			t.Errorf("knownKey(%q) = %q, want none", k, got)
		}
	}
	for _, parent := range []string{"", "/params", "/params/_meta", "/params/arguments", "/x"} {
		for _, k := range append(keys, "a/b", "~", "other") {
			if got, want := memberPath(parent, k), parent+"/"+PathElem(k); got != want {
				t.Errorf("memberPath(%q, %q) = %q, want %q", parent, k, got, want)
			}
		}
	}
}

// TestHoldBufferedMatchesStream scans strings that the fast path takes
// (closing quote buffered, no escape) and ones it leaves to the stream
// (escapes, a body split mid-string) and checks both give the same message.
func TestHoldBufferedMatchesStream(t *testing.T) {
	opts := Options{MaxBodyBytes: 1 << 20, MaxFileBytes: 1 << 20, SpoolDir: t.TempDir()}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":"a\"b","method":"x\\y","params":{"uri":"blob:///k\u00e9y","k\n":""}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		`{"a":"","b":"é","c":["x","y\u0041"]}`,
	} {
		whole, err := Read(strings.NewReader(body), opts, nil)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		trickled, err := Read(iotest.OneByteReader(strings.NewReader(body)), opts, nil)
		if err != nil {
			t.Fatalf("%s (one byte at a time): %v", body, err)
		}
		if string(whole.Raw) != string(trickled.Raw) || whole.Method != trickled.Method {
			t.Errorf("%s: buffered %s (%q), streamed %s (%q)", body, whole.Raw, whole.Method, trickled.Raw, trickled.Method)
		}
		whole.Files.Release()
		trickled.Files.Release()
	}
}

// TestHoldBufferedControlCharacter: a raw control character ends the fast
// path's search like an escape, and the stream path refuses it.
func TestHoldBufferedControlCharacter(t *testing.T) {
	opts := Options{MaxBodyBytes: 1 << 20, MaxFileBytes: 1 << 20, SpoolDir: t.TempDir()}
	m, err := Read(strings.NewReader("{\"method\":\"a\x01b\"}"), opts, nil)
	m.Files.Release()
	if err == nil || !strings.Contains(err.Error(), "control character") {
		t.Fatalf("err = %v, want the control character refused", err)
	}
}
