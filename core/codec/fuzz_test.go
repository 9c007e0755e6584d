package codec

import (
	"bytes"
	"encoding/base64"
	"errors"
	"math/rand/v2"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// The fuzz targets use encoding/base64 (and net/url for percent-decoding) as
// the oracle and run every tier the machine has on each input. Checks put
// canary bytes past len(dst) (see withCanary).

func fuzzSeeds(f *testing.F, add func(b []byte)) {
	for _, n := range []int{0, 1, 2, 3, 4, 15, 16, 17, 47, 48, 49, 63, 64, 65, 100, 200, 1000} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + n)
		}
		add(b)
	}
}

func FuzzEncode(f *testing.F) {
	fuzzSeeds(f, func(b []byte) { f.Add(b, uint64(len(b))) })
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		rnd := rand.New(rand.NewPCG(seed, 1))
		for _, tier := range testTiers() {
			restore := selectTier(t, tier)
			for _, p := range pairs {
				checkEncode(t, p, data)
				// Streamed in random pieces.
				var buf bytes.Buffer
				w := NewEncoder(p.ours, &buf)
				for rest := data; len(rest) > 0; {
					k := min(len(rest), 1+rnd.IntN(len(data)))
					w.Write(rest[:k])
					rest = rest[k:]
				}
				w.Close()
				if want := p.std.EncodeToString(data); buf.String() != want {
					diff(t, tier+" "+p.name+" NewEncoder", buf.Bytes(), []byte(want))
				}
			}
			restore()
		}
	})
}

func FuzzDecode(f *testing.F) {
	fuzzSeeds(f, func(b []byte) {
		enc := []byte(base64.StdEncoding.EncodeToString(b))
		f.Add(enc, uint16(0), byte('A'))
		f.Add(insertAt(enc, "\r\n", 5, 64, 76), uint16(len(enc)/2), byte('='))
		f.Add(b, uint16(len(b)), byte(0x80))
	})
	f.Fuzz(func(t *testing.T, data []byte, pos uint16, c byte) {
		for _, tier := range testTiers() {
			restore := selectTier(t, tier)
			for _, p := range pairs {
				checkDecode(t, p, data)
				// A valid encoding with one byte changed: long clean
				// prefixes for the kernels, an error deep inside.
				enc := []byte(p.std.EncodeToString(data))
				if len(enc) > 0 {
					enc[int(pos)%len(enc)] = c
				}
				checkDecode(t, p, enc)
			}
			restore()
		}
	})
}

func FuzzStreamDecode(f *testing.F) {
	fuzzSeeds(f, func(b []byte) {
		enc := []byte(base64.StdEncoding.EncodeToString(b))
		f.Add(enc, uint64(len(b)))
		f.Add(insertAt(enc, "\n", 3, 50), uint64(1))
		f.Add(append(enc, "QQ==x"...), uint64(2))
	})
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		rnd := rand.New(rand.NewPCG(seed, 2))
		for _, tier := range testTiers() {
			restore := selectTier(t, tier)
			// Stream plumbing does not depend on the alphabet: one padded,
			// one unpadded and one custom encoding keep the target fast.
			for _, p := range []pair{pairs[0], pairs[3], pairs[6]} {
				checkStreamDecode(t, p, data, rnd)
				enc := []byte(p.std.EncodeToString(data))
				if len(enc) > 0 && seed%3 == 0 {
					enc[int(seed>>8)%len(enc)] = byte(seed >> 32)
				}
				checkStreamDecode(t, p, enc, rnd)
			}
			restore()
		}
	})
}

func FuzzDataURI(f *testing.F) {
	for _, s := range []string{
		"data:,hello", "data:;base64,aGk=", "data:image/png;base64,iVBORw0KGgo=",
		"DATA:Text/Plain;Charset=UTF-8,a%20b", "data:text/plain;x=%41;base64,aGVs\r\nbG8=",
		"data:text/plain,%zz", "data:image/png;base64,iVBO%3D", "data:x,", "http://x",
		"data:a/b;base64,QQ==QUJD", "data:a/b;c=d;base64;e=f,", "data:image/png;base64,",
	} {
		f.Add(s, uint64(len(s)))
	}
	f.Fuzz(func(t *testing.T, s string, seed uint64) {
		rnd := rand.New(rand.NewPCG(seed, 3))
		for _, tier := range testTiers() {
			restore := selectTier(t, tier)
			checkDataURI(t, s)
			checkReaderMatches(t, s, rnd)
			restore()
		}
	})
}

