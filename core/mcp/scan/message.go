package scan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpblob/mcpblob/asm"
	"github.com/mcpblob/mcpblob/core/codec"
)

const (
	// scanChunk is the scanner's read buffer once a body arrives fast;
	// scanSmall the one it starts with.
	scanChunk = 256 << 10
	scanSmall = 16 << 10
	// spoolThreshold: strings longer than this are spooled, not held.
	spoolThreshold = 64 << 10
	// maxDepth bounds JSON nesting.
	maxDepth = 64
	// drainLimit bounds the bytes of a rejected data URI read and discarded
	// so the rest of the message can still be parsed. Beyond it the request
	// is answered at once and the connection closed.
	drainLimit = 16 << 20
)

// ErrTooLarge reports held bytes beyond Options.MaxBodyBytes.
var ErrTooLarge = errors.New("scan: request body too large")

// MemberError reports a member the protocol cannot use, found while the
// message arrived:
//
//   - a member given more than once in the message object, params,
//     params._meta or params.arguments: which one would a proxy, a log or
//     another parser read? (Deeper objects keep the last one, as
//     encoding/json does.)
//   - a string over 64 KiB outside params.arguments, params.inputResponses
//     and result, where the protocol reads the value itself (the id, the
//     method, params.name or uri, a _meta value…) instead of handing a
//     payload to a handler: it is never silently read as "" (a string over
//     Options.MaxBodyBytes is ErrTooLarge, as before).
//
// The rest of the message is still read, its long strings dropped rather
// than taken out, so that the answer does not race a client still sending:
// up to 16 MiB of them; beyond, the message is abandoned (Unread) and the
// connection should close after the answer.
type MemberError struct {
	Path     string          // JSON path of the member ("/params/arguments/key", "/id")
	Repeated bool            // given more than once; else too long
	ID       json.RawMessage // the message's id, unless that is the member refused
	Unread   bool            // the message was not read to its end
}

func (e *MemberError) Error() string { return "scan: " + e.Problem() }

// Problem says what is wrong, naming the member ("member \"key\" of
// params.arguments is given more than once", "the string at id is longer
// than 65536 bytes").
func (e *MemberError) Problem() string {
	if !e.Repeated {
		return fmt.Sprintf("the string at %s is longer than %d bytes", dotted(e.Path), spoolThreshold)
	}
	i := strings.LastIndexByte(e.Path, '/')
	name := strconv.Quote(UnescapeElem(e.Path[i+1:]))
	if i <= 0 {
		return "member " + name + " is given more than once"
	}
	return "member " + name + " of " + dotted(e.Path[:i]) + " is given more than once"
}

// dotted writes a JSON path as a dotted name: "/params/_meta/k" is
// "params._meta.k".
func dotted(path string) string {
	elems := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i, e := range elems {
		elems[i] = UnescapeElem(e)
	}
	return strings.Join(elems, ".")
}

// divertible reports a place where a long string is a payload for a
// handler (a tool argument, an input response, a client's result), so it
// may be taken out of the message instead of refused.
func divertible(path string) bool {
	return strings.HasPrefix(path, "/params/arguments/") || strings.HasPrefix(path, "/params/inputResponses/") ||
		strings.HasPrefix(path, "/result/")
}

// AbortError reports a rejected data URI too long to drain: the message was
// not read to its end.
type AbortError struct {
	File *File
	ID   json.RawMessage // the message's id when it came first
}

func (e *AbortError) Error() string { return "scan: request abandoned: " + e.File.Problem }

// Seen is what the scanner has learnt of a message so far, for routing the
// strings that follow.
type Seen struct {
	ID     []byte            // the id as JSON, when it came first
	Method string            // method
	Name   string            // params.name
	State  string            // params.requestState
	Args   map[string]string // small string members of params.arguments (nil: none yet)
}

// Route says where a data URI goes: its descriptor (limits checked as bytes
// arrive) and, when Open is set, the sink its bytes go to straight away
// (else they are spooled).
type Route struct {
	Spec FileSpec
	Open func(h codec.DataURIHeader) (Sink, error)
}

