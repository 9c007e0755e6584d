package mcp

import (
	"encoding/base64"
	"encoding/json"
)

// Content is one content block of a tool result or a prompt message:
// [Text], [Image], [Audio], [ResourceLink] or [EmbeddedResource], each
// encoded with its keys sorted like every object the server sends.
type Content interface{ json.Marshaler }

// Text is a text content block.
type Text struct{ Text string }

// Image is an image content block: Data (sent base64) of MIMEType.
type Image struct {
	Data     []byte
	MIMEType string
}

// Audio is an audio content block: Data (sent base64) of MIMEType.
type Audio struct {
	Data     []byte
	MIMEType string
}

// ResourceLink is a resource_link content block: a resource the client may
// read, described as resources/list describes it.
type ResourceLink struct{ Resource }

// EmbeddedResource is a resource content block: a small resource's
// contents inline, Text, or Blob (sent base64) when Blob is not nil.
type EmbeddedResource struct {
	URI, MIMEType, Text string
	Blob                []byte
}

// MarshalJSON encodes the block as the protocol sends it.
func (b Text) MarshalJSON() ([]byte, error) {
	return json.Marshal(Object{"type": "text", "text": b.Text})
}

// MarshalJSON encodes the block as the protocol sends it.
func (b Image) MarshalJSON() ([]byte, error) { return media("image", b.Data, b.MIMEType) }

// MarshalJSON encodes the block as the protocol sends it.
func (b Audio) MarshalJSON() ([]byte, error) { return media("audio", b.Data, b.MIMEType) }

func media(typ string, data []byte, mimeType string) ([]byte, error) {
	return json.Marshal(Object{"type": typ, "data": base64.StdEncoding.EncodeToString(data), "mimeType": mimeType})
}

// MarshalJSON encodes the block as the protocol sends it.
func (b ResourceLink) MarshalJSON() ([]byte, error) {
	o := b.Resource.object()
	o["type"] = "resource_link"
	return json.Marshal(o)
}

// MarshalJSON encodes the block as the protocol sends it.
func (b EmbeddedResource) MarshalJSON() ([]byte, error) {
	r := Object{"uri": b.URI}
	if b.MIMEType != "" {
		r["mimeType"] = b.MIMEType
	}
	if b.Blob != nil {
		r["blob"] = base64.StdEncoding.EncodeToString(b.Blob)
	} else {
		r["text"] = b.Text
	}
	return json.Marshal(Object{"type": "resource", "resource": r})
}
