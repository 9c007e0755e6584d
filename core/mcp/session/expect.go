package session

import (
	"strconv"
	"sync"

	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/scan"
)

// Expectations holds the x-mcp-file fields of 2025-11-25 form
// elicitations in flight, by session id and request id, so their answers
// are bounded by the field's descriptor while they arrive. The session is
// not verified when an answer is routed: an expectation only ever
// tightens limits. The zero value is ready to use.
type Expectations struct {
	mu sync.Mutex
	m  map[string]map[string]scan.FileSpec
}

func expectKey(sid string, id []byte) string { return sid + "\x00" + jsonrpc.IDKey(id) }

// Get returns the file fields expected in the answer id (as sent) of
// session sid, or nil.
func (e *Expectations) Get(sid string, id []byte) map[string]scan.FileSpec {
	if sid == "" || id == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.m[expectKey(sid, id)]
}

// Expect records fields as expected in the answer to the server-to-client
// request id of session sid; it returns the key to Forget.
func (e *Expectations) Expect(sid string, id int64, fields map[string]scan.FileSpec) string {
	key := expectKey(sid, []byte(strconv.FormatInt(id, 10)))
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[string]map[string]scan.FileSpec{}
	}
	e.m[key] = fields
	return key
}

// Forget drops the expectations of keys.
func (e *Expectations) Forget(keys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range keys {
		delete(e.m, k)
	}
}

// Len is the number of expectations held.
func (e *Expectations) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.m)
}
