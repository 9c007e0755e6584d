package server

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// Resumable uploads (tus 1.0.0) on the control API, against started
// servers on each real backend, with a raw-HTTP tus client (no Go tus
// client module is served): resume after a cut connection, the
// same-offset race on two servers sharing one store, concatenation and
// the protocol's refusals.

type tusClient struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func (c *tusClient) do(method, u string, body []byte, hdr map[string]string) *http.Response {
	c.t.Helper()
	if strings.HasPrefix(u, "/") {
		u = c.base + u
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Tus-Resumable", "1.0.0")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, u, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

func tusMeta(kv ...string) string {
	var parts []string
	for i := 0; i < len(kv); i += 2 {
		parts = append(parts, kv[i]+" "+base64.StdEncoding.EncodeToString([]byte(kv[i+1])))
	}
	return strings.Join(parts, ",")
}

// create starts an upload of length bytes stored as key; it returns the
// upload's path.
func (c *tusClient) create(length int, key string) string {
	c.t.Helper()
	r := c.do("POST", "/v1/tus/", nil, map[string]string{"Upload-Length": strconv.Itoa(length),
		"Upload-Metadata": tusMeta("key", key, "filetype", "application/octet-stream")})
	if r.StatusCode != 201 || r.Header.Get("Location") == "" || r.Header.Get("Tus-Resumable") != "1.0.0" {
		c.t.Fatalf("create: %d %v", r.StatusCode, r.Header)
	}
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil {
		c.t.Fatal(err)
	}
	return loc.Path
}

func (c *tusClient) patch(path string, off int, body []byte, hdr map[string]string) *http.Response {
	c.t.Helper()
	h := map[string]string{"Content-Type": "application/offset+octet-stream", "Upload-Offset": strconv.Itoa(off)}
	for k, v := range hdr {
		h[k] = v
	}
	return c.do("PATCH", path, body, h)
}

func (c *tusClient) offset(path string) int {
	c.t.Helper()
	r := c.do("HEAD", path, nil, nil)
	n, err := strconv.Atoi(r.Header.Get("Upload-Offset"))
	if r.StatusCode != 200 || err != nil {
		c.t.Fatalf("HEAD %s: %d %v", path, r.StatusCode, r.Header)
	}
	return n
}

func newTusClient(t *testing.T, be storage.Backend) *tusClient {
	base, _ := startTestServer(t, Options{Backend: be})
	return &tusClient{t: t, base: base, hc: &http.Client{Timeout: 60 * time.Second}}
}

func tusPayload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i ^ i>>9 ^ i>>17)
	}
	return b
}

func TestTus(t *testing.T) {
	for _, be := range byteplaneBackends() {
		t.Run(be.name, func(t *testing.T) {
			parallel(t)
			store := be.new(t)
			a, b := newTusClient(t, store), newTusClient(t, store)
			t.Run("ResumeAfterCut", func(t *testing.T) { testTusResume(t, a, b) })
			t.Run("SameOffsetRace", func(t *testing.T) { testTusRace(t, a, b) })
			t.Run("Concatenation", func(t *testing.T) { testTusConcat(t, a) })
			t.Run("Refusals", func(t *testing.T) { testTusRefusals(t, a) })
		})
	}
}

// testTusResume: a PATCH cut mid-body on node a keeps the bytes that
// arrived (HEAD on node b reports them); the client resumes on b from
// there, and the blob is byte-identical.
func testTusResume(t *testing.T, a, b *tusClient) {
	data := tusPayload(300_000)
	path := a.create(len(data), "tus/resumed.bin")
	if r := a.do("OPTIONS", "/v1/tus/", nil, nil); r.StatusCode != 204 || r.Header.Get("Tus-Version") != "1.0.0" ||
		!strings.Contains(r.Header.Get("Tus-Extension"), "concatenation") || r.Header.Get("Tus-Max-Size") == "" {
		t.Fatalf("OPTIONS: %d %v", r.StatusCode, r.Header)
	}
	const sent = 123_457
	cutPatch(t, a.base, path, 0, len(data), data[:sent])
	eventually(t, 30*time.Second, func() bool { return b.offset(path) == sent })
	if r := b.do("GET", "/v1/blobs/tus/resumed.bin", nil, nil); r.StatusCode != 404 {
		t.Fatalf("the blob is visible before the upload completed: %d", r.StatusCode)
	}
	if r := b.patch(path, sent, data[sent:], nil); r.StatusCode != 204 || r.Header.Get("Upload-Offset") != strconv.Itoa(len(data)) {
		t.Fatalf("resumed PATCH: %d %v", r.StatusCode, r.Header)
	}
	r := a.do("GET", "/v1/blobs/tus/resumed.bin", nil, nil)
	got, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 || sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatalf("GET the blob: %d, %d bytes, sha256 differs", r.StatusCode, len(got))
	}
}

