package main

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mcpblob/mcpblob/loadtest/hardening/internal/badupstream"
)

// want returns what is wrong with r as the answer to behaviour b ("" =
// right). size is the upstream's answer size (the decoded blob's length).
func want(b badupstream.Behaviour, r reply, size int64) string {
	if r.status == 0 && b.Outcome != badupstream.Cut {
		return "no answer: " + r.String()
	}
	switch b.Outcome {
	case badupstream.Relayed:
		if r.status != http.StatusOK || r.cut != nil {
			return "want the upstream's answer relayed whole (200); got " + r.String()
		}
	case badupstream.Decoded:
		if r.status != http.StatusOK || r.cut != nil || r.n != size || r.bad >= 0 {
			return fmt.Sprintf("want the %d decoded bytes of the blob (200); got %s (first wrong byte at %d)", size, r, r.bad)
		}
	case badupstream.Cut:
		// Before its first byte the gateway may still refuse the answer;
		// once its status is set, a break closes the connection, and a
		// short answer still in the front's buffer then never leaves it:
		// the client sees the connection closed without an answer.
		switch {
		case r.status == http.StatusBadGateway:
			return refusal(b, r, false)
		case r.status == 0:
			return ""
		}
		if r.status != http.StatusOK || r.cut == nil {
			return "want 200 and a body that breaks off (a client must not take it for whole); got " + r.String()
		}
	case badupstream.Refused:
		return refusal(b, r, true)
	}
	return ""
}

// refusal checks a refusal: b's status (502 also when strict is false)
// and a clear error body: a JSON-RPC error naming the upstream problem
// (its kind in data.upstream when b names one) on /mcp, a JSON error
// object on /g/.
func refusal(b badupstream.Behaviour, r reply, strict bool) string {
	if strict && r.status != b.Status {
		return fmt.Sprintf("want HTTP %d with an error naming the upstream problem; got %s", b.Status, r)
	}
	var m struct {
		Error *struct {
			Code    json.RawMessage `json:"code"` // a JSON-RPC code on /mcp, a name on /g/
			Message string          `json:"message"`
			Data    struct {
				Upstream string `json:"upstream"`
			} `json:"data"`
		} `json:"error"`
	}
	if r.cut != nil || json.Unmarshal(r.head, &m) != nil || m.Error == nil || m.Error.Message == "" {
		return "unclear: the refusal is not a JSON error with a message: " + r.String()
	}
	if !b.Download && b.Kind != "" && m.Error.Data.Upstream != b.Kind {
		return fmt.Sprintf("want data.upstream %q; got %s", b.Kind, r)
	}
	return ""
}
