package mcptest

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"net/url"
	"strings"
)

// File is a file argument, sent as a base64 data URI encoded while the
// request body is written: Body is read once, as the server reads the
// request, and never held whole.
type File struct {
	MediaType string // default application/octet-stream
	Name      string // the data URI's name parameter, "" for none
	// Size is the number of bytes Body yields, -1 when unknown. When every
	// file of a request has a Size, the request has a Content-Length;
	// otherwise it is chunked.
	Size int64
	Body io.Reader
}

// uriPrefix is the data URI up to its base64 payload, opening quote
// included.
func (f *File) uriPrefix() string {
	mt := f.MediaType
	if mt == "" {
		mt = "application/octet-stream"
	}
	if f.Name != "" {
		mt += ";name=" + url.PathEscape(f.Name)
	}
	return `"data:` + mt + `;base64,`
}

// Arg is one member of a tools/call arguments object.
type Arg struct {
	name  string
	value string // JSON, when file is nil
	file  *File
}

// JSON is an argument whose value is the JSON text value.
func JSON(name, value string) Arg { return Arg{name: name, value: value} }

// FileArg is an argument whose value is f as a data URI.
func FileArg(name string, f File) Arg { return Arg{name: name, file: &f} }

// NewToolRequest builds the tools/call of tool name with args, in their
// order. Its body is written by a goroutine into an io.Pipe as the request
// is sent; the request must be sent (or its body closed).
func (c *Client) NewToolRequest(ctx context.Context, name string, args ...Arg) *Request {
	const hole = "\x00" // where the arguments go; never in JSON text
	id := c.nextID()
	params := `{"name":` + jsonString(name) + `,"arguments":` + hole + `}`
	head, tail, _ := strings.Cut(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":`+c.WithMeta(params)+`}`, hole)
	size := argsSize(head, tail, args)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeArgs(pw, head, tail, args)) }()
	r := &Request{Request: c.post(ctx, pr, size), ID: []byte(id), RPCMethod: "tools/call",
		Params: `{"name":` + jsonString(name) + `}`}
	c.setMethod(r.Request, "tools/call", r.Params)
	c.setExtra(r.Request)
	return r
}

// CallToolArgs sends NewToolRequest and reads the answer.
func (c *Client) CallToolArgs(ctx context.Context, name string, args ...Arg) (*Response, error) {
	return c.Send(c.NewToolRequest(ctx, name, args...))
}

// argsSize is the body's length, -1 when a file's size is unknown.
func argsSize(head, tail string, args []Arg) int64 {
	n := int64(len(head) + len(tail) + len("{}"))
	for i, a := range args {
		if i > 0 {
			n++ // comma
		}
		n += int64(len(jsonString(a.name)) + 1)
		if a.file == nil {
			n += int64(len(a.value))
			continue
		}
		if a.file.Size < 0 {
			return -1
		}
		n += int64(len(a.file.uriPrefix())) + int64(base64.StdEncoding.EncodedLen(int(a.file.Size))) + 1
	}
	return n
}

func writeArgs(w io.Writer, head, tail string, args []Arg) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(head + "{")
	for i, a := range args {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(jsonString(a.name) + ":")
		if a.file == nil {
			bw.WriteString(a.value)
			continue
		}
		if err := writeFile(bw, a.file); err != nil {
			return err
		}
	}
	bw.WriteString("}" + tail)
	return bw.Flush()
}

func writeFile(bw *bufio.Writer, f *File) error {
	bw.WriteString(f.uriPrefix())
	enc := base64.NewEncoder(base64.StdEncoding, bw)
	if _, err := io.Copy(enc, f.Body); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	return bw.WriteByte('"')
}
