package mcp

import (
	"encoding/base64"
	"encoding/json"
)

// Content is one content block of a tool result or a prompt message:
// [Text], [Image], [Audio], [ResourceLink] or [EmbeddedResource]. Blocks
// encode with their keys sorted, like every object the server sends.
type Content interface {
	json.Marshaler
	object() Object
}

// Text is a text content block.
type Text struct {
	Text string
}

func (b Text) object() Object { return Object{"type": "text", "text": b.Text} }

// MarshalJSON encodes the block as the protocol sends it.
func (b Text) MarshalJSON() ([]byte, error) { return json.Marshal(b.object()) }

// Image is an image content block: Data, sent base64, of MIMEType.
type Image struct {
	Data     []byte
	MIMEType string
}

func (b Image) object() Object {
	return Object{"type": "image", "data": base64.StdEncoding.EncodeToString(b.Data), "mimeType": b.MIMEType}
}

// MarshalJSON encodes the block as the protocol sends it.
func (b Image) MarshalJSON() ([]byte, error) { return json.Marshal(b.object()) }

// Audio is an audio content block: Data, sent base64, of MIMEType.
type Audio struct {
	Data     []byte
	MIMEType string
}

func (b Audio) object() Object {
	return Object{"type": "audio", "data": base64.StdEncoding.EncodeToString(b.Data), "mimeType": b.MIMEType}
}

// MarshalJSON encodes the block as the protocol sends it.
func (b Audio) MarshalJSON() ([]byte, error) { return json.Marshal(b.object()) }

// ResourceLink is a resource_link content block: a resource the client
// may read (resources/read, resources/stream), described as
// resources/list describes it.
type ResourceLink struct {
	Resource
}

func (b ResourceLink) object() Object {
	o := b.Resource.object()
	o["type"] = "resource_link"
	return o
}

// MarshalJSON encodes the block as the protocol sends it.
func (b ResourceLink) MarshalJSON() ([]byte, error) { return json.Marshal(b.object()) }

// EmbeddedResource is a resource content block: a small resource's
// contents sent inline, Text, or Blob (base64) when Blob is not nil.
type EmbeddedResource struct {
	URI, MIMEType string
	Text          string
	Blob          []byte
}

func (b EmbeddedResource) object() Object {
	r := Object{"uri": b.URI}
	if b.MIMEType != "" {
		r["mimeType"] = b.MIMEType
	}
	if b.Blob != nil {
		r["blob"] = base64.StdEncoding.EncodeToString(b.Blob)
	} else {
		r["text"] = b.Text
	}
	return Object{"type": "resource", "resource": r}
}

// MarshalJSON encodes the block as the protocol sends it.
func (b EmbeddedResource) MarshalJSON() ([]byte, error) { return json.Marshal(b.object()) }
