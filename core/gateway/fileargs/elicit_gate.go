package fileargs

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Carriers seal and open the gateway's carriers for one principal: Seal
// makes a token of orig (raw JSON) and data; Open gives them back, ok
// false for a token not the gateway's or sealed for another principal.
type Carriers struct {
	Seal func(orig, data []byte) (string, error)
	Open func(token string) (orig, data []byte, ok bool)
}

// carrierPrefix starts every carrier: "mcpblob-elicit." and a token.
const carrierPrefix = "mcpblob-elicit."

// maxCarrierRecord bounds what one carrier holds (the descriptors' JSON,
// the original id or key): a form over it is relayed as it is, unchecked.
const maxCarrierRecord = 2 << 10

// seal is the carrier (a JSON string) of orig and a form's specs.
func (cs Carriers) seal(orig []byte, specs map[string]Spec) ([]byte, bool) {
	data, err := json.Marshal(specs)
	if err != nil || len(data) > maxCarrierRecord || len(orig) > maxCarrierRecord {
		return nil, false
	}
	tok, err := cs.Seal(orig, data)
	if err != nil {
		return nil, false
	}
	return strconv.AppendQuote(nil, carrierPrefix+tok), true
}

// open is the Resolver of cs's carriers.
func (cs Carriers) open(raw []byte) ([]byte, map[string]Spec, bool) {
	var s string
	if !bytes.HasPrefix(raw, []byte(`"`+carrierPrefix)) || json.Unmarshal(raw, &s) != nil {
		return nil, nil, false
	}
	orig, data, ok := cs.Open(strings.TrimPrefix(s, carrierPrefix))
	var specs map[string]Spec
	if !ok || json.Unmarshal(data, &specs) != nil {
		return nil, nil, false
	}
	return orig, specs, true
}

// RetryMethod reports a method whose 2026-07-28 answer may be
// input_required, and so whose request may be a retry with inputResponses.
func RetryMethod(method string) bool {
	return method == "tools/call" || method == "resources/read" || method == "prompts/get"
}

// AnswerForm is the elicitation answer a POST of method (in the
// 2026-07-28 era: modern) may be: a 2025-11-25 message without a method
// (a response), or a 2026-07-28 retry.
func AnswerForm(modern bool, method string) (Form, bool) {
	switch {
	case modern && RetryMethod(method):
		return FormRetry, true
	case !modern && method == "":
		return FormResponse, true
	}
	return 0, false
}

// Data is the JSON-RPC error data of a refusal: the field, its input key
// (2026-07-28), the maxSize broken.
func (e *FieldRefusal) Data() map[string]any {
	data := map[string]any{"field": e.Field}
	if e.Input != "" {
		data["input"] = e.Input
	}
	if e.Limit > 0 {
		data["maxSize"] = e.Limit
	}
	return data
}

// ElicitGate is a POST body on its way upstream through an [Elicit] walk:
// each chunk read is handed on as the walk forwards it; a refusal is the
// read error. Safe for a transport's reads and a concurrent Stop.
type ElicitGate struct {
	mu      sync.Mutex
	src     io.Reader
	form    Form
	walk    *Elicit
	buf     []byte
	pending []byte
	ended   bool
	metrics Metrics
	counted bool // a refusal counted
}

// NewElicitGate returns the gate of body src (n bytes, -1 unknown), which
// may be an elicitation answer of form bringing cs's carriers back; m
// counts its refusal (at Stop).
func NewElicitGate(src io.Reader, n int64, form Form, cs Carriers, m Metrics) *ElicitGate {
	size := 32 << 10
	if n >= 0 && n < int64(size) {
		size = max(int(n)+1, 512) // a small body: a small buffer
	}
	return &ElicitGate{src: src, form: form, walk: NewElicit(form, cs.open), buf: make([]byte, size), metrics: MetricsOf(m)}
}

func (eg *ElicitGate) Read(p []byte) (int, error) {
	eg.mu.Lock()
	defer eg.mu.Unlock()
	for len(eg.pending) == 0 {
		if ref := eg.walk.Refused(); ref != nil {
			return 0, ref
		}
		if eg.ended {
			return 0, io.EOF
		}
		if err := eg.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, eg.pending)
	eg.pending = eg.pending[n:]
	return n, nil
}

// fill reads a chunk of the body through the walk.
func (eg *ElicitGate) fill() error {
	n, err := eg.src.Read(eg.buf)
	if n > 0 {
		out, ferr := eg.walk.Feed(eg.buf[:n])
		if ferr != nil {
			return ferr
		}
		eg.pending = out
	}
	if errors.Is(err, io.EOF) {
		tail, ferr := eg.walk.End()
		if ferr != nil {
			return ferr
		}
		eg.pending, eg.ended = append(eg.pending, tail...), true
		return nil
	}
	return err
}

// Stop ends a check left midway and counts a refusal, once; nil-safe.
func (eg *ElicitGate) Stop() {
	if eg == nil {
		return
	}
	eg.mu.Lock()
	defer eg.mu.Unlock()
	eg.walk.Stop()
	if eg.walk.Refused() != nil && !eg.counted {
		eg.counted = true
		eg.metrics.FileRefused(SurfaceElicitation)
	}
}

// Refused is the field refused, or nil; nil-safe.
func (eg *ElicitGate) Refused() *FieldRefusal {
	if eg == nil {
		return nil
	}
	eg.mu.Lock()
	defer eg.mu.Unlock()
	return eg.walk.Refused()
}

// Original is the upstream's id of a refused 2025-11-25 response (nil for
// a 2026-07-28 retry): the upstream is owed an answer for it.
func (eg *ElicitGate) Original() json.RawMessage {
	eg.mu.Lock()
	defer eg.mu.Unlock()
	if eg.form != FormResponse {
		return nil
	}
	return eg.walk.Original()
}

// MayAsk reports whether the answer to a request of method (in the
// 2026-07-28 era: modern) can carry an elicitation form request, which
// MarkAnswer looks for. A 2026-07-28 server asks only in the
// input_required result of a retryable method (the era has no
// server-to-client requests); a 2025-11-25 server may send its requests
// on any stream (the GET stream, a POST's answer) but the answers to
// initialize (none before the session is initialized) and ping.
func MayAsk(modern bool, method string) bool {
	if modern {
		return RetryMethod(method)
	}
	return method != "initialize" && method != "ping"
}