// Router routes the strings of a message by JSON path.
type Router interface {
	// Route returns the route of the string at path, or false when the
	// path is not a known file (a long data URI there is then spooled,
	// bounded by Options.MaxFileBytes).
	Route(seen *Seen, path string) (Route, bool)
}

// Options bound one message.
type Options struct {
	// MaxBodyBytes bounds the held bytes plus raw spools.
	MaxBodyBytes int64
	// MaxFileBytes bounds the decoded bytes of all data URIs of the message
	// and each one a route does not bound more tightly.
	MaxFileBytes int64
	// SpoolDir holds the unlinked spool files; "" is os.TempDir().
	SpoolDir string
}

// Message is one message as scanned: rebuilt without its diverted strings,
// with the members the protocol reads located in it.
type Message struct {
	// Raw is the rebuilt message.
	Raw []byte
	// Fields, Params, Meta and Args are the members of the message object,
	// of params, params._meta and params.arguments (each only when that is
	// an object), as slices of Raw.
	Fields, Params, Meta, Args map[string]json.RawMessage
	// Method is the method when it is a string.
	Method string
	// Files holds the strings taken out of the message (never nil; release
	// it when done).
	Files *Files
}

var scanners = sync.Pool{New: func() any { return new(scanner) }}

// smallMessage is the room a message's rebuilt bytes get at first: a
// small request fits.
const smallMessage = 256

// containers whose members Message locates.
var containers = [...]string{"", "/params", "/params/_meta", "/params/arguments"}

type span struct {
	key        string
	start, end int
}

// Read scans the body r. Errors: ErrTooLarge, *BadJSONError, *MemberError,
// *AbortError, or the body's read error; the returned Message's Files are valid (and
// must be released) whatever the error.
func Read(r io.Reader, opts Options, router Router) (*Message, error) {
	// The scan buffers are pooled (json.go). Nothing holds on to them
	// after Read: diverted strings are copied out before it returns.
	// The scanner is pooled, and cleared on the way back, so that what it
	// held (the buffer of the last string, the key maps) is kept by
	// neither the pool nor the message. Files is an allocation of its own:
	// what holds on to it (a stream, for a request's lifetime) must not
	// keep the message's bytes.
	msg := &Message{Files: &Files{budget: opts.MaxFileBytes, spoolDir: opts.SpoolDir}}
	rs := scanners.Get().(*scanner)
	*rs = scanner{
		router:  router,
		b:       newByteScanner(r),
		limit:   opts.MaxBodyBytes,
		files:   msg.Files,
		maxFile: opts.MaxFileBytes,
		// Room for a small message in one allocation, not one per
		// doubling from 8 bytes.
		out: make([]byte, 0, smallMessage),
	}
	for ci := range rs.spans {
		rs.spans[ci] = rs.spanRoom[ci][:0]
	}
	defer func() {
		rs.b.release()
		*rs = scanner{}
		scanners.Put(rs)
	}()
	if r == nil {
		return msg, nil
	}
	err := rs.top()
	msg.Raw, msg.Method = rs.out, rs.seen.Method
	rs.locate(msg)
	return msg, err
}

// scanner rebuilds one message from the body stream.
type scanner struct {
	router Router
	b      byteScanner
	out    []byte // the rebuilt message
	limit  int64  // MaxBodyBytes for out plus raw spools
	spent  int64  // bytes of raw spools
	files  *Files
	seen   Seen
	// maxFile bounds a data URI no route describes.
	maxFile int64
	spans   [len(containers)][]span
	// spanRoom holds the spans of small containers, with no allocation.
	spanRoom [len(containers)][4]span
	// keys holds the member names of a container with many members, to
	// find repeated ones without a quadratic search.
	keys [len(containers)]map[string]struct{}
	// bad is the first member the message is refused for; dropped counts
	// the bytes of long strings dropped since.
	bad     *MemberError
	dropped int64
	// small is reused for every string held in memory (each is copied out
	// before the next is read).
	small bytes.Buffer
	// sr and held read the string being scanned; strings are read one at
	// a time, to their end, so one of each serves them all (a pair per
	// string was a fifth of a small request's allocations).
	sr   stringReader
	held io.LimitedReader
}

