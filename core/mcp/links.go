package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/token"
)

// downloadLink is the get_download_link tool: a signed, expiring
// "<PublicURL>/d/<token>" link to the blob's raw bytes, bound to the caller
// (principal) and the key. The link itself is the credential: whoever holds
// it can download until it expires.
func (s *Server) downloadLink(c *call, args map[string]json.RawMessage) (obj, error) {
	key, bad := argString(args, "key", true)
	if bad != "" {
		return toolError("%s", bad), nil
	}
	ttl, bad := argInt(args, "ttlSeconds", int(DefaultLinkTTL/time.Second), 1, 86400)
	if bad != "" {
		return toolError("%s", bad), nil
	}
	filename, bad := argString(args, "filename", false)
	if bad != "" {
		return toolError("%s", bad), nil
	}
	if len(filename) > 255 || strings.ContainsFunc(filename, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return toolError("Argument \"filename\" must be at most 255 bytes without control characters"), nil
	}
	var singleUse bool
	if raw, ok := args["singleUse"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &singleUse) != nil {
			return toolError("Argument \"singleUse\" must be a boolean"), nil
		}
	}
	info, err := s.backend.Stat(c.ctx, key)
	if err != nil {
		if r := keyError(key, err); r != nil {
			return r, nil
		}
		return nil, fmt.Errorf("mcp: get_download_link %q: %w", key, err)
	}
	link, err := s.keyring.MintDownload(s.opts.PublicURL, token.DownloadGrant{
		Principal: c.principal, Key: info.Key, Filename: filename, SingleUse: singleUse, TTL: time.Duration(ttl) * time.Second})
	if err != nil {
		return nil, fmt.Errorf("mcp: get_download_link %q: %w", key, err)
	}
	sc := blobStruct(info)
	sc["url"] = link.URL
	sc["expiresAt"] = link.Expires.UTC().Format(time.RFC3339)
	return obj{"content": []any{structuredText(sc), resourceLink(info)}, "structuredContent": sc}, nil
}
