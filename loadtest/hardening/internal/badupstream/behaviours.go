package badupstream

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// Outcome is what the gateway's client must see.
type Outcome int

const (
	// Relayed: 200 and the upstream's bytes as they were (the gateway
	// does not validate what it only relays; docs/gateway.md).
	Relayed Outcome = iota
	// Refused: the status in Want with a JSON-RPC error (a JSON error
	// object on /g/) naming the upstream problem.
	Refused
	// Cut: 200, then the body breaks off (no final chunk, or short of
	// its Content-Length): a client never takes it for whole.
	Cut
	// Decoded: a download that delivers the blob's decoded bytes whole.
	Decoded
)

// Behaviour is one way the upstream answers, and what the gateway's
// client must get for it.
type Behaviour struct {
	Name     string
	Download bool // a resources/read answer, reached through a /g/ downloadUrl
	Outcome  Outcome
	Status   int    // for Refused: 502, 504 (404 for an upstream's not-found)
	Kind     string // for Refused on /mcp: data.upstream
	Timeout  bool   // ends at the gateway's --upstream-timeout
	Doc      string
	write    func(s *Server, w *bufio.Writer, c net.Conn, cl call)
}

// Behaviours are every behaviour, in the order the harness drives them.
var Behaviours = []Behaviour{
	{Name: "ok", Outcome: Relayed, Doc: "a normal tools/call result", write: writeOK},
	{Name: "endless-headers", Outcome: Refused, Status: 502, Kind: "over_bounds", Doc: "200, then header lines without end", write: endlessHeaders},
	{Name: "endless-sse-line", Outcome: Relayed, Doc: "an SSE answer whose one data line never ends (Size bytes; its end is the connection's close, which HTTP takes for the body's end)", write: endlessSSELine},
	{Name: "huge-json", Outcome: Relayed, Doc: "a JSON answer of Size bytes with its Content-Length", write: hugeJSON},
	// The gateway reads tools/call answers while --offload-over is on (the
	// default, which the harness keeps): one that is not JSON is malformed.
	{Name: "invalid-json", Outcome: Refused, Status: 502, Kind: "malformed", Doc: "application/json that is not JSON (a tools/call answer, which offloading reads)", write: fixed(200, "application/json", `{"jsonrpc":"2.0","id":`+"\x00\xff"+`{{{`)},
	{Name: "wrong-id", Outcome: Relayed, Doc: "a result for another id", write: fixed(200, "application/json", `{"jsonrpc":"2.0","id":987654321,"result":{}}`)},
	{Name: "ends-early", Outcome: Cut, Doc: "Content-Length 100000, 100 bytes, then the connection closes", write: claimed(100000, 100)},
	{Name: "claims-2gib", Outcome: Cut, Doc: "Content-Length 2 GiB, 4 KiB, then the connection closes", write: claimed(2<<30, 4<<10)},
	{Name: "drip-headers", Outcome: Refused, Status: 504, Kind: "timeout", Timeout: true, Doc: "the status line, then one header byte every 100 ms", write: dripHeaders},
	{Name: "silent", Outcome: Refused, Status: 504, Kind: "timeout", Timeout: true, Doc: "reads the request, never answers", write: silent},
	{Name: "drip-sse", Outcome: Relayed, Doc: "an SSE answer whose one event comes one byte every 20 ms, then the end", write: dripSSE},
	{Name: "redirect", Outcome: Refused, Status: 502, Kind: "non_mcp", Doc: "302 to another path of this server (a gateway must not follow: its credential and principal header would go to the Location)", write: redirect},
	{Name: "text-plain", Outcome: Refused, Status: 502, Kind: "non_mcp", Doc: "200 text/plain", write: fixed(200, "text/plain", "hello")},
	{Name: "html", Outcome: Refused, Status: 502, Kind: "non_mcp", Doc: "200 text/html, a login page", write: fixed(200, "text/html; charset=utf-8", "<!doctype html><html><body><form>login</form></body></html>")},
	{Name: "status-500", Outcome: Refused, Status: 502, Kind: "status", Doc: "500 text/plain", write: fixed(500, "text/plain", "internal error")},
	{Name: "unauthorized", Outcome: Refused, Status: 502, Kind: "credential", Doc: "401 with a challenge", write: fixed(401, "text/plain", "who are you")},
	{Name: "not-http", Outcome: Refused, Status: 502, Kind: "malformed", Doc: "an SSH banner", write: raw("SSH-2.0-OpenSSH_9.6\r\n")},
	{Name: "close", Outcome: Refused, Status: 502, Doc: "closes the connection without a byte", write: raw("")},

	{Name: "blob-ok", Download: true, Outcome: Decoded, Doc: "resources/read of a Size-byte blob", write: blobAnswer(false)},
	{Name: "blob-not-base64", Download: true, Outcome: Refused, Status: 502, Doc: "a blob that is not base64", write: fixed(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"bad://blob-not-base64","blob":"!!!! not base64 ~~~~"}]}}`)},
	{Name: "blob-ends-early", Download: true, Outcome: Cut, Doc: "a blob answer that ends halfway through its Content-Length", write: blobAnswer(true)},
	{Name: "blob-not-blob", Download: true, Outcome: Refused, Status: 502, Doc: "a result without contents", write: fixed(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)},
	{Name: "blob-rpc-error", Download: true, Outcome: Refused, Status: 404, Doc: "JSON-RPC error -32002 (resource not found)", write: fixed(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found"}}`)},
	{Name: "blob-invalid-json", Download: true, Outcome: Refused, Status: 502, Doc: "application/json that is not JSON", write: fixed(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"blob":`+"\x00{{")},
	{Name: "blob-html", Download: true, Outcome: Refused, Status: 502, Doc: "200 text/html", write: fixed(200, "text/html", "<html></html>")},
	{Name: "blob-endless-headers", Download: true, Outcome: Refused, Status: 502, Doc: "header lines without end", write: endlessHeaders},
	{Name: "blob-silent", Download: true, Outcome: Refused, Status: 504, Timeout: true, Doc: "never answers", write: silent},
	{Name: "blob-claims-2gib", Download: true, Outcome: Cut, Doc: "Content-Length 2 GiB, a valid start of a blob, then the connection closes", write: blobClaims2GiB},
}

// answer writes the behaviour cl names (unknown names: a normal result).
func answer(s *Server, w *bufio.Writer, c net.Conn, cl call) {
	if cl.name == "discover" {
		writeDiscover(s, w, c, cl)
		return
	}
	for _, b := range Behaviours {
		if b.Name == cl.name {
			b.write(s, w, c, cl)
			return
		}
	}
	writeOK(s, w, c, cl)
}

func head(w io.Writer, status int, ctype string, length int64) {
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nConnection: close\r\n", status, statusText(status), ctype)
	if length >= 0 {
		fmt.Fprintf(w, "Content-Length: %d\r\n", length)
	}
	if status == 401 {
		io.WriteString(w, "WWW-Authenticate: Bearer realm=\"upstream\"\r\n")
	}
	io.WriteString(w, "\r\n")
}

func statusText(code int) string {
	switch code {
	case 200:
		return "OK"
	case 302:
		return "Found"
	case 401:
		return "Unauthorized"
	}
	return "Internal Server Error"
}

func fixed(status int, ctype, body string) func(*Server, *bufio.Writer, net.Conn, call) {
	return func(_ *Server, w *bufio.Writer, _ net.Conn, _ call) {
		head(w, status, ctype, int64(len(body)))
		io.WriteString(w, body)
	}
}

func raw(s string) func(*Server, *bufio.Writer, net.Conn, call) {
	return func(_ *Server, w *bufio.Writer, _ net.Conn, _ call) { io.WriteString(w, s) }
}

func writeOK(_ *Server, w *bufio.Writer, _ net.Conn, cl call) {
	body := `{"jsonrpc":"2.0","id":` + cl.id + `,"result":{"content":[{"type":"text","text":"ok"}]}}`
	head(w, 200, "application/json", int64(len(body)))
	io.WriteString(w, body)
}

func writeDiscover(_ *Server, w *bufio.Writer, _ net.Conn, cl call) {
	body := `{"jsonrpc":"2.0","id":` + cl.id + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"badupstream","version":"1"}}}`
	head(w, 200, "application/json", int64(len(body)))
	io.WriteString(w, body)
}

// repeat writes n bytes of b (repeated) to w, stopping at a failed write.
func repeat(w *bufio.Writer, b []byte, n int64) {
	for sent := int64(0); sent < n; sent += int64(len(b)) {
		if _, err := w.Write(b[:min(int64(len(b)), n-sent)]); err != nil {
			return
		}
	}
}

func endlessHeaders(s *Server, w *bufio.Writer, _ net.Conn, _ call) {
	io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
	repeat(w, []byte("X-Pad: "+strings.Repeat("a", 4000)+"\r\n"), s.Size)
}

func endlessSSELine(s *Server, w *bufio.Writer, _ net.Conn, _ call) {
	head(w, 200, "text/event-stream", -1)
	io.WriteString(w, "data: ")
	repeat(w, []byte(strings.Repeat("a", 32<<10)), s.Size)
}

func hugeJSON(s *Server, w *bufio.Writer, _ net.Conn, cl call) {
	pre, post := `{"jsonrpc":"2.0","id":`+cl.id+`,"result":{"x":"`, `"}}`
	head(w, 200, "application/json", int64(len(pre))+s.Size+int64(len(post)))
	io.WriteString(w, pre)
	repeat(w, []byte(strings.Repeat("a", 32<<10)), s.Size)
	io.WriteString(w, post)
}

// claimed answers Content-Length length and sends only sent bytes.
func claimed(length, sent int64) func(*Server, *bufio.Writer, net.Conn, call) {
	return func(_ *Server, w *bufio.Writer, _ net.Conn, cl call) {
		head(w, 200, "application/json", length)
		body := `{"jsonrpc":"2.0","id":` + cl.id + `,"result":{"x":"`
		io.WriteString(w, body)
		repeat(w, []byte(strings.Repeat("a", 1024)), sent-int64(len(body)))
	}
}

// drip writes s one byte every d until the connection fails, the server
// closes, or s ends.
func drip(srv *Server, w *bufio.Writer, s string, d time.Duration) {
	for i := 0; i < len(s); i++ {
		select {
		case <-srv.quit:
			return
		case <-time.After(d):
		}
		w.WriteByte(s[i])
		if w.Flush() != nil {
			return
		}
	}
}

func dripHeaders(s *Server, w *bufio.Writer, _ net.Conn, _ call) {
	io.WriteString(w, "HTTP/1.1 200 OK\r\n")
	w.Flush()
	drip(s, w, "X-Slow: "+strings.Repeat("z", 600), 100*time.Millisecond)
}

func silent(s *Server, _ *bufio.Writer, c net.Conn, _ call) {
	// Hold the connection until the gateway gives up (it closes) or the
	// server stops.
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, c); close(done) }()
	select {
	case <-done:
	case <-s.quit:
	}
}