// nextString starts reading the string whose opening quote was consumed.
func (rs *scanner) nextString() *stringReader {
	rs.sr = stringReader{b: &rs.b}
	return &rs.sr
}

// hold reads up to spoolThreshold+1 bytes of the string sr reads into
// rs.small.
func (rs *scanner) hold(sr *stringReader) error {
	rs.small.Reset()
	if rs.holdBuffered(sr) {
		return nil
	}
	rs.held = io.LimitedReader{R: sr, N: spoolThreshold + 1}
	_, err := rs.small.ReadFrom(&rs.held)
	return err
}

// holdBuffered is hold's fast path for the common short string: when the
// fresh string sr reads ends in the buffered input, within spoolThreshold
// bytes and before any escape or control character, its bytes are copied
// in one step and sr is done. It reports whether it took the string.
func (rs *scanner) holdBuffered(sr *stringReader) bool {
	b := sr.b
	data := b.buf[b.lo:b.hi]
	if len(data) > spoolThreshold+1 {
		data = data[:spoolThreshold+1]
	}
	i := asm.IndexJSONSpecial(data)
	if i < 0 || data[i] != '"' {
		return false
	}
	rs.small.Write(data[:i])
	b.lo += i + 1
	sr.done = true
	return true
}

func (rs *scanner) locate(m *Message) {
	maps := [len(containers)]*map[string]json.RawMessage{&m.Fields, &m.Params, &m.Meta, &m.Args}
	for i, spans := range rs.spans {
		if len(spans) == 0 {
			continue
		}
		mm := make(map[string]json.RawMessage, len(spans))
		for _, sp := range spans {
			if sp.end > sp.start {
				mm[sp.key] = rs.out[sp.start:sp.end:sp.end]
			}
		}
		*maps[i] = mm
	}
}

// childContainer is the container a member value opens: params in the
// message, _meta and arguments in params; -1 for any other place.
func childContainer(parent int, key string) int {
	switch {
	case parent == 0 && key == "params":
		return 1
	case parent == 1 && key == "_meta":
		return 2
	case parent == 1 && key == "arguments":
		return 3
	}
	return -1
}

// reset forgets the members found so far in container ci and the
// containers inside it, as a container value starts.
func (rs *scanner) reset(ci int) {
	rs.spans[ci] = rs.spans[ci][:0]
	rs.keys[ci] = nil
	if ci == 1 {
		rs.reset(2)
		rs.reset(3)
	}
}

// repeated reports whether container ci has a member key already (as
// encoding/json decodes keys: invalid UTF-8 bytes alike). Members are
// compared in a map once a container has more than a few.
func (rs *scanner) repeated(ci int, key string) bool {
	key = validKey(key)
	if rs.keys[ci] != nil {
		_, dup := rs.keys[ci][key]
		return dup
	}
	for _, sp := range rs.spans[ci] {
		if sp.key == key {
			return true
		}
	}
	if len(rs.spans[ci]) >= 8 {
		rs.keys[ci] = make(map[string]struct{}, 2*len(rs.spans[ci]))
		for _, sp := range rs.spans[ci] {
			rs.keys[ci][sp.key] = struct{}{}
		}
	}
	return false
}

// refuse records the first member the message is refused for; the scan
// goes on, dropping long strings (drop).
func (rs *scanner) refuse(path string, repeated bool) {
	if rs.bad == nil {
		rs.bad = &MemberError{Path: path, Repeated: repeated}
	}
}

// refused returns the refusal with the id as far as it is known.
func (rs *scanner) refused(unread bool) error {
	if rs.bad.Path != "/id" {
		rs.bad.ID = rs.seen.ID
	}
	rs.bad.Unread = unread
	return rs.bad
}

