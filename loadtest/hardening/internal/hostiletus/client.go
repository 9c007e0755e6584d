package hostiletus

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// The tus client of the harness: just enough of tus 1.0.0 to prepare the
// uploads the hostile inputs hit, and to look at them after.

// tusBase is the creation endpoint (docs/uploads.md, "Resumable uploads").
const tusBase = "/v1/tus/"

// Header lines every tus request but OPTIONS carries, and a PATCH's type.
const (
	tusVersion = "Tus-Resumable: 1.0.0"
	tusType    = "Content-Type: application/offset+octet-stream"
)

// tusMeta is an Upload-Metadata value of name/value pairs.
func tusMeta(pairs ...string) string {
	var b []string
	for i := 0; i+1 < len(pairs); i += 2 {
		b = append(b, pairs[i]+" "+base64.StdEncoding.EncodeToString([]byte(pairs[i+1])))
	}
	return strings.Join(b, ",")
}

// tusPayload is the n bytes every prepared upload holds: not all one
// byte, so a misplaced segment changes the sha256.
func tusPayload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// tusKey is a fresh blob key for one upload.
func tusKey() string { return fmt.Sprintf("hard/tus/%d.bin", hostile.Next()) }

// tusSend sends a tus request as principal: hdr lines after the head's.
func tusSend(ctx context.Context, e *hostile.Env, method, target, principal string, body []byte, hdr ...string) *wire.Answer {
	return e.Send(ctx, wire.Raw{Head: e.Head(method, target, principal, len(body), hdr...), Body: body, Method: method})
}

// tusCreate creates an upload as principal with the header lines given
// (besides Tus-Resumable) and returns its id.
func tusCreate(ctx context.Context, e *hostile.Env, principal string, body []byte, hdr ...string) (string, error) {
	a := tusSend(ctx, e, http.MethodPost, tusBase, principal, body, append([]string{tusVersion}, hdr...)...)
	id := tusIDOf(a)
	if a.Status != http.StatusCreated || id == "" {
		return "", errors.New("creating an upload: " + a.String())
	}
	return id, nil
}

// tusIDOf is the upload id an answer's Location names.
func tusIDOf(a *wire.Answer) string {
	if a.Header == nil {
		return ""
	}
	_, id, _ := strings.Cut(a.Header.Get("Location"), tusBase)
	return id
}

// tusPatch sends body at off to the upload id as principal.
func tusPatch(ctx context.Context, e *hostile.Env, principal, id string, off int, body []byte, hdr ...string) *wire.Answer {
	hdr = append([]string{tusVersion, tusType, "Upload-Offset: " + strconv.Itoa(off)}, hdr...)
	return tusSend(ctx, e, http.MethodPatch, tusBase+id, principal, body, hdr...)
}

// tusOffset is the upload's offset, as HEAD reports it to principal.
func tusOffset(ctx context.Context, e *hostile.Env, principal, id string) (int, error) {
	a := tusSend(ctx, e, http.MethodHead, tusBase+id, principal, nil, tusVersion)
	if a.Status != http.StatusOK {
		return 0, errors.New("HEAD of the upload: " + a.String())
	}
	return strconv.Atoi(a.Header.Get("Upload-Offset"))
}

// tusFresh creates principal's upload of n bytes under a fresh key and
// sends its first sent bytes.
func tusFresh(ctx context.Context, e *hostile.Env, principal string, n, sent int, hdr ...string) (string, error) {
	hdr = append([]string{"Upload-Length: " + strconv.Itoa(n), "Upload-Metadata: " + tusMeta("key", tusKey())}, hdr...)
	id, err := tusCreate(ctx, e, principal, nil, hdr...)
	if err != nil || sent == 0 {
		return id, err
	}
	if a := tusPatch(ctx, e, principal, id, 0, tusPayload(n)[:sent]); a.Status != http.StatusNoContent {
		return "", errors.New("the first PATCH: " + a.String())
	}
	return id, nil
}

// tusPartial creates principal's partial upload of n bytes, sent whole
// when complete is set; it returns the upload's id.
func tusPartial(ctx context.Context, e *hostile.Env, principal string, n int, complete bool) (string, error) {
	id, err := tusCreate(ctx, e, principal, nil, "Upload-Concat: partial", "Upload-Length: "+strconv.Itoa(n))
	if err != nil || !complete {
		return id, err
	}
	if a := tusPatch(ctx, e, principal, id, 0, tusPayload(n)); a.Status != http.StatusNoContent {
		return "", errors.New("PATCH of a partial upload: " + a.String())
	}
	return id, nil
}

// tusExpect records that key now holds data (alice's): the store check
// then wants it listed with this size and sha256, and its bytes read back.
func tusExpect(e *hostile.Env, key string, data []byte) {
	sum := sha256.Sum256(data)
	body := fmt.Sprintf(`{"key":%q,"size":%d,"sha256":%q}`, key, len(data), hex.EncodeToString(sum[:]))
	e.NoteStored("alice", &wire.Answer{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)})
}

