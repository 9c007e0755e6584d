package mcp

import (
	"encoding/json"

	"github.com/mcpblob/mcpblob/core/mcp/blocks"
)

// Content is one content block of a tool result or a prompt message:
// [Text], [Image], [Audio], [ResourceLink] or [EmbeddedResource], each
// encoded with its keys sorted like every object the server sends.
type Content interface{ json.Marshaler }

// The blocks that need nothing of this package (package blocks).
type (
	Text             = blocks.Text
	Image            = blocks.Image
	Audio            = blocks.Audio
	EmbeddedResource = blocks.EmbeddedResource
)

// ResourceLink is a resource_link content block: a resource the client may
// read, described as resources/list describes it.
type ResourceLink struct{ Resource }

// MarshalJSON encodes the block as the protocol sends it.
func (b ResourceLink) MarshalJSON() ([]byte, error) {
	o := b.Resource.object()
	o["type"] = "resource_link"
	return json.Marshal(o)
}