// cutPatch sends a PATCH declaring length-off bytes on a raw connection,
// sends part of them and closes the connection.
func cutPatch(t *testing.T, base, path string, off, length int, part []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PATCH %s HTTP/1.1\r\nHost: %s\r\nTus-Resumable: 1.0.0\r\nContent-Type: application/offset+octet-stream\r\n"+
		"Upload-Offset: %d\r\nContent-Length: %d\r\n\r\n", path, strings.TrimPrefix(base, "http://"), off, length-off)
	if _, err := conn.Write(part); err != nil {
		t.Fatal(err)
	}
}

// testTusRace: two PATCHes at one offset, one to each node sharing the
// store, their bodies held back until both are under way: one appends
// (204), the other gets 409, and the blob is the winner's bytes.
func testTusRace(t *testing.T, a, b *tusClient) {
	for round := range 3 {
		key := fmt.Sprintf("tus/race-%d", round)
		path := a.create(1000, key)
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		bodies := [][]byte{bytes.Repeat([]byte("a"), 1000), bytes.Repeat([]byte("b"), 1000)}
		gates := []chan struct{}{make(chan struct{}), make(chan struct{})}
		for i, c := range []*tusClient{a, b} {
			wg.Go(func() {
				pr, pw := io.Pipe()
				go func() {
					pw.Write(bodies[i][:500])
					<-gates[i]
					pw.Write(bodies[i][500:])
					pw.Close()
				}()
				req, _ := http.NewRequest("PATCH", c.base+path, pr)
				req.ContentLength = 1000
				req.Header.Set("Tus-Resumable", "1.0.0")
				req.Header.Set("Content-Type", "application/offset+octet-stream")
				req.Header.Set("Upload-Offset", "0")
				resp, err := c.hc.Do(req)
				if err != nil {
					t.Errorf("PATCH: %v", err)
					return
				}
				resp.Body.Close()
				statuses[i] = resp.StatusCode
			})
		}
		time.Sleep(50 * time.Millisecond) // not for correctness: both outcomes are checked; makes the overlap likely
		close(gates[0])
		close(gates[1])
		wg.Wait()
		if !(statuses[0] == 204 && statuses[1] == 409 || statuses[0] == 409 && statuses[1] == 204) {
			t.Fatalf("round %d: statuses %v; want one 204 and one 409", round, statuses)
		}
		r := b.do("GET", "/v1/blobs/"+key, nil, nil)
		got, _ := io.ReadAll(r.Body)
		if !bytes.Equal(got, bodies[0]) && !bytes.Equal(got, bodies[1]) {
			t.Fatalf("round %d: the blob mixes both PATCHes: %.40q…", round, got)
		}
	}
}

// testTusConcat: three partial uploads concatenate into one blob.
func testTusConcat(t *testing.T, c *tusClient) {
	data := tusPayload(90_000)
	var urls []string
	for i := range 3 {
		r := c.do("POST", "/v1/tus/", nil, map[string]string{"Upload-Length": "30000", "Upload-Concat": "partial"})
		if r.StatusCode != 201 {
			t.Fatalf("partial: %d", r.StatusCode)
		}
		loc, _ := url.Parse(r.Header.Get("Location"))
		if r := c.patch(loc.Path, 0, data[i*30000:(i+1)*30000], nil); r.StatusCode != 204 {
			t.Fatalf("PATCH partial: %d", r.StatusCode)
		}
		urls = append(urls, r.Header.Get("Location"))
	}
	r := c.do("POST", "/v1/tus/", nil, map[string]string{"Upload-Concat": "final;" + strings.Join(urls, " "),
		"Upload-Metadata": tusMeta("key", "tus/cat.bin")})
	if r.StatusCode != 201 {
		body, _ := io.ReadAll(r.Body)
		t.Fatalf("final: %d %s", r.StatusCode, body)
	}
	r = c.do("GET", "/v1/blobs/tus/cat.bin", nil, nil)
	got, _ := io.ReadAll(r.Body)
	if !bytes.Equal(got, data) {
		t.Fatalf("concatenated blob: %d bytes, differs", len(got))
	}
}

