// Package blocks holds the content blocks of tool results and prompt
// messages that need nothing of package mcp: text, image, audio and an
// embedded resource, each encoded as the protocol sends it with its keys
// sorted. Package mcp re-exports them ([mcp.Text], [mcp.Image], …).
//
// It imports the standard library only.
package blocks

import (
	"encoding/base64"
	"encoding/json"
)

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

// EmbeddedResource is a resource content block: a small resource's
// contents inline, Text, or Blob (sent base64) when Blob is not nil.
type EmbeddedResource struct {
	URI, MIMEType, Text string
	Blob                []byte
}

// MarshalJSON encodes the block as the protocol sends it.
func (b Text) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"type": "text", "text": b.Text})
}

// MarshalJSON encodes the block as the protocol sends it.
func (b Image) MarshalJSON() ([]byte, error) { return media("image", b.Data, b.MIMEType) }

// MarshalJSON encodes the block as the protocol sends it.
func (b Audio) MarshalJSON() ([]byte, error) { return media("audio", b.Data, b.MIMEType) }

func media(typ string, data []byte, mimeType string) ([]byte, error) {
	return json.Marshal(map[string]any{"type": typ, "data": base64.StdEncoding.EncodeToString(data), "mimeType": mimeType})
}

// MarshalJSON encodes the block as the protocol sends it.
func (b EmbeddedResource) MarshalJSON() ([]byte, error) {
	r := map[string]any{"uri": b.URI}
	if b.MIMEType != "" {
		r["mimeType"] = b.MIMEType
	}
	if b.Blob != nil {
		r["blob"] = base64.StdEncoding.EncodeToString(b.Blob)
	} else {
		r["text"] = b.Text
	}
	return json.Marshal(map[string]any{"type": "resource", "resource": r})
}
