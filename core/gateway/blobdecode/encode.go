package blobdecode

import (
	"io"

	"github.com/mcpblob/mcpblob/core/codec"
)

// Encode writes src's bytes to w as standard, padded base64 (the codec's
// streaming encoder: fixed buffers, whatever src's size) and reports how
// many bytes of src it encoded. The gateway sends an offloaded blob back
// to a resources/read this way.
func Encode(w io.Writer, src io.Reader) (int64, error) {
	enc := codec.NewEncoder(codec.StdEncoding, w)
	n, err := io.Copy(enc, src)
	if cerr := enc.Close(); err == nil {
		err = cerr
	}
	return n, err
}