// testTusRefusals: each refusal's status, with a JSON error body.
func testTusRefusals(t *testing.T, c *tusClient) {
	path := c.create(100, "tus/refused")
	if r := c.patch(path, 0, tusPayload(10), nil); r.StatusCode != 204 {
		t.Fatalf("PATCH: %d", r.StatusCode)
	}
	sum := sha256.Sum256([]byte("not the body"))
	cases := []struct {
		name   string
		r      *http.Response
		status int
		code   string
	}{
		{"no Tus-Resumable", c.do("HEAD", path, nil, map[string]string{"Tus-Resumable": ""}), 412, ""},
		{"old Tus-Resumable", c.patch(path, 10, tusPayload(5), map[string]string{"Tus-Resumable": "0.2.2"}), 412, "unsupported_version"},
		{"wrong offset", c.patch(path, 3, tusPayload(5), nil), 409, "offset_mismatch"},
		{"checksum mismatch", c.patch(path, 10, tusPayload(5), map[string]string{"Upload-Checksum": "sha256 " + base64.StdEncoding.EncodeToString(sum[:])}), 460, "checksum_mismatch"},
		{"past Upload-Length", c.patch(path, 10, tusPayload(91), nil), 413, "too_large"},
		{"unknown upload", c.do("HEAD", "/v1/tus/AAAAAAAAAAAAAAAAAAAAAAAAAA", nil, nil), 404, ""},
		{"malformed metadata", c.do("POST", "/v1/tus/", nil, map[string]string{"Upload-Length": "5", "Upload-Metadata": "key %%%"}), 400, "bad_metadata"},
		{"no key", c.do("POST", "/v1/tus/", nil, map[string]string{"Upload-Length": "5"}), 400, "invalid_key"},
		{"over the upload limit", c.do("POST", "/v1/tus/", nil, map[string]string{"Upload-Length": strconv.FormatInt(1<<50, 10), "Upload-Metadata": tusMeta("key", "x")}), 413, "too_large"},
	}
	for _, tc := range cases {
		body, _ := io.ReadAll(tc.r.Body)
		if tc.r.StatusCode != tc.status || tc.code != "" && !strings.Contains(string(body), `"code":"`+tc.code+`"`) {
			t.Errorf("%s: %d %s; want %d %s", tc.name, tc.r.StatusCode, body, tc.status, tc.code)
		}
	}
	if got := c.offset(path); got != 10 {
		t.Fatalf("offset after the refusals = %d, want 10", got)
	}
	if r := c.do("DELETE", path, nil, nil); r.StatusCode != 204 {
		t.Fatalf("DELETE: %d", r.StatusCode)
	}
	if r := c.do("HEAD", path, nil, nil); r.StatusCode != 404 {
		t.Fatalf("HEAD after DELETE: %d", r.StatusCode)
	}
}