// drop reads and discards the rest of a long string (head bytes of which
// were read) in place of taking it out of the message, once the message is
// refused or when the protocol would read it itself. A protocol string
// over the body limit is ErrTooLarge; dropped strings over drainLimit in
// all end the scan (the refusal, Unread).
func (rs *scanner) drop(path string, head int, sr *stringReader) error {
	if rs.bad == nil {
		budget := rs.limit - int64(len(rs.out)) - rs.spent - int64(head)
		n, err := io.Copy(io.Discard, io.LimitReader(sr, budget+1))
		switch {
		case err != nil:
			return err
		case n > budget:
			return ErrTooLarge
		}
		rs.refuse(path, false)
		rs.dropped += int64(head) + n
	} else {
		n, err := io.Copy(io.Discard, io.LimitReader(sr, drainLimit-rs.dropped-int64(head)+1))
		rs.dropped += int64(head) + n
		if err != nil {
			return err
		}
	}
	if rs.dropped > drainLimit {
		return rs.refused(true)
	}
	rs.out = append(rs.out, `""`...)
	return nil
}

// PathElem escapes a key for a JSON path ("~" → "~0", "/" → "~1", RFC
// 6901), so no key can pass for a nested place. Files are found by paths
// built with it.
func PathElem(key string) string {
	if !strings.ContainsAny(key, "~/") {
		return key
	}
	return escapeElem.Replace(key)
}

// The replacers of path elements, built once (building one per key cost
// more than scanning the message).
var (
	escapeElem   = strings.NewReplacer("~", "~0", "/", "~1")
	unescapeElem = strings.NewReplacer("~1", "/", "~0", "~")
)

// UnescapeElem undoes PathElem.
func UnescapeElem(elem string) string {
	if !strings.Contains(elem, "~") {
		return elem
	}
	return unescapeElem.Replace(elem)
}

// validKey is key as encoding/json decodes it: each invalid UTF-8 byte
// becomes U+FFFD.
func validKey(key string) string {
	if utf8.ValidString(key) {
		return key
	}
	var b strings.Builder
	for _, r := range key {
		b.WriteRune(r)
	}
	return b.String()
}

func (rs *scanner) grow(n int) error {
	if int64(len(rs.out)+n)+rs.spent > rs.limit {
		return ErrTooLarge
	}
	return nil
}

func (rs *scanner) top() error {
	c, err := rs.b.skipWS()
	if err != nil {
		var bad *BadJSONError
		if errors.Is(err, io.EOF) || errors.As(err, &bad) {
			return nil // empty body: the protocol reports it
		}
		return err
	}
	if c != '{' {
		return rs.holdRest()
	}
	if err := rs.value("", 0, 0); err != nil {
		return err
	}
	// Only whitespace may follow.
	if rs.b.trailing() {
		return &BadJSONError{"data after the message"}
	} else if rs.b.err != io.EOF {
		return rs.b.readErr()
	}
	if rs.bad != nil {
		return rs.refused(false)
	}
	return nil
}

// holdRest keeps a body that is not an object (a batch, a scalar) as it
// is, bounded, for the protocol to say what is wrong with it.
func (rs *scanner) holdRest() error {
	for {
		if err := rs.grow(rs.b.hi - rs.b.lo); err != nil {
			return err
		}
		rs.out = append(rs.out, rs.b.buf[rs.b.lo:rs.b.hi]...)
		rs.b.lo = rs.b.hi
		if !rs.b.fill() {
			if rs.b.err == io.EOF {
				return nil
			}
			return rs.b.err
		}
	}
}

func (rs *scanner) value(path string, depth, cont int) error {
	if depth > maxDepth {
		return ErrTooDeep
	}
	c, err := rs.b.skipWS()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		return rs.object(path, depth, cont)
	case '[':
		return rs.array(path, depth)
	case '"':
		rs.b.lo++
		return rs.str(path)
	}
	return rs.literal(path)
}

func (rs *scanner) object(path string, depth, ci int) error {
	rs.b.lo++
	rs.out = append(rs.out, '{')
	for first := true; ; first = false {
		c, err := rs.b.skipWS()
		if err != nil {
			return err
		}
		if c == '}' && first {
			rs.b.lo++
			rs.out = append(rs.out, '}')
			return nil
		}
		if err := rs.member(path, depth, ci); err != nil {
			return err
		}
		if done, err := rs.next('}', "an object"); done || err != nil {
			return err
		}
	}
}

