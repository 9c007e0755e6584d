package blobsvc

import (
	"github.com/mcpblob/mcpblob/core/token"
)

// DefaultMaxUploadBytes bounds a control-API PUT and an upload endpoint's
// maxSize when the request names none: 5 GiB.
const DefaultMaxUploadBytes = 5 << 30

// mintUpload mints an upload endpoint "<PublicURL>/u/<token>" for u. The
// token is a token.PurposeUpload token with Principal, Object (u.Key, or ""
// meaning the server stores under token.UploadObjectKey), MaxSize, Accept,
// Expires and Nonce = uploadId; the endpoint takes POST multipart/form-data
// (field "file") or PUT with a raw body. core/mcp mints the same tokens with
// Keyring.MintUpload, so both sides agree.
func (s *Server) mintUpload(u token.Upload) (token.MintedURL, error) {
	return s.env.Keyring.MintUpload(s.env.PublicURL, u)
}

// verifyUpload checks an upload endpoint's token.
func (s *Server) verifyUpload(tok string) (token.Claims, error) {
	return s.env.Keyring.Verify(tok, token.PurposeUpload)
}
