package fileargs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/mcpblob/mcpblob/core/codec"
)

// The file fields of elicitation form answers (docs/gateway.md, "File
// inputs"). An upstream's elicitation/create form request whose
// requestedSchema marks fields x-mcp-file ([FormSpecs]) reaches the client
// with a carrier the gateway made: the request's id (2025-11-25) or its
// inputRequests key (2026-07-28), a sealed record of the original and the
// fields' descriptors. The client's answer brings the carrier back; an
// [Elicit] walks that answer as it streams, puts the original back in the
// carrier's place (padded with spaces to the same length), and checks the
// answer's content.{field} data URIs against the descriptors.

// Form is the kind of elicitation answer a body may be.
type Form uint8

const (
	// FormResponse is a 2025-11-25 JSON-RPC response to elicitation/create:
	// result.content.{field}; its carrier is the top-level id.
	FormResponse Form = iota
	// FormRetry is a 2026-07-28 retry of tools/call, resources/read or
	// prompts/get: params.inputResponses.{key}.content.{field}; its
	// carriers are the keys.
	FormRetry
)

// Resolver opens a carrier: raw is the JSON string as the client sent it
// (quotes included). ok reports one of the gateway's own: orig is the raw
// JSON value to forward in its place (never longer than raw), specs the
// file fields of its form. A carrier not ok passes as it is.
type Resolver func(raw []byte) (orig []byte, specs map[string]Spec, ok bool)

// FieldRefusal is a file field of an elicitation answer refused: the
// gateway answers the client -32602 naming Input (the inputRequests key,
// 2026-07-28; "" for 2025-11-25) and Field.
type FieldRefusal struct {
	Input   string
	Field   string
	Problem string
	Limit   int64 // the maxSize broken, 0 for another problem
}

func (e *FieldRefusal) Error() string {
	if e.Input != "" {
		return fmt.Sprintf("input %q, field %q: %s", e.Input, e.Field, e.Problem)
	}
	return fmt.Sprintf("field %q: %s", e.Field, e.Problem)
}

// Bounds of an elicitation form's descriptors and of an answer's check.
const (
	maxFormFields   = 64      // file fields read from one requestedSchema
	maxCarrier      = 8 << 10 // a carrier string held to be opened
	maxPendingFacts = 64      // data URIs measured before the carrier came
)

// FormSpecs reads the x-mcp-file descriptors of an elicitation form's
// requestedSchema (nil when none, or when it is not an object schema).
// More than maxFormFields file fields: nil, the form is not checked.
func FormSpecs(requestedSchema json.RawMessage) map[string]Spec {
	var schema struct {
		Properties map[string]schemaProp `json:"properties"`
	}
	if json.Unmarshal(requestedSchema, &schema) != nil {
		return nil
	}
	specs := fileSpecs(schema.Properties)
	if len(specs) > maxFormFields {
		return nil
	}
	return specs
}

// facts is what measuring one data URI found.
type facts struct {
	field     string
	dataURI   bool   // the value is a readable data URI
	mediaType string // as declared
	size      int64  // decoded bytes (up to the spec's maxSize+1 when one was known)
	sniffed   string // a definite binary type its first bytes show, or ""
}

// judge is the problem of a measured value under spec, or "".
func (f *facts) judge(spec Spec) (problem string, limit int64) {
	switch {
	case !f.dataURI:
		return "", 0
	case !codec.MatchAccept(spec.Accept, f.mediaType):
		return fmt.Sprintf("media type %q is not accepted (accept: %s)", f.mediaType, strings.Join(spec.Accept, ", ")), 0
	case spec.MaxSize > 0 && f.size > spec.MaxSize:
		return fmt.Sprintf("file is larger than maxSize %d bytes", spec.MaxSize), spec.MaxSize
	case f.sniffed != "" && !codec.MatchAccept(spec.Accept, f.sniffed):
		return fmt.Sprintf("content is %s, which is not accepted (accept: %s)", f.sniffed, strings.Join(spec.Accept, ", ")), 0
	}
	return "", 0
}