// member reads `"key": value` of the object at path (container ci, or -1).
func (rs *scanner) member(path string, depth, ci int) error {
	if c, _ := rs.b.skipWS(); c != '"' {
		return &BadJSONError{"object key must be a string"}
	}
	rs.b.lo++
	key, err := rs.smallString()
	if err != nil {
		return err
	}
	if err := rs.grow(len(key) + 3); err != nil {
		return err
	}
	rs.out = append(rs.out, '"')
	rs.out = AppendEscaped(rs.out, []byte(key))
	rs.out = append(rs.out, '"', ':')
	if c, err := rs.b.skipWS(); err != nil {
		return err
	} else if c != ':' {
		return &BadJSONError{"missing ':' after an object key"}
	}
	rs.b.lo++
	start := len(rs.out)
	child := -1
	if ci >= 0 {
		if child = childContainer(ci, key); child >= 0 {
			rs.reset(child)
		}
	}
	if ci >= 0 && rs.repeated(ci, key) {
		rs.refuse(path+"/"+PathElem(validKey(key)), true)
	}
	at := memberPath(path, key)
	rs.files.drop(at)
	if err := rs.value(at, depth+1, child); err != nil {
		return err
	}
	if ci >= 0 {
		sp := span{key: validKey(key), start: start, end: len(rs.out)}
		rs.spans[ci] = append(rs.spans[ci], sp)
		if rs.keys[ci] != nil {
			rs.keys[ci][sp.key] = struct{}{}
		}
	}
	return nil
}

func (rs *scanner) array(path string, depth int) error {
	rs.b.lo++
	rs.out = append(rs.out, '[')
	for i := 0; ; i++ {
		c, err := rs.b.skipWS()
		if err != nil {
			return err
		}
		if c == ']' && i == 0 {
			rs.b.lo++
			rs.out = append(rs.out, ']')
			return nil
		}
		if err := rs.value(path+"/"+strconv.Itoa(i), depth+1, -1); err != nil {
			return err
		}
		if done, err := rs.next(']', "an array"); done || err != nil {
			return err
		}
	}
}

// next reads what follows a member or an element: ',' (more follow) or
// end (the container is done), copying it; anything else is bad JSON.
func (rs *scanner) next(end byte, in string) (done bool, err error) {
	c, err := rs.b.skipWS()
	if err != nil {
		return false, err
	}
	rs.b.lo++
	switch c {
	case ',':
		rs.out = append(rs.out, ',')
		return false, nil
	case end:
		rs.out = append(rs.out, end)
		return true, nil
	}
	return false, &BadJSONError{"missing ',' or '" + string(end) + "' in " + in}
}

// literal copies a number, true, false or null, and checks it.
func (rs *scanner) literal(path string) error {
	start := len(rs.out)
	for {
		for rs.b.lo < rs.b.hi {
			c := rs.b.buf[rs.b.lo]
			if !(c == '-' || c == '+' || c == '.' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')) {
				return rs.endLiteral(path, start, c)
			}
			if err := rs.grow(1); err != nil {
				return err
			}
			rs.out = append(rs.out, c)
			rs.b.lo++
		}
		if !rs.b.fill() {
			if rs.b.err == io.EOF && len(rs.out) > start {
				return rs.endLiteral(path, start, 0)
			}
			return rs.b.readErr()
		}
	}
}

func (rs *scanner) endLiteral(path string, start int, next byte) error {
	lit := rs.out[start:]
	if len(lit) == 0 {
		return &BadJSONError{fmt.Sprintf("unexpected character %q", next)}
	}
	if !validLiteral(lit) {
		return &BadJSONError{fmt.Sprintf("invalid literal %q", lit)}
	}
	if path == "/id" {
		rs.seen.ID = append([]byte(nil), lit...)
	}
	return nil
}

