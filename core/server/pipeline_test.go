package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPipelinedAfterRefusal: an MCP body refused midway (nested too deep)
// is read to its end, so a request pipelined after it on the same
// connection is answered as itself; bd4921f parsed the refused body's rest
// as the next request (an unsolicited 431).
func TestPipelinedAfterRefusal(t *testing.T) {
	parallel(t)
	base, _ := startTestServer(t, Options{})
	host := strings.TrimPrefix(base, "http://")
	deep := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":` +
		strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}}}`
	first := "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n" +
		"Mcp-Method: tools/call\r\nMcp-Name: x\r\nContent-Length: " + strconv.Itoa(len(deep)) + "\r\n\r\n" + deep
	second := "GET /healthz HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	go conn.Write([]byte(first + second))
	br := bufio.NewReader(conn)
	for i, want := range []int{http.StatusBadRequest, http.StatusOK} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i+1, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("answer %d: %d %s; want %d", i+1, resp.StatusCode, body, want)
		}
		if i == 0 && !strings.Contains(string(body), "deeper than 64") {
			t.Errorf("answer 1: %s; want the nesting error", body)
		}
	}
}
