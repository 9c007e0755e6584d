package hostiletus

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/hostile"
	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/wire"
)

// patch is alice's PATCH of the prepared upload with body and the header
// lines given (Tus-Resumable, Content-Type and Upload-Offset are the
// caller's to send).
func patch(body []byte, hdr ...string) func(context.Context, *hostile.Env, string) *wire.Answer {
	return func(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
		return tusSend(ctx, e, http.MethodPatch, tusBase+id, "alice", body, hdr...)
	}
}

// next10 are the 10 bytes that follow the prepared upload's first 10.
func next10() []byte { return tusPayload(tusLen)[tusSent : tusSent+10] }

// resumed: after the refusal, the upload still completes from HEAD's
// offset into a blob with the right bytes.
func resumed(ctx context.Context, e *hostile.Env, id string, _ *wire.Answer) string {
	return tusResume(ctx, e, id, tusLen)
}

// tusPatches are PATCHes with wrong offsets, types and versions, on an
// upload of 100 bytes holding 10: each refused, nothing appended.
func tusPatches() []tusInput {
	off := "Upload-Offset: " + strconv.Itoa(tusSent)
	var ts []tusInput
	add := func(name string, status int, hdr ...string) {
		ts = append(ts, tusInput{name: "PATCH " + name, status: []int{status}, prep: prepFresh, hit: patch(next10(), hdr...), keep: tusSent})
	}
	for _, o := range []string{"0", "11", "9", "100"} {
		add("Upload-Offset: "+o+" (holds 10)", http.StatusConflict, tusVersion, tusType, "Upload-Offset: "+o)
	}
	for _, o := range []string{"-1", "abc", "", "10, 10", "99999999999999999999", "+10", "1e1", "0x0a"} {
		add(fmt.Sprintf("Upload-Offset %q", o), http.StatusBadRequest, tusVersion, tusType, "Upload-Offset: "+o)
	}
	add("without Upload-Offset", http.StatusBadRequest, tusVersion, tusType)
	add("Upload-Offset: 10 and Upload-Offset: 0", http.StatusBadRequest, tusVersion, tusType, off, "Upload-Offset: 0")
	for _, ct := range []string{"", "text/plain", "application/octet-stream", "application/offset+octet-stream; charset=utf-8", "multipart/form-data; boundary=x"} {
		add(fmt.Sprintf("Content-Type %q", ct), http.StatusUnsupportedMediaType, tusVersion, off, "Content-Type: "+ct)
	}
	add("without Content-Type", http.StatusUnsupportedMediaType, tusVersion, off)
	for _, v := range []string{"", "0.2.2", "1.0", "2.0.0"} {
		add(fmt.Sprintf("Tus-Resumable %q", v), http.StatusPreconditionFailed, "Tus-Resumable: "+v, tusType, off)
	}
	add("without Tus-Resumable", http.StatusPreconditionFailed, tusType, off)
	add("Upload-Length differing from the upload's", http.StatusBadRequest, tusVersion, tusType, off, "Upload-Length: 50")
	ts = append(ts, tusInput{name: "PATCH by another principal", status: []int{404}, keep: tusSent, as: "bob",
		prep: func(ctx context.Context, e *hostile.Env) (string, error) {
			return tusFresh(ctx, e, "bob", tusLen, tusSent)
		},
		hit: func(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
			return tusPatch(ctx, e, "alice", id, tusSent, next10())
		}})
	ts = append(ts, tusInput{name: "two PATCHes at one offset", status: []int{204, 409}, prep: prepFresh, hit: racePatches, keep: tusSent + 10, then: resumed})
	ts = append(ts, tusInput{name: "PATCH refused, then resumed", status: []int{409}, prep: prepFresh, keep: tusSent, then: resumed,
		hit: patch(next10(), tusVersion, tusType, "Upload-Offset: 0")})
	return ts
}

// racePatches sends the same 10 bytes at one offset on two connections at
// once: one appends (204), the other is refused (409), never both.
func racePatches(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
	var as [2]*wire.Answer
	var wg sync.WaitGroup
	for i := range as {
		wg.Go(func() { as[i] = tusPatch(ctx, e, "alice", id, tusSent, next10()) })
	}
	wg.Wait()
	if as[0].Status == as[1].Status {
		return &wire.Answer{Status: http.StatusTeapot, Header: as[0].Header,
			Body: fmt.Appendf(nil, `{"error":{"code":"harness","message":"both PATCHes answered HTTP %d; one must get 409"}}`, as[0].Status)}
	}
	return as[0]
}

