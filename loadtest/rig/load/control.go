package load

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The scenarios of the control API, /d/ links and uploads.

// control POSTs a JSON body to the control API path and decodes the 200 or
// 201 answer into out.
func (p Params) control(ctx context.Context, path string, body, out any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.Base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if p.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.APIKey)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusCreated {
		return fmt.Errorf("POST %s: http %d: %.300s", path, res.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}

// downloadRange GETs RangeSize slices of one /d/ link at offsets spread
// over the blob and expects 206 with exactly the asked bytes.
func downloadRange(ctx context.Context, p Params) (Scenario, error) {
	var link struct{ URL string }
	if err := p.control(ctx, "/v1/links", map[string]any{"key": p.Key, "ttlSeconds": 900}, &link); err != nil {
		return Scenario{}, err
	}
	slots := max(1, p.Size/p.RangeSize)
	var seq atomic.Int64
	return Scenario{
		Target: func(t *vegeta.Target) error {
			start := (seq.Add(1) * 7919 % slots) * p.RangeSize
			end := min(p.Size, start+p.RangeSize) - 1
			t.Method, t.URL = http.MethodGet, link.URL
			t.Header = http.Header{"Range": {fmt.Sprintf("bytes=%d-%d", start, end)}}
			return nil
		},
		Check:    exactLength(http.StatusPartialContent, min(p.RangeSize, p.Size)),
		KeepBody: -1,
	}, nil
}

// pattern is size bytes of a fixed upload pattern.
func pattern(size int64) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(uint64(i) * 2654435761 >> 13)
	}
	return b
}

// uploadDataURI calls the upload_file tool with the file as an RFC 2397
// base64 data URI and a key of its own per request.
func uploadDataURI(ctx context.Context, p Params) (Scenario, error) {
	s, err := p.open(ctx, nil)
	if err != nil {
		return Scenario{}, err
	}
	uri := "data:application/octet-stream;base64," + base64.StdEncoding.EncodeToString(pattern(p.Size))
	run := time.Now().UnixNano()
	return Scenario{
		Target: s.Call(func(seq uint64) (string, any) {
			return "tools/call", map[string]any{"name": "upload_file", "arguments": map[string]any{
				"file": uri, "key": fmt.Sprintf("loadtest/datauri-%d-%d", run, seq)}}
		}),
		Check: RPCClass,
	}, nil
}

// uploadMultipart POSTs a Size-byte file as multipart/form-data to upload
// endpoints minted by POST /v1/uploads before the load starts (one per
// request, so the latency is the upload's alone).
func uploadMultipart(ctx context.Context, p Params) (Scenario, error) {
	n := p.Rate*int(p.Duration.Seconds()+1) + p.Rate
	type endpoint struct{ URL, Method string }
	eps := make([]endpoint, n)
	run := time.Now().UnixNano()
	for i := range eps {
		body := map[string]any{"key": fmt.Sprintf("loadtest/upload-%d-%d", run, i), "maxSize": p.Size, "ttlSeconds": 300}
		if err := p.control(ctx, "/v1/uploads", body, &eps[i]); err != nil {
			return Scenario{}, err
		}
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("file", "load.bin")
	fw.Write(pattern(p.Size)) //nolint:errcheck // a bytes.Buffer
	mw.Close()
	ct := mw.FormDataContentType()
	var next atomic.Int64
	return Scenario{
		Target: func(t *vegeta.Target) error {
			i := next.Add(1) - 1
			if i >= int64(len(eps)) {
				return fmt.Errorf("all %d minted upload endpoints used", len(eps))
			}
			t.Method, t.URL, t.Body = cmpOr(eps[i].Method, http.MethodPost), eps[i].URL, form.Bytes()
			t.Header = http.Header{"Content-Type": {ct}}
			return nil
		},
		Check: func(r *vegeta.Result, _ *Body) string {
			if r.Code/100 != 2 {
				return fmt.Sprintf("http %d", r.Code)
			}
			return ""
		},
	}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// integrity reads every seeded blob PerBlob times, one request at a time,
// and compares the sha256 of the decoded base64 with the seeded one.
func integrity(ctx context.Context, p Params) (Scenario, error) {
	if len(p.Blobs) == 0 {
		return Scenario{}, fmt.Errorf("no blobs to check")
	}
	s, err := p.open(ctx, nil)
	if err != nil {
		return Scenario{}, err
	}
	byKind := map[string]Blob{}
	for _, b := range p.Blobs {
		byKind["read "+b.Key] = b
	}
	var seq atomic.Uint64
	return Scenario{
		Hits: len(p.Blobs) * p.PerBlob,
		Target: func(t *vegeta.Target) error {
			b := p.Blobs[(seq.Add(1)-1)%uint64(len(p.Blobs))]
			t.Method, t.URL, t.Body, t.Header = http.MethodPost, s.Endpoint, RPC("resources/read", Read(b.Key)), s.Header()
			t.Header.Set(KindHeader, "read "+b.Key)
			return nil
		},
		Check: func(r *vegeta.Result, body *Body) string {
			if c := RPCClass(r, body); c != "" {
				return c
			}
			want := byKind[body.Kind]
			switch {
			case body.BlobErr != nil:
				return "integrity: blob does not decode"
			case body.BlobN != want.Size:
				return "integrity: decoded length differs from the seeded blob"
			case body.BlobSHA != want.SHA256:
				return "integrity: sha256 differs from the seeded blob"
			}
			return ""
		},
		KeepBody:   4 << 10,
		DecodeBlob: true,
		Timeout:    120 * time.Second,
	}, nil
}

// stream asks resources/stream in whichever mode the server picks: direct
// bytes, a 302 to a presigned URL (followed), or a downloadUrl answer
// (followed by the transport, see followDownload); each must end in the
// blob's Size bytes.
func stream(ctx context.Context, p Params) (Scenario, error) {
	s, err := p.open(ctx, map[string]any{"resourceStreaming": map[string]any{"maxStreamSize": 1 << 30}})
	if err != nil {
		return Scenario{}, err
	}
	call := s.Call(func(uint64) (string, any) { return "resources/stream", Read(p.Key) })
	return Scenario{
		Target: func(t *vegeta.Target) error {
			err := call(t)
			t.Header.Set("Accept", "application/json, text/event-stream, */*")
			return err
		},
		Check:          exactLength(http.StatusOK, p.Size),
		KeepBody:       -1,
		Redirects:      5,
		Timeout:        120 * time.Second,
		FollowDownload: true,
	}, nil
}
