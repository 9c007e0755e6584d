package blobs

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpblob/mcpblob/core/mcp"
	"github.com/mcpblob/mcpblob/storage"
)

// brokenRecords is a store whose records fail: the server's fault.
type brokenRecords struct{ storage.Backend }

var errBrokenRecords = errors.New("records: disk on fire")

func (brokenRecords) Recorder() storage.Recorder { return brokenRecorder{} }

type brokenRecorder struct{}

func (brokenRecorder) GetRecord(context.Context, string) ([]byte, string, error) {
	return nil, "", errBrokenRecords
}
func (brokenRecorder) PutRecord(context.Context, string, []byte, string) (string, error) {
	return "", errBrokenRecords
}
func (brokenRecorder) DeleteRecord(context.Context, string) error { return errBrokenRecords }
func (brokenRecorder) ListRecords(context.Context, string, func(string) bool) error {
	return errBrokenRecords
}

// TestFilesInternalReason: a files/* method that fails for the server's
// fault answers -32603 with data.reason "internal", and the cause goes to
// the log, not to the client.
func TestFilesInternalReason(t *testing.T) {
	t.Parallel()
	s := newToolServer(t, brokenRecords{newLocalStore(t)}, mcp.Options{}, Options{})
	for _, era := range []string{legacyVersion, modernVersion} {
		c := s.client(t, era, `{"files":{}}`)
		for method, params := range map[string]string{
			"files/authorizeUpload": `{"mimeType":"text/plain"}`,
			"files/getUpload":       `{"uploadId":"ABC"}`,
		} {
			m, err := c.Call(t.Context(), method, params)
			if err != nil {
				t.Fatal(err)
			}
			var e struct {
				Code    int
				Message string
				Data    struct{ Reason string }
			}
			_ = json.Unmarshal(m.Error, &e)
			if e.Code != mcp.CodeInternalError || e.Data.Reason != "internal" || strings.Contains(e.Message, "fire") {
				t.Errorf("%s %s on broken records: %s; want -32603 with data.reason internal, no cause", era, method, m.Error)
			}
		}
	}
	if !strings.Contains(s.logs.String(), "disk on fire") {
		t.Error("the cause was not logged")
	}
}