// digest is the base64 digest of b in alg.
func digest(alg string, b []byte) string {
	switch alg {
	case "sha1":
		s := sha1.Sum(b)
		return base64.StdEncoding.EncodeToString(s[:])
	case "sha256":
		s := sha256.Sum256(b)
		return base64.StdEncoding.EncodeToString(s[:])
	}
	return "AAAAAA=="
}

// tusChecksums are PATCHes with hostile Upload-Checksum values: unknown
// algorithms and malformed digests 400, wrong digests 460, nothing
// appended; the right digest appends.
func tusChecksums() []tusInput {
	off := "Upload-Offset: " + strconv.Itoa(tusSent)
	wrong := []byte("not these bytes")
	good := digest("sha256", next10())
	var ts []tusInput
	add := func(name string, status, keep int, sum string) {
		ts = append(ts, tusInput{name: "PATCH Upload-Checksum: " + name, status: []int{status}, prep: prepFresh, keep: keep,
			hit: patch(next10(), tusVersion, tusType, off, "Upload-Checksum: "+sum)})
	}
	for _, s := range []string{"md5 " + base64.StdEncoding.EncodeToString(make([]byte, 16)), "sha512 " + base64.StdEncoding.EncodeToString(make([]byte, 64)),
		"SHA256 " + good, "sha256", "sha256 ", "sha256 !!!!", "sha256 " + digest("sha1", next10()), "sha256 " + strings.TrimRight(good, "="),
		" sha256 " + good + " x", "sha256  " + good, "crc32c " + base64.StdEncoding.EncodeToString(make([]byte, 8)), "sha256:" + good, strings.Repeat("x", 4000)} {
		add(wire.Clip(s, 40), http.StatusBadRequest, tusSent, s)
	}
	for _, alg := range []string{"sha1", "sha256", "crc32c"} {
		add(alg+" of other bytes", 460, tusSent, alg+" "+digest(alg, wrong))
	}
	add("sha256 of the body", http.StatusNoContent, tusSent+10, "sha256 "+good)
	add("sha1 of the body", http.StatusNoContent, tusSent+10, "sha1 "+digest("sha1", next10()))
	return ts
}

// tusBodies are PATCHes whose bodies run past the upload's length or are
// cut, and creations with a body.
func tusBodies() []tusInput {
	off := "Upload-Offset: " + strconv.Itoa(tusSent)
	over := tusPayload(tusLen + 1)[tusSent:]
	chunked := fmt.Appendf(nil, "%x\r\n%s\r\n0\r\n\r\n", len(over), over)
	return []tusInput{
		{name: "PATCH 1 byte past Upload-Length", status: []int{413}, prep: prepFresh, keep: tusSent, then: resumed, hit: patch(over, tusVersion, tusType, off)},
		{name: "PATCH chunked past Upload-Length", status: []int{413}, prep: prepFresh, keep: tusSent, then: resumed, hit: func(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
			return e.Send(ctx, wire.Raw{Head: e.Head(http.MethodPatch, tusBase+id, "alice", -1, tusVersion, tusType, off, "Transfer-Encoding: chunked"), Body: chunked, Method: http.MethodPatch})
		}},
		{name: "PATCH cut after 20 of 90 bytes", status: []int{204}, prep: prepFresh, keep: -1, hit: cutThenHead(false), then: resumed},
		{name: "PATCH with Upload-Checksum cut after 20 of 90 bytes", status: []int{204}, prep: prepFresh, keep: tusSent, hit: cutThenHead(true), then: resumed},
		{name: "PATCH of the rest, 10 bytes every 100ms, with its sha256", status: []int{204}, prep: prepFresh, keep: tusLen, then: storedWhole,
			hit: func(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
				rest := tusPayload(tusLen)[tusSent:]
				tusExpect(e, tusKeyOf(ctx, e, id), tusPayload(tusLen))
				return tusSlow(ctx, e, id, tusSent, rest, 10, 100*time.Millisecond, "Upload-Checksum: sha256 "+digest("sha256", rest))
			}},
		{name: "POST with a body past Upload-Length", status: []int{413}, keep: -1, hit: func(ctx context.Context, e *hostile.Env, _ string) *wire.Answer {
			return tusSend(ctx, e, http.MethodPost, tusBase, "alice", tusPayload(20), tusVersion, tusType, "Upload-Length: 10", "Upload-Metadata: "+tusMeta("key", tusKey()))
		}, then: nothingAppended},
		{name: "POST with the whole body", status: []int{201}, keep: -1, hit: func(ctx context.Context, e *hostile.Env, _ string) *wire.Answer {
			key := tusKey()
			tusExpect(e, key, tusPayload(50))
			return tusSend(ctx, e, http.MethodPost, tusBase, "alice", tusPayload(50), tusVersion, tusType, "Upload-Length: 50", "Upload-Metadata: "+tusMeta("key", key))
		}, then: wantHeader("Upload-Offset", "50")},
		{name: "POST with the whole body, key a folder of blobs", status: []int{409}, keep: -1, hit: wholeAs("hard/base")},
		{name: "POST with the whole body, key under a blob", status: []int{409}, keep: -1, hit: wholeAs(hostile.BaseText + "/x")},
		{name: "POST Upload-Length: 0, key a folder of blobs", status: []int{409}, keep: -1, hit: post("alice", tusVersion, "Upload-Length: 0", "Upload-Metadata: "+tusMeta("key", "hard/base"))},
		{name: "POST with the whole body and a wrong Upload-Checksum", status: []int{460}, keep: -1, then: nothingAppended, hit: func(ctx context.Context, e *hostile.Env, _ string) *wire.Answer {
			return tusSend(ctx, e, http.MethodPost, tusBase, "alice", tusPayload(50), tusVersion, tusType, "Upload-Length: 50",
				"Upload-Checksum: sha256 "+digest("sha256", []byte("other")), "Upload-Metadata: "+tusMeta("key", tusKey()))
		}},
		{name: "POST with a text/plain body", status: []int{201}, keep: -1, hit: func(ctx context.Context, e *hostile.Env, _ string) *wire.Answer {
			return tusSend(ctx, e, http.MethodPost, tusBase, "alice", tusPayload(50), tusVersion, "Content-Type: text/plain", "Upload-Length: 50", "Upload-Metadata: "+tusMeta("key", tusKey()))
		}, then: func(ctx context.Context, e *hostile.Env, _ string, a *wire.Answer) string {
			return wantHeader("Upload-Offset", "0")(ctx, e, "", a) // the body is no PATCH: nothing appended
		}},
	}
}

