package gateway

import (
	"bufio"
	"strings"
	"testing"
)

func TestReadListAnswerSSE(t *testing.T) {
	g := &Gateway{opts: Options{MaxRewriteBytes: 1 << 10}}
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"mcpblob-gateway-tools-list\",\"result\":{\"tools\":[]}}\n\n"
	res, err := g.readListAnswer(bufio.NewReader(strings.NewReader(stream)), true)
	if err != nil || string(res) != `{"tools":[]}` {
		t.Fatalf("result %s, %v", res, err)
	}
	if _, err := g.readListAnswer(strings.NewReader(strings.Repeat(": pad\n", 400)), true); err == nil {
		t.Fatal("an SSE answer over MaxRewriteBytes was read")
	}
}