// tusStored checks that key holds data, read through GET /v1/blobs.
func tusStored(ctx context.Context, e *hostile.Env, key string, data []byte) string {
	req := e.Request(ctx, http.MethodGet, "/v1/blobs/"+key, "alice", nil)
	resp, err := e.HTTP.Do(req)
	if err != nil {
		return "reading the completed upload's blob: " + err.Error()
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	switch {
	case err != nil || resp.StatusCode != http.StatusOK:
		return fmt.Sprintf("reading the completed upload's blob %s: HTTP %d %v", key, resp.StatusCode, err)
	case !bytes.Equal(got, data):
		gs, ws := sha256.Sum256(got), sha256.Sum256(data)
		return fmt.Sprintf("the completed upload's blob %s has %d bytes, sha256 %x; want %d bytes, sha256 %x",
			key, len(got), gs[:8], len(data), ws[:8])
	}
	return ""
}

// tusCut sends a PATCH announcing n bytes, writes only body (fewer) and
// closes the connection: a client whose network dropped.
func tusCut(ctx context.Context, e *hostile.Env, principal, id string, off int, body []byte, n int, hdr ...string) error {
	hdr = append([]string{tusVersion, tusType, "Upload-Offset: " + strconv.Itoa(off)}, hdr...)
	c, err := (&net.Dialer{Timeout: 3 * time.Second}).DialContext(ctx, "tcp", e.Addr())
	if err != nil {
		return err
	}
	_, err = c.Write(append([]byte(e.Head(http.MethodPatch, tusBase+id, principal, n, hdr...)), body...))
	time.Sleep(100 * time.Millisecond) // let the bytes arrive before the cut
	c.Close()
	return err
}

// tusSlow sends alice's PATCH of body at off in pieces of step bytes, one
// every pause, and reads the answer: a slow client, inside the rate
// rule's slow start.
func tusSlow(ctx context.Context, e *hostile.Env, id string, off int, body []byte, step int, pause time.Duration, hdr ...string) *wire.Answer {
	hdr = append([]string{tusVersion, tusType, "Upload-Offset: " + strconv.Itoa(off)}, hdr...)
	c, err := (&net.Dialer{Timeout: 3 * time.Second}).DialContext(ctx, "tcp", e.Addr())
	if err != nil {
		return &wire.Answer{Err: err}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(e.CaseLimit()))
	go func() {
		c.Write([]byte(e.Head(http.MethodPatch, tusBase+id, "alice", len(body), hdr...)))
		for i := 0; i < len(body); i += step {
			time.Sleep(pause)
			if _, err := c.Write(body[i:min(i+step, len(body))]); err != nil {
				return
			}
		}
	}()
	return wire.ReadFinal(bufio.NewReader(c), &http.Request{Method: http.MethodPatch})
}

// tusKeyOf is the key a prepared upload was created with (HEAD's
// Upload-Metadata), "" when it names none.
func tusKeyOf(ctx context.Context, e *hostile.Env, id string) string {
	a := tusSend(ctx, e, http.MethodHead, tusBase+id, "alice", nil, tusVersion)
	for p := range strings.SplitSeq(a.Header.Get("Upload-Metadata"), ",") {
		if k, v, ok := strings.Cut(p, " "); ok && k == "key" {
			b, _ := base64.StdEncoding.DecodeString(v)
			return string(b)
		}
	}
	return ""
}

// tusResume finishes alice's upload of n bytes from the offset HEAD
// reports and checks the stored blob, registering it first.
func tusResume(ctx context.Context, e *hostile.Env, id string, n int) string {
	key, data := tusKeyOf(ctx, e, id), tusPayload(n)
	tusExpect(e, key, data)
	for try := 0; ; try++ {
		off, err := tusOffset(ctx, e, "alice", id)
		if err != nil {
			return err.Error()
		}
		if off < 0 || off > n {
			return fmt.Sprintf("HEAD reports offset %d for an upload of %d bytes", off, n)
		}
		a := tusPatch(ctx, e, "alice", id, off, data[off:])
		switch {
		case a.Status == http.StatusNoContent:
			return tusStored(ctx, e, key, data)
		case a.Status != http.StatusConflict || try == 3:
			return fmt.Sprintf("resuming from offset %d: %s", off, a.String())
		}
		// A cut PATCH may still be committing what arrived: HEAD again, as
		// a tus client does after 409.
		time.Sleep(200 * time.Millisecond)
	}
}

// statusIn is "" when status is one of want, else what is wrong.
func statusIn(status int, want []int) string {
	if len(want) == 0 || slices.Contains(want, status) {
		return ""
	}
	return fmt.Sprintf("HTTP %d, want %v (docs/uploads.md, tus)", status, want)
}