// nothingAppended checks that a refused creation-with-upload left an
// upload with nothing appended, when it made one.
func nothingAppended(ctx context.Context, e *hostile.Env, _ string, a *wire.Answer) string {
	id := tusIDOf(a)
	if id == "" {
		return ""
	}
	if off, err := tusOffset(ctx, e, "alice", id); err == nil && off != 0 {
		return fmt.Sprintf("the refused body appended: offset %d", off)
	}
	return ""
}

// cutThenHead cuts a PATCH of the rest after 20 bytes, then answers the
// HEAD that follows: the bytes kept must be durable and the offset at most
// what arrived (with a checksum: none of them).
func cutThenHead(withSum bool) func(context.Context, *hostile.Env, string) *wire.Answer {
	return func(ctx context.Context, e *hostile.Env, id string) *wire.Answer {
		rest := tusPayload(tusLen)[tusSent:]
		var hdr []string
		if withSum {
			hdr = append(hdr, "Upload-Checksum: sha256 "+digest("sha256", rest))
		}
		if err := tusCut(ctx, e, "alice", id, tusSent, rest[:20], len(rest), hdr...); err != nil {
			return &wire.Answer{Err: err}
		}
		a := tusSend(ctx, e, http.MethodHead, tusBase+id, "alice", nil, tusVersion)
		if off, err := strconv.Atoi(a.Header.Get("Upload-Offset")); err == nil && (off < tusSent || off > tusSent+20) {
			return &wire.Answer{Status: http.StatusTeapot, Header: a.Header,
				Body: fmt.Appendf(nil, `{"error":{"code":"harness","message":"HEAD reports offset %d after a cut PATCH; it held %d and 20 more arrived"}}`, off, tusSent)}
		}
		if a.Status == http.StatusOK {
			a.Status = http.StatusNoContent // the HEAD stands for the cut PATCH's answer
		}
		return a
	}
}

// wholeAs creates an upload with its whole body, stored as key (which
// the store must refuse: a blob and a folder at once).
func wholeAs(key string) func(context.Context, *hostile.Env, string) *wire.Answer {
	return func(ctx context.Context, e *hostile.Env, _ string) *wire.Answer {
		return tusSend(ctx, e, http.MethodPost, tusBase, "alice", tusPayload(50), tusVersion, tusType, "Upload-Length: 50", "Upload-Metadata: "+tusMeta("key", key))
	}
}

// storedWhole checks that the completed upload's blob holds its bytes.
func storedWhole(ctx context.Context, e *hostile.Env, id string, _ *wire.Answer) string {
	return tusStored(ctx, e, tusKeyOf(ctx, e, id), tusPayload(tusLen))
}
