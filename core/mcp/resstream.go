package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
)

// resources/stream (SEP-2532, a proposal; SPEC.md §8). The server offers the
// resources.stream capability only to clients that declared
// resourceStreaming (2025-11-25: in initialize; 2026-07-28: in the request's
// clientCapabilities) and answers in one of three modes:
//
//   - StreamDirect: 200 with the raw bytes, Content-Type, Content-Length,
//     Content-Disposition and MCP-Resource-Uri; no JSON-RPC envelope;
//   - StreamRedirect: 302 to a presigned GET (backends implementing
//     storage.Presigner; others fall back to direct);
//   - StreamURL: a JSON-RPC result {uri, mimeType, size, downloadUrl} whose
//     downloadUrl is a signed, expiring, single-use /d/{token} link.
//
// Errors are JSON-RPC errors in the era's codes: resource not found is -32002
// in 2025-11-25 and -32602 (data.uri) in 2026-07-28; "stream not supported"
// is -32003 and "too large" (over the client's maxStreamSize) -32004 in both,
// which 2026-07-28 allows as implementation-defined codes (-32000…-32019). A
// 2026-07-28 client without the capability gets -32021 (HTTP 400); a
// 2025-11-25 one gets -32003. docs/byte-plane.md has the full table.

// Stream modes of [Options].StreamMode.
const (
	StreamDirect   = "direct"
	StreamRedirect = "redirect"
	StreamURL      = "url"
)

// SEP-2532 error codes.
const (
	CodeStreamNotSupported = -32003
	CodeStreamTooLarge     = -32004
)

// HeaderResourceURI names the canonical URI on direct and redirect answers.
const HeaderResourceURI = "MCP-Resource-Uri"

// DefaultLinkTTL is the default lifetime of download links and presigned
// redirects minted by the MCP endpoint.
const DefaultLinkTTL = 15 * time.Minute

// BodySender is an optional [ResponseWriter] extension for raw bytes:
// SendBody sends exactly size bytes read from r as the body and closes r
// afterwards (also when the body is never sent). core/server implements it
// to use sendfile(2) when r is an *os.File or a *storage.LimitedFile.
// Without it the bytes are copied through SetBodyStream.
type BodySender interface {
	SendBody(r io.ReadCloser, size int64)
}

// streamMode resolves the configured mode against the backend.
func (s *Server) streamMode() string {
	_, presigns := s.backend.(storage.Presigner)
	switch s.opts.StreamMode {
	case StreamDirect, StreamURL:
		return s.opts.StreamMode
	case StreamRedirect:
		if presigns {
			return StreamRedirect
		}
		return StreamDirect
	}
	if presigns {
		return StreamRedirect
	}
	return StreamDirect
}

// streamingCap returns whether the client declared resourceStreaming and its
// maxStreamSize (0 = no limit).
func streamingCap(caps json.RawMessage) (bool, int64) {
	var m struct {
		RS *struct {
			MaxStreamSize int64 `json:"maxStreamSize"`
		} `json:"resourceStreaming"`
	}
	if len(caps) == 0 || json.Unmarshal(caps, &m) != nil || m.RS == nil {
		return false, 0
	}
	if m.RS.MaxStreamSize < 0 {
		return true, 0
	}
	return true, m.RS.MaxStreamSize
}

// addStreamCapability sets resources.stream in caps when the client
// declared resourceStreaming.
func addStreamCapability(caps obj, client json.RawMessage) {
	if ok, _ := streamingCap(client); !ok {
		return
	}
	if r, ok := caps["resources"].(obj); ok {
		r["stream"] = true
	}
}

// streamResult is a resources/stream answer without a JSON-RPC envelope.
type streamResult struct {
	status  int
	headers [][2]string
	body    io.ReadCloser // direct mode
	size    int64
}

func streamNotSupported(uri, why string) *Error {
	return newError(CodeStreamNotSupported, "Resource streaming not supported: "+why,
		obj{"uri": uri, "suggestion": "Use resources/read"})
}

