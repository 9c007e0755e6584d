package blobdecode_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mcpblob/mcpblob/core/gateway/blobdecode"
)

// A gateway's download: the upstream's resources/read answer (here SSE,
// after a progress notification) becomes the raw bytes of the resource,
// Content-Type set from mimeType before the first byte.
func ExampleDecode() {
	body := strings.NewReader("event: message\n" +
		`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}` + "\n\n" +
		"event: message\n" +
		`data: {"jsonrpc":"2.0","id":"dl-1","result":{"contents":[{"uri":"file:///hello.txt","mimeType":"text/plain","blob":"aGVsbG8sIHdvcmxkCg=="}]}}` + "\n\n")
	res, err := blobdecode.Decode(body, "text/event-stream", []byte(`"dl-1"`), os.Stdout, blobdecode.Options{
		Begin: func(h blobdecode.Header) error {
			fmt.Printf("Content-Type: %s\n\n", h.MimeType) // w.Header().Set(…) in a handler
			return nil
		},
	})
	var rpc *blobdecode.RPCError
	switch {
	case errors.As(err, &rpc):
		fmt.Println("the upstream said", rpc.Code, rpc.Message)
	case err != nil:
		fmt.Println("abort the response:", err)
	}
	fmt.Println(res.Written, "bytes of", res.URI)
	// Output:
	// Content-Type: text/plain
	//
	// hello, world
	// 13 bytes of file:///hello.txt
}

// linkSink keeps an offloaded value in memory; a gateway's writes it to
// its store.
type linkSink struct{ bytes.Buffer }

func (s *linkSink) Commit(o blobdecode.Offloaded) (blobdecode.Link, error) {
	return blobdecode.Link{URI: "blob:///offloaded/1", Name: "image 1", MimeType: o.MimeType, Size: o.Size}, nil
}
func (s *linkSink) Abort() {}

// Offloading: an image over the threshold leaves the tool result as a
// resource_link; the text stays as it came.
func ExampleRewrite() {
	msg := strings.NewReader(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"a chart"},` +
		`{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("iVBORw0KGgo", 4) + `"}]}}`)
	sink := &linkSink{}
	n, err := blobdecode.Rewrite(msg, os.Stdout, blobdecode.RewriteOptions{
		Threshold: 16,
		Open:      func(blobdecode.Value) (blobdecode.Sink, error) { return sink, nil },
	})
	fmt.Println()
	fmt.Println(n, "offloaded,", sink.Len(), "bytes stored,", err)
	// Output:
	// {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"a chart"},{"type":"resource_link","uri":"blob:///offloaded/1","name":"image 1","mimeType":"image/png","size":33}]}}
	// 1 offloaded, 33 bytes stored, <nil>
}
