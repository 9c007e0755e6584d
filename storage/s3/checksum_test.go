package s3

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"regexp"
	"sync"
	"testing"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/storagetest"
)

// tamperTransport records the payload headers of part uploads and, when
// damage is set, flips one byte of every part's body on its way to the
// server, as a faulty link or proxy would.
type tamperTransport struct {
	damage bool

	mu      sync.Mutex
	content []string // X-Amz-Content-Sha256 of each part request
	crc     []string // X-Amz-Checksum-Crc32c of each part request
}

func (tt *tamperTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !isPart(r) {
		return http.DefaultTransport.RoundTrip(r)
	}
	tt.mu.Lock()
	tt.content = append(tt.content, r.Header.Get("X-Amz-Content-Sha256"))
	tt.crc = append(tt.crc, r.Header.Get(headerChecksumCRC32C))
	tt.mu.Unlock()
	if tt.damage && r.Body != nil {
		r = r.Clone(r.Context())
		r.Body = &flipByte{ReadCloser: r.Body, at: 1000}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// flipByte inverts the byte at offset at of the body it reads.
type flipByte struct {
	io.ReadCloser
	at, off int64
}

func (f *flipByte) Read(p []byte) (int, error) {
	n, err := f.ReadCloser.Read(p)
	if i := f.at - f.off; i >= 0 && i < int64(n) {
		p[i] ^= 0xff
	}
	f.off += int64(n)
	return n, err
}

var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestPartsGuardedInTransit: by default parts go unsigned with a CRC32C,
// with SignPayloads signed with their SHA-256; either way the service
// refuses a part damaged on the way, and the upload leaves nothing behind.
func TestPartsGuardedInTransit(t *testing.T) {
	data := storagetest.Bytes(9, 0, 2*testPartSize+77)
	for _, signed := range []bool{false, true} {
		name := map[bool]string{false: "crc32c", true: "signed"}[signed]
		t.Run(name+"/intact", func(t *testing.T) {
			tt := &tamperTransport{}
			s := newStore(t, Options{PartSize: testPartSize, SignPayloads: signed, Transport: tt})
			info, err := writeAll(t.Context(), s, "k", data, storage.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if info.SHA256 != hexSum(data) {
				t.Errorf("SHA256 = %s, want %s", info.SHA256, hexSum(data))
			}
			checkPartHeaders(t, tt, signed)
			rc, _, err := s.Open(t.Context(), "k", nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("read back %d bytes (%v), want the %d written", len(got), err, len(data))
			}
		})
		t.Run(name+"/damaged", func(t *testing.T) {
			tt := &tamperTransport{damage: true}
			s := newStore(t, Options{PartSize: testPartSize, SignPayloads: signed, Transport: tt})
			_, err := writeAll(t.Context(), s, "k", data, storage.CreateOptions{})
			if err == nil {
				t.Fatal("upload with damaged parts succeeded")
			}
			t.Logf("refused: %v", err)
			if _, err := s.Stat(t.Context(), "k"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("Stat after the refused upload: %v, want ErrNotFound", err)
			}
			if left := leftovers(t, s); len(left) != 0 {
				t.Errorf("left behind: %q", left)
			}
		})
	}
}

func checkPartHeaders(t *testing.T, tt *tamperTransport, signed bool) {
	t.Helper()
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if len(tt.content) != 3 {
		t.Fatalf("%d part requests, want 3", len(tt.content))
	}
	for i := range tt.content {
		switch {
		case signed && (!hexSHA256.MatchString(tt.content[i]) || tt.crc[i] != ""):
			t.Errorf("part %d: X-Amz-Content-Sha256 %q, CRC32C %q; want a SHA-256 and no CRC32C", i+1, tt.content[i], tt.crc[i])
		case !signed && (tt.content[i] != "UNSIGNED-PAYLOAD" || len(tt.crc[i]) != 8):
			t.Errorf("part %d: X-Amz-Content-Sha256 %q, CRC32C %q; want UNSIGNED-PAYLOAD and a CRC32C", i+1, tt.content[i], tt.crc[i])
		}
	}
}

// TestCRC32CBase64 checks the header encoding against the CRC32C check
// value of "123456789" (0xE3069283).
func TestCRC32CBase64(t *testing.T) {
	if got, want := crc32cBase64(0xE3069283), "4waSgw=="; got != want {
		t.Errorf("crc32cBase64 = %q, want %q", got, want)
	}
}
