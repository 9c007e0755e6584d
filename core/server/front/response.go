package front

import (
	"io"

	"github.com/mcpblob/mcpblob/core/server/bodystream"
)

// SendBody implements resstream.BodySender (resources/stream direct mode).
func (r *responseAdapter) SendBody(rc io.ReadCloser, size int64) {
	bodystream.SendReader(r.ctx, r.tel.Download(rc), size, r.timeout)
}