// errStop ends a measure early: its spec is broken (or the body ended).
var errStop = errors.New("fileargs: measure stopped")

// measure reads the data URI r yields: its facts, read to the end, or up
// to the first problem under spec when spec is known (nil: measured whole).
func measure(r *io.PipeReader, field string, spec *Spec) *facts {
	f := &facts{field: field}
	dr, err := codec.NewDataURIReader(r)
	if err != nil {
		_, _ = io.Copy(io.Discard, r)
		return f
	}
	f.dataURI, f.mediaType = true, dr.Header.MediaType
	if spec != nil && !codec.MatchAccept(spec.Accept, f.mediaType) {
		r.CloseWithError(errStop)
		return f
	}
	c := &measureCounter{f: f, spec: spec}
	if _, err := dr.WriteTo(c); err == nil {
		c.sniff()
	} else if !c.stopped {
		f.dataURI = false // broken base64, or the value was abandoned: left to the upstream
	}
	r.CloseWithError(errStop)
	return f
}

// measureCounter counts decoded bytes and sniffs the first sniffLen.
type measureCounter struct {
	f       *facts
	spec    *Spec
	head    [sniffLen]byte
	sniffed bool
	stopped bool // Write refused: the spec is broken
}

func (c *measureCounter) Write(p []byte) (int, error) {
	if c.f.size < sniffLen {
		copy(c.head[c.f.size:], p)
	}
	c.f.size += int64(len(p))
	if c.f.size >= sniffLen {
		c.sniff()
	}
	if c.spec != nil {
		if problem, _ := c.f.judge(*c.spec); problem != "" {
			c.stopped = true
			return 0, errStop
		}
	}
	return len(p), nil
}

func (c *measureCounter) sniff() {
	if c.sniffed {
		return
	}
	c.sniffed = true
	mt, _, _ := mime.ParseMediaType(http.DetectContentType(c.head[:min(c.f.size, sniffLen)]))
	if definiteType(mt) {
		c.f.sniffed = mt
	}
}

// fieldMeasure measures one content value while it streams, through a
// pipe to measure on a goroutine of its own, started only for a value
// that begins "data:" (any other is not looked at).
type fieldMeasure struct {
	field  string
	spec   *Spec
	pre    []byte // the value's first bytes, until they show "data:"
	skip   bool   // the value is not a data URI
	active bool   // begun, not ended
	pw     *io.PipeWriter
	done   chan *facts
}

func (m *fieldMeasure) begin(field string, spec *Spec) {
	m.field, m.spec, m.pre, m.skip, m.active = field, spec, m.pre[:0], false, true
}

// write passes value bytes (escapes undone); false: the measure ended
// early (its facts are ready).
func (m *fieldMeasure) write(p []byte) bool {
	if !m.active || m.skip {
		return true
	}
	if m.pw == nil {
		need := len("data:") - len(m.pre)
		if len(p) < need {
			m.pre = append(m.pre, p...)
			return true
		}
		m.pre, p = append(m.pre, p[:need]...), p[need:]
		if !strings.EqualFold(string(m.pre), "data:") {
			m.skip = true
			return true
		}
		m.start()
		if _, err := m.pw.Write(m.pre); err != nil {
			return false
		}
	}
	if len(p) == 0 {
		return true
	}
	_, err := m.pw.Write(p)
	return err == nil
}

func (m *fieldMeasure) start() {
	pr, pw := io.Pipe()
	m.pw, m.done = pw, make(chan *facts, 1)
	field, spec, done := m.field, m.spec, m.done
	go func() { done <- measure(pr, field, spec) }()
}

// end closes the value and returns its facts.
func (m *fieldMeasure) end() *facts {
	m.active = false
	if m.pw == nil {
		return &facts{field: m.field}
	}
	_ = m.pw.Close()
	f := <-m.done
	m.pw, m.done = nil, nil
	return f
}

// stop ends a measure left midway.
func (m *fieldMeasure) stop() {
	m.active = false
	if m.pw != nil {
		_ = m.pw.CloseWithError(errStop)
		<-m.done
		m.pw, m.done = nil, nil
	}
}