// TestTusRepeatedHeaders: a tus header sent twice with different values
// is refused as malformed (400), never read as its first value; nothing
// is created or appended.
func TestTusRepeatedHeaders(t *testing.T) {
	parallel(t)
	c := newTusClient(t, newLocalStore(t))
	path := c.create(100, "tus/repeated")
	send := func(method, u string, hdr http.Header) *http.Response {
		req, err := http.NewRequest(method, c.base+u, bytes.NewReader(tusPayload(10)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = hdr
		req.Header.Set("Tus-Resumable", "1.0.0")
		resp, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	create := send("POST", "/v1/tus/", http.Header{"Upload-Length": {"10", "20"}, "Upload-Metadata": {tusMeta("key", "tus/twice")}})
	patch := send("PATCH", path, http.Header{"Upload-Offset": {"0", "10"}, "Content-Type": {"application/offset+octet-stream"}})
	if create.StatusCode != 400 || create.Header.Get("Location") != "" || patch.StatusCode != 400 {
		t.Fatalf("two Upload-Length: %d (Location %q); two Upload-Offset: %d; want 400 each",
			create.StatusCode, create.Header.Get("Location"), patch.StatusCode)
	}
	if got := c.offset(path); got != 0 {
		t.Fatalf("offset after the refused PATCH = %d, want 0", got)
	}
}

// TestTusPrincipals: the tus endpoint takes the control API's API keys
// and scopes: without a key 401; a read-only key may HEAD but not create
// or PATCH (403); bob's requests on alice's upload answer as a missing
// upload does (404), and a final upload naming her partial upload 403.
func TestTusPrincipals(t *testing.T) {
	parallel(t)
	base, _ := startTestServer(t, Options{Backend: newLocalStore(t), Auth: Auth{Keys: []string{
		HashKey("alice-key") + " alice", HashKey("bob-key") + " bob", HashKey("ro-key") + " alice scopes=read"}}})
	client := func(key string) *tusClient {
		c := &tusClient{t: t, base: base, hc: &http.Client{Timeout: 60 * time.Second}}
		c.hc.Transport = headerTransport{"Authorization": "Bearer " + key}
		return c
	}
	alice, bob, ro, nobody := client("alice-key"), client("bob-key"), client("ro-key"), client("")
	path := alice.create(100, "tus/alice.bin")
	if r := alice.patch(path, 0, tusPayload(40), nil); r.StatusCode != 204 {
		t.Fatalf("alice's PATCH: %d", r.StatusCode)
	}
	r := alice.do("POST", "/v1/tus/", nil, map[string]string{"Upload-Length": "10", "Upload-Concat": "partial"})
	partial := r.Header.Get("Location")
	alice.patch(strings.TrimPrefix(partial, base), 0, tusPayload(10), nil)
	missing := "/v1/tus/AAAAAAAAAAAAAAAAAAAAAAAAAA"
	for _, tc := range []struct {
		name   string
		r      *http.Response
		status int
	}{
		{"no key", nobody.do("HEAD", path, nil, nil), 401},
		{"read-only HEAD", ro.do("HEAD", path, nil, nil), 200},
		{"read-only PATCH", ro.patch(path, 40, tusPayload(5), nil), 403},
		{"read-only create", ro.do("POST", "/v1/tus/", nil, map[string]string{"Upload-Length": "5", "Upload-Metadata": tusMeta("key", "ro")}), 403},
		{"bob HEAD", bob.do("HEAD", path, nil, nil), 404},
		{"bob HEAD of a missing upload", bob.do("HEAD", missing, nil, nil), 404},
		{"bob PATCH", bob.patch(path, 40, tusPayload(5), nil), 404},
		{"bob DELETE", bob.do("DELETE", path, nil, nil), 404},
		{"bob final of alice's partial", bob.do("POST", "/v1/tus/", nil, map[string]string{"Upload-Concat": "final;" + partial,
			"Upload-Metadata": tusMeta("key", "stolen")}), 403},
	} {
		if tc.r.StatusCode != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, tc.r.StatusCode, tc.status)
		}
	}
	if got := alice.offset(path); got != 40 {
		t.Fatalf("alice's offset %d after bob's attempts, want 40", got)
	}
}

// headerTransport adds headers to every request (a key, when not empty).
type headerTransport map[string]string

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for k, v := range h {
		if v != "Bearer " {
			req.Header.Set(k, v)
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestTusRefusalKeepsConnection: a refused PATCH whose body the client
// sends whole (a wrong offset, 1 MiB) is answered after its body is read,
// on a connection that stays open: the next request on it is answered
// too. Closing it with the body unread reset the connection, and a
// client still writing saw the reset instead of the 409.
func TestTusRefusalKeepsConnection(t *testing.T) {
	parallel(t)
	c := newTusClient(t, newLocalStore(t))
	path := c.create(4<<20, "tus/refused")
	host := strings.TrimPrefix(c.base, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	body := tusPayload(1 << 20)
	go func() {
		fmt.Fprintf(conn, "PATCH %s HTTP/1.1\r\nHost: %s\r\nTus-Resumable: 1.0.0\r\nContent-Type: application/offset+octet-stream\r\n"+
			"Upload-Offset: 5\r\nContent-Length: %d\r\n\r\n", path, host, len(body))
		conn.Write(body)
		fmt.Fprintf(conn, "HEAD %s HTTP/1.1\r\nHost: %s\r\nTus-Resumable: 1.0.0\r\n\r\n", path, host)
	}()
	br := bufio.NewReader(conn)
	first, err := http.ReadResponse(br, &http.Request{Method: "PATCH"})
	if err != nil {
		t.Fatalf("the refused PATCH's answer: %v", err)
	}
	io.Copy(io.Discard, first.Body)
	if first.StatusCode != http.StatusConflict || first.Close {
		t.Fatalf("PATCH at a wrong offset: %d (close %v), want 409 on a kept connection", first.StatusCode, first.Close)
	}
	second, err := http.ReadResponse(br, &http.Request{Method: "HEAD"})
	if err != nil || second.StatusCode != http.StatusOK || second.Header.Get("Upload-Offset") != "0" {
		t.Fatalf("HEAD on the same connection: %v %v, want 200 at offset 0", second, err)
	}
}