func (s *Server) resourcesStream(c *call) (any, error) {
	var uri string
	if e := c.param("uri", &uri); e != nil {
		return nil, e
	}
	if uri == "" {
		return nil, invalidParams("Invalid params: uri is required")
	}
	if c.modern && c.header != nil && c.header.Get(hdrName) != "" {
		// The released spec requires Mcp-Name only on tools/call,
		// resources/read and prompts/get; a client that sends it for
		// resources/stream (same params as resources/read) gets it checked.
		if e := checkNameHeader(c.header, uri, true); e != nil {
			return nil, e
		}
	}
	ok, maxSize := streamingCap(c.caps)
	if !ok {
		if c.modern {
			return nil, missingCapability("resourceStreaming")
		}
		return nil, streamNotSupported(uri, "the client did not declare the resourceStreaming capability")
	}
	key, isBlob := ParseBlobURI(uri)
	if !isBlob {
		if s.fixtures != nil {
			if _, found, _ := s.fixtures.read(c, uri); found {
				return nil, streamNotSupported(uri, "only blob:/// resources stream")
			}
		}
		return nil, notFound(c, uri)
	}
	if storage.ValidateKey(key) != nil {
		return nil, notFound(c, uri)
	}
	info, err := s.backend.Stat(c.ctx, key)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrInvalidKey) {
			return nil, notFound(c, uri)
		}
		return nil, fmt.Errorf("mcp: stat %q: %w", key, err)
	}
	if maxSize > 0 && info.Size > maxSize {
		return nil, newError(CodeStreamTooLarge, "Resource too large for the client's maxStreamSize",
			obj{"uri": uri, "size": info.Size, "maxStreamSize": maxSize})
	}
	canonical := BlobURI(info.Key)
	switch s.streamMode() {
	case StreamURL:
		link, err := s.keyring.MintDownload(s.opts.PublicURL, token.DownloadGrant{
			Principal: c.principal, Key: info.Key, SingleUse: true, TTL: s.linkTTL()})
		if err != nil {
			return nil, fmt.Errorf("mcp: mint download link: %w", err)
		}
		return obj{"uri": canonical, "mimeType": mediaType(info), "size": info.Size, "downloadUrl": link.URL}, nil
	case StreamRedirect:
		u, err := s.backend.(storage.Presigner).PresignGet(c.ctx, info.Key, s.linkTTL(), storage.PresignOptions{
			ContentType: mediaType(info), ContentDisposition: ContentDisposition("attachment", DownloadName(info))})
		if err != nil {
			return nil, fmt.Errorf("mcp: presign %q: %w", key, err)
		}
		return &streamResult{status: http.StatusFound, headers: [][2]string{
			{"Location", u.String()}, {HeaderResourceURI, canonical}, {"Cache-Control", "no-store"}}}, nil
	}
	// Direct. The reader may be bound to the call's context (S3); the
	// transport closes it once the body is out.
	rc, oinfo, err := s.backend.Open(c.ctx, key, nil)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, notFound(c, uri)
		}
		return nil, fmt.Errorf("mcp: open %q: %w", key, err)
	}
	if maxSize > 0 && oinfo.Size > maxSize { // replaced since Stat
		rc.Close()
		return nil, newError(CodeStreamTooLarge, "Resource too large for the client's maxStreamSize",
			obj{"uri": uri, "size": oinfo.Size, "maxStreamSize": maxSize})
	}
	h := [][2]string{
		{"Content-Type", mediaType(oinfo)},
		{"Content-Disposition", ContentDisposition("attachment", DownloadName(oinfo))},
		{HeaderResourceURI, canonical},
		{"Cache-Control", "no-store"},
	}
	if oinfo.ETag != "" {
		h = append(h, [2]string{"ETag", oinfo.ETag})
	}
	if oinfo.SHA256 != "" {
		h = append(h, [2]string{"x-mcp-sha256", oinfo.SHA256})
	}
	return &streamResult{status: http.StatusOK, headers: h, body: rc, size: oinfo.Size}, nil
}

func (s *Server) linkTTL() time.Duration {
	if s.opts.LinkTTL > 0 {
		return s.opts.LinkTTL
	}
	return DefaultLinkTTL
}

// respondRaw answers resources/stream: never SSE; a streamResult goes out as
// is, a JSON result (url mode) or an error as application/json.
func (s *Server) respondRaw(w ResponseWriter, c *call, m *method) {
	ctx, cancel := context.WithCancel(s.baseCtx)
	c.ctx = ctx
	res, err := s.invoke(c, m)
	if err != nil {
		cancel()
		writeError(w, c.id, s.toError(c, err))
		return
	}
	sr, ok := res.(*streamResult)
	if !ok {
		cancel()
		w.SetStatus(http.StatusOK)
		w.SetHeader("Content-Type", "application/json")
		w.SetBody(encodeResult(c.id, res.([]byte)))
		return
	}
	w.SetStatus(sr.status)
	for _, h := range sr.headers {
		w.SetHeader(h[0], h[1])
	}
	if sr.body == nil {
		cancel()
		return
	}
	body := &cancelCloser{ReadCloser: sr.body, cancel: cancel}
	if bs, ok := w.(BodySender); ok {
		bs.SendBody(body, sr.size)
		return
	}
	w.SetBodyStream(sr.size, func(sw StreamWriter) error {
		defer body.Close()
		_, err := io.Copy(sw, body)
		return err
	})
}

// cancelCloser closes the reader, then ends the call's context.
type cancelCloser struct {
	io.ReadCloser
	cancel func()
}

// Unwrap returns the storage reader, so a transport can find an *os.File.
func (c *cancelCloser) Unwrap() io.ReadCloser { return c.ReadCloser }

func (c *cancelCloser) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// DownloadName is the filename a download of info offers: its Filename,
// else the key's last segment.
func DownloadName(info storage.Info) string {
	if info.Filename != "" {
		return info.Filename
	}
	return path.Base(info.Key)
}

// ContentDisposition formats an RFC 6266 Content-Disposition value with an
// ASCII filename fallback and the exact UTF-8 name as filename* (RFC 8187).
// disposition is "attachment" or "inline".
func ContentDisposition(disposition, name string) string {
	if name == "" {
		return disposition
	}
	var ascii strings.Builder
	for _, r := range name {
		switch {
		case r < 0x20 || r == 0x7f:
		case r >= 0x80:
			ascii.WriteByte('_')
		case r == '"' || r == '\\':
			ascii.WriteByte('\\')
			ascii.WriteRune(r)
		default:
			ascii.WriteRune(r)
		}
	}
	return disposition + `; filename="` + ascii.String() + `"; filename*=UTF-8''` + rfc8187(name)
}

// rfc8187 percent-encodes everything outside attr-char.
func rfc8187(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAttrChar(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func isAttrChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}