// smallString reads a string that must stay small (object keys).
func (rs *scanner) smallString() (string, error) {
	// bytes.Buffer reads in place (io.ReaderFrom); io.Copy into a
	// strings.Builder would allocate a 32 KiB copy buffer per key.
	sb := &rs.small
	if err := rs.hold(rs.nextString()); err != nil {
		return "", err
	}
	if sb.Len() > spoolThreshold {
		return "", ErrTooLarge
	}
	if k := knownKey(sb.Bytes()); k != "" {
		return k, nil
	}
	return sb.String(), nil
}

// str reads a string value at path.
func (rs *scanner) str(path string) error {
	sr := rs.nextString()
	var (
		route  Route
		routed bool
	)
	if rs.bad == nil { // a refused message feeds no sink
		route, routed = rs.route(path)
	}
	if routed && route.Open != nil {
		f, err := rs.files.decode(path, route, sr)
		if err != nil {
			return err
		}
		rs.out = append(rs.out, `""`...)
		return rs.finishDiverted(f, sr)
	}
	// Hold up to spoolThreshold bytes; a longer string is diverted.
	held := &rs.small
	if err := rs.hold(sr); err != nil {
		return err
	}
	if held.Len() <= spoolThreshold {
		if err := rs.grow(held.Len() + 2); err != nil {
			return err
		}
		v := held.Bytes()
		rs.note(path, v)
		rs.out = append(rs.out, '"')
		rs.out = AppendEscaped(rs.out, v)
		rs.out = append(rs.out, '"')
		return nil
	}
	if rs.bad != nil || !divertible(path) {
		return rs.drop(path, held.Len(), sr)
	}
	rs.out = append(rs.out, `""`...)
	if !routed {
		route = Route{Spec: FileSpec{MaxSize: rs.maxFile}}
	}
	return rs.divert(path, route, held.Bytes(), sr)
}

// divert takes a long string, whose first bytes are head, out of the
// message.
func (rs *scanner) divert(path string, route Route, head []byte, sr *stringReader) error {
	src := io.MultiReader(bytes.NewReader(head), sr)
	if len(head) >= 5 && strings.EqualFold(string(head[:5]), "data:") {
		f, err := rs.files.decode(path, Route{Spec: route.Spec}, src)
		if err != nil {
			return err
		}
		return rs.finishDiverted(f, sr)
	}
	f, err := rs.files.rawSpool(path, src, rs.limit-int64(len(rs.out))-rs.spent)
	if err != nil {
		return err
	}
	rs.spent += f.Size
	return nil
}

// finishDiverted reads what is left of a diverted string after a data URI
// problem, or abandons the message when too much is left.
func (rs *scanner) finishDiverted(f *File, sr *stringReader) error {
	if sr.done {
		return nil
	}
	ok, err := sr.drain(drainLimit)
	if err != nil {
		return err
	}
	if !ok {
		return &AbortError{File: f, ID: rs.seen.ID}
	}
	return nil
}

// note remembers the small strings the router needs to route later ones.
func (rs *scanner) note(path string, v []byte) {
	switch {
	case path == "/method":
		if rs.seen.Method = knownMethod(v); rs.seen.Method == "" {
			rs.seen.Method = string(v)
		}
	case path == "/id":
		rs.seen.ID = jsonQuote(v)
	case path == "/params/name":
		rs.seen.Name = string(v)
	case path == "/params/requestState":
		rs.seen.State = string(v)
	case strings.HasPrefix(path, "/params/arguments/") && !strings.Contains(path[len("/params/arguments/"):], "/"):
		if rs.seen.Args == nil {
			rs.seen.Args = map[string]string{}
		}
		rs.seen.Args[UnescapeElem(path[len("/params/arguments/"):])] = string(v)
	}
}

func jsonQuote(v []byte) []byte {
	out := append(make([]byte, 0, len(v)+2), '"')
	out = AppendEscaped(out, v)
	return append(out, '"')
}

func (rs *scanner) route(path string) (Route, bool) {
	if rs.router == nil {
		return Route{}, false
	}
	return rs.router.Route(&rs.seen, path)
}