func dripSSE(s *Server, w *bufio.Writer, _ net.Conn, cl call) {
	head(w, 200, "text/event-stream", -1)
	w.Flush()
	event := `data: {"jsonrpc":"2.0","id":` + cl.id + `,"result":{"content":[]}}` + "\n\n"
	drip(s, w, event[:min(len(event), 100)], 20*time.Millisecond)
	io.WriteString(w, event[min(len(event), 100):])
}

func redirect(_ *Server, w *bufio.Writer, c net.Conn, _ call) {
	fmt.Fprintf(w, "HTTP/1.1 302 Found\r\nLocation: http://%s/elsewhere\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", c.LocalAddr())
}

// Pattern is byte i of the blob-ok blob.
func Pattern(i int64) byte { return byte(i*2654435761>>13) ^ byte(i>>8) }

// blobAnswer is a resources/read answer of Size pattern bytes as base64;
// cut ends it halfway through its Content-Length.
func blobAnswer(cut bool) func(*Server, *bufio.Writer, net.Conn, call) {
	return func(s *Server, w *bufio.Writer, _ net.Conn, cl call) {
		pre := `{"jsonrpc":"2.0","id":` + cl.id + `,"result":{"contents":[{"uri":"bad://blob","mimeType":"application/octet-stream","blob":"`
		post := `"}]}}`
		n := base64.StdEncoding.EncodedLen(int(s.Size))
		head(w, 200, "application/json", int64(len(pre)+n+len(post)))
		io.WriteString(w, pre)
		limit := s.Size
		if cut {
			limit = s.Size / 2
		}
		writeBlob(w, limit)
		if !cut {
			io.WriteString(w, post)
		}
	}
}

// writeBlob writes the base64 of the first n pattern bytes.
func writeBlob(w *bufio.Writer, n int64) {
	enc := base64.NewEncoder(base64.StdEncoding, w)
	chunk := make([]byte, 48<<10)
	for off := int64(0); off < n; off += int64(len(chunk)) {
		k := min(int64(len(chunk)), n-off)
		for i := range k {
			chunk[i] = Pattern(off + i)
		}
		if _, err := enc.Write(chunk[:k]); err != nil {
			return
		}
	}
	enc.Close()
}

func blobClaims2GiB(s *Server, w *bufio.Writer, _ net.Conn, cl call) {
	pre := `{"jsonrpc":"2.0","id":` + cl.id + `,"result":{"contents":[{"uri":"bad://blob","blob":"`
	head(w, 200, "application/json", 2<<30)
	io.WriteString(w, pre)
	writeBlob(w, 1<<20)
}