// checkDataURI checks ParseDataURI against the oracles and the redaction
// rules.
func checkDataURI(t *testing.T, s string) {
	d, err := ParseDataURI(s)
	comma := strings.IndexByte(s, ',')
	payload, header := "", s
	if comma >= 0 {
		payload, header = s[comma+1:], s[:comma]
	}
	// Neither errors nor redacted forms contain the payload.
	if len(payload) >= 12 && !strings.Contains(header, payload) && strings.HasPrefix(strings.ToLower(s), "data:") {
		if err != nil && strings.Contains(err.Error(), payload) {
			t.Fatalf("error %q contains the payload", err)
		}
		// The redacted form keeps the header, normalized (it says what was
		// sent); the payload must not be in what follows it. A payload that
		// spells the header's own text ("data:0/png;base64,/png;base64,")
		// is found in the header, not leaked.
		r := RedactDataURI(s)
		head, tail, ok := strings.Cut(r, ",")
		inHeader := strings.Contains(strings.ToLower(header+","), strings.ToLower(payload))
		if (ok && strings.Contains(tail, payload)) || (strings.Contains(head, payload) && !inHeader) {
			t.Fatalf("RedactDataURI = %q contains the payload", r)
		}
		if err == nil && strings.Contains(d.String(), payload) {
			t.Fatalf("DataURI.String() = %q contains the payload", d.String())
		}
	}
	var de *DataURIError
	if err != nil && !errors.As(err, &de) {
		t.Fatalf("error %T %v is not a *DataURIError", err, err)
	}
	if len(s) < 5 || !strings.EqualFold(s[:5], "data:") || comma < 0 || comma > 5+MaxDataURIHeader {
		if err == nil {
			t.Fatalf("ParseDataURI(%q) accepted a bad scheme, no ',' or a long header", RedactDataURI(s))
		}
		return
	}
	h, herr := parseDataURIHeader(s[5:comma])
	if herr != nil {
		if err == nil || err.Error() != herr.Error() {
			t.Fatalf("header error %v, ParseDataURI error %v", herr, err)
		}
		return
	}
	if err == nil {
		if !reflect.DeepEqual(d.DataURIHeader, h) {
			t.Fatalf("header %#v, want %#v", d.DataURIHeader, h)
		}
		// The formatted header parses back to itself.
		h2, err := parseDataURIHeader(h.String())
		if err != nil || !reflect.DeepEqual(h2, h) {
			t.Fatalf("header %#v formats as %q, which parses as %#v, %v", h, h.String(), h2, err)
		}
		if h.MediaType != strings.ToLower(h.MediaType) {
			t.Fatalf("media type %q not lower-case", h.MediaType)
		}
	}
	if h.Base64 {
		want, werr := streamOracle(pair{"std", StdEncoding, base64.StdEncoding}, []byte(payload))
		var got error
		if err != nil {
			got = de.Err
		}
		if got != werr {
			t.Fatalf("ParseDataURI(%q): base64 error %v, want %v", RedactDataURI(s), got, werr)
		}
		if err == nil && !bytes.Equal(d.Data, want) {
			t.Fatalf("ParseDataURI(%q): payload mismatch", RedactDataURI(s))
		}
		if err == nil {
			if _, serr := base64.StdEncoding.DecodeString(payload); serr != nil {
				t.Fatalf("accepted a payload base64.StdEncoding rejects: %v", serr)
			}
		}
		return
	}
	want, werr := url.PathUnescape(payload)
	if (err == nil) != (werr == nil) {
		t.Fatalf("ParseDataURI(%q) error %v, url.PathUnescape error %v", RedactDataURI(s), err, werr)
	}
	if err == nil && string(d.Data) != want {
		t.Fatalf("ParseDataURI(%q) payload %q, want %q", RedactDataURI(s), d.Data, want)
	}
}
