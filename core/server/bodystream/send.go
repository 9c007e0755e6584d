package bodystream

import (
	"io"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/core/server/sendfile"
)

// SendReader makes rc (size bytes) the response body and closes it once
// sent or dropped. Local files (an *os.File, or a *storage.LimitedFile for
// a range, possibly wrapped by something with Unwrap() io.ReadCloser) go
// out by sendfile(2); anything else (S3 bodies) is copied through a pooled
// buffer. Memory stays flat either way. The body is counted (Count).
func SendReader(ctx *fasthttp.RequestCtx, rc io.ReadCloser, size int64, timeout time.Duration) {
	if f, n, ok := sendfile.Local(rc); ok && n == size {
		ctx.Response.SetBodyStream(Count(sendfile.NewBody(f, n, rc, ctx.Conn(), timeout)), int(size))
		return
	}
	ctx.Response.SetBodyStream(Count(New(func(w mcp.StreamWriter) error {
		defer rc.Close()
		bp := copyBufs.Get().(*[]byte)
		defer copyBufs.Put(bp)
		n, err := io.CopyBuffer(w, struct{ io.Reader }{rc}, *bp)
		if err == nil && size >= 0 && n != size { // size < 0: unknown, chunked
			err = io.ErrUnexpectedEOF
		}
		return err
	}, ctx.Conn(), timeout)), int(size))
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}
