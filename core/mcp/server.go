package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/mcp/headers"
	"github.com/mcpblob/mcpblob/core/mcp/jsonrpc"
	"github.com/mcpblob/mcpblob/core/mcp/limits"
	"github.com/mcpblob/mcpblob/core/mcp/observe"
	"github.com/mcpblob/mcpblob/core/mcp/scan"
	"github.com/mcpblob/mcpblob/core/mcp/session"
	"github.com/mcpblob/mcpblob/core/mcp/sse"
	"github.com/mcpblob/mcpblob/core/mcp/tasks"
	"github.com/mcpblob/mcpblob/core/token"
)

// Protocol versions.
const (
	VersionModern   = "2026-07-28"
	Version20251125 = "2025-11-25"
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
)

var legacyVersions = map[string]bool{Version20251125: true, Version20250618: true, Version20250326: true}

// supportedModern lists the stateless versions server/discover offers.
var supportedModern = []string{VersionModern}

// _meta keys of the 2026-07-28 era.
const (
	metaProtocolVersion    = headers.MetaProtocolVersion
	metaClientCapabilities = headers.MetaClientCapabilities
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Defaults of [Options].
const (
	DefaultMaxBodyBytes    = 4 << 20
	DefaultMaxFileBytes    = 1 << 30
	DefaultSessionTTL      = 24 * time.Hour
	DefaultRequestStateTTL = 10 * time.Minute
	DefaultKeepAlive       = 15 * time.Second
	DefaultClientTimeout   = 5 * time.Minute
)

// Options configure a [Server]. The zero value of every field is the
// documented default.
type Options struct {
	// Keyring signs session ids and MRTR requestState. nil: a random
	// per-process keyring (tokens then verify on this process only).
	Keyring *token.Keyring
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Hub carries change events to notification streams; nil: a new Hub.
	Hub *Hub
	// Instructions is the optional initialize/discover instructions text.
	Instructions string
	// MaxBodyBytes bounds one POSTed JSON-RPC message, apart from its file
	// inputs. Default 4 MiB.
	MaxBodyBytes int64
	// MaxFileBytes bounds the decoded bytes of the data URIs in one message
	// when no x-mcp-file maxSize says less (docs/design.md, "Limits").
	// Default 1 GiB.
	MaxFileBytes int64
	// SpoolDir holds the unlinked temporary files large strings are spooled
	// to. Default os.TempDir().
	SpoolDir string
	// SessionTTL is how long a 2025-11-25 session id stays valid. Default 24h.
	SessionTTL time.Duration
	// LiveSessions, when set, is the record of live 2025-11-25 sessions
	// shared by every Server using it (the nodes of a cluster): initialize
	// records a session there, DELETE (or an eviction) removes the record,
	// and each request of a session asks it, so a session ended on one
	// node is refused by every other at its next request. Each record
	// written counts against Limits.ClaimsPerMinute. nil: an ended session
	// is refused by this Server only; the others accept its id until it
	// expires.
	LiveSessions session.LiveSessions
	// RequestStateTTL bounds MRTR requestState lifetime. Default 10 min.
	RequestStateTTL time.Duration
	// CacheTTL is the ttlMs hint on 2026-07-28 list and read results.
	// Default 0: clients revalidate every time.
	CacheTTL time.Duration
	// KeepAlive is the interval of SSE comment lines on long-lived
	// streams. Default 15s.
	KeepAlive time.Duration
	// ClientTimeout bounds waiting for a client's answer to a
	// server-to-client request (sampling, elicitation). Default 5 min.
	ClientTimeout time.Duration
	// Authorize, when set, decides whether a caller with these scopes may
	// make a request of method (and, for tools/call, prompts/get and
	// resources/read, of the named tool, prompt or resource), before the
	// request is served and before a tool's file inputs reach its
	// FileSink. A non-nil error is the answer, with its HTTP status and
	// headers (403 with a WWW-Authenticate challenge, say).
	Authorize func(principal string, scopes []string, method, name string) *Error
	// Limits bound the protocol state one principal and the node can make
	// this server hold (package limits).
	Limits limits.Limits
	// OpenFileURI, when set, opens SEP-2631 mcp-file URIs given where
	// x-mcp-file transferModes allow "upload", read as a [File].
	OpenFileURI FileURIOpener
}

// Implementation is the serverInfo a [Server] announces (initialize,
// server/discover and the _meta of 2026-07-28 results): the embedding
// program's own name, not the library's.
type Implementation struct {
	// Name is required: NewServer panics without one.
	Name string
	// Version defaults to "dev".
	Version string
	// Title is the optional display name.
	Title string
}

// Server is the MCP endpoint: one handler for both protocol eras.
//
// Text rule: a text resource's JSON-escaped length is not known up front,
// yet JSON responses carry Content-Length. For text blobs up to
// Options.MaxTextBytes the server makes a first streaming pass that checks
// UTF-8 and counts the escaped length, then streams the escaped text in
// chunks (re-reading the same file, or re-opening and checking the ETag).
// Larger or non-UTF-8 text is served as a base64 blob, whose length is
// always known. Memory stays flat either way.
type Server struct {
	impl    Implementation
	opts    Options
	keyring *token.Keyring
	log     *slog.Logger
	hub     *Hub

	methods   map[string]*method
	tools     []*tool
	toolMap   map[string]*tool
	toolsJSON func() ([]byte, error) // tools/list's "tools" array, encoded once
	// toolsResult is the whole tools/list result of the 2025 eras (no
	// member added per call), encoded once.
	toolsResult func() ([]byte, error)
	readHead    func() ([]byte, error) // encodeReadHead's, encoded once
	resources   []staticResource
	templates   []*template
	prompts     []*Prompt

	expect session.Expectations // x-mcp-file fields of 2025-11-25 elicitations in flight
	tasks  *tasks.Store         // nil unless a tool supports tasks

	baseCtx context.Context
	stop    context.CancelFunc

	sessions *session.Lifecycle // 2025-11-25 sessions (session.go)
	active   observe.Streams    // SSE streams in progress (note.go)
	budgets  limits.Pools       // protocol state per principal and per node (package limits)
}

// NewServer returns a Server announcing impl, configured by opts (nil: every
// default). It panics when impl.Name is empty: a server names itself, the
// library gives no default. Register tools, resources and prompts before
// serving.
func NewServer(impl Implementation, opts *Options) *Server {
	if impl.Name == "" {
		panic("mcp: NewServer: Implementation.Name is required")
	}
	if impl.Version == "" {
		impl.Version = "dev"
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	s := &Server{
		impl:    impl,
		opts:    o,
		keyring: o.Keyring,
		log:     o.Logger,
		hub:     o.Hub,
		toolMap: map[string]*tool{},
	}
	s.baseCtx, s.stop = context.WithCancel(context.Background())
	s.budgets = limits.NewPools(s.opts.Limits, s.log)
	s.sessions = &session.Lifecycle{Table: session.NewTable(s.budgets.Sessions, s.log), Keyring: s.keyring,
		TTL: o.SessionTTL, Live: o.LiveSessions, Claims: s.budgets.Claims, Versions: legacyVersions,
		Newest: Version20251125, CapabilityBytes: o.Limits.CapabilityBytes, Log: s.log}
	s.registerMethods()
	s.toolsJSON = sync.OnceValues(s.encodeTools)
	s.toolsResult = sync.OnceValues(s.encodeToolsResult)
	s.readHead = sync.OnceValues(s.encodeReadHead)
	return s
}

func (o Options) withDefaults() Options {
	if o.Keyring == nil {
		o.Keyring = token.NewRandomKeyring()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Hub == nil {
		o.Hub = &Hub{}
	}
	positive(&o.MaxBodyBytes, DefaultMaxBodyBytes)
	positive(&o.MaxFileBytes, DefaultMaxFileBytes)
	positive(&o.SessionTTL, DefaultSessionTTL)
	positive(&o.RequestStateTTL, DefaultRequestStateTTL)
	positive(&o.KeepAlive, DefaultKeepAlive)
	positive(&o.ClientTimeout, DefaultClientTimeout)
	o.Limits = o.Limits.WithDefaults()
	return o
}

// positive sets *v to def unless it is positive.
func positive[T int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// MaxRequestBytes is the longest request body the server can accept: a
// message's MaxBodyBytes plus the base64 of MaxFileBytes of file inputs. A
// transport may refuse a longer declared body before reading it (413); the
// scan enforces the finer limits as the body arrives.
func (s *Server) MaxRequestBytes() int64 {
	return s.opts.MaxBodyBytes + (s.opts.MaxFileBytes+2)/3*4
}

// Context is the server's context: it ends when the server closes. Work a
// handler starts that must outlive its call (a sink, a task) hangs off it.
func (s *Server) Context() context.Context { return s.baseCtx }

// Logger is the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// Hub returns the server's event hub.
func (s *Server) Hub() *Hub { return s.hub }

// Close ends every long-lived stream (GET streams, subscriptions/listen)
// gracefully and cancels running requests. Call it before the transport's
// own graceful shutdown so open streams do not hold it up.
func (s *Server) Close() error {
	s.stop()
	return nil
}

// ServeMCP handles one request to the MCP endpoint. It is transport
// neutral: a transport adapter (package mcphttp for net/http, core/server
// for fasthttp) checks Host, Origin and authentication, bounds and paces
// the body, then calls it.
func (s *Server) ServeMCP(r *Request, w ResponseWriter) {
	switch r.Method {
	case http.MethodPost:
		s.handlePost(r, w)
	case http.MethodGet:
		s.handleGet(r, w)
	case http.MethodDelete:
		s.handleDelete(r, w)
	default:
		w.SetHeader("Allow", "GET, POST, DELETE")
		writeError(w, nil, jsonrpc.NewError(CodeTransport, "Method not allowed", nil).WithStatus(http.StatusMethodNotAllowed))
	}
}

// writeError sends a standalone JSON error response.
func writeError(w ResponseWriter, id json.RawMessage, e *Error) {
	noteError(w)
	w.SetStatus(e.HTTPStatus())
	for k, v := range e.Header {
		w.SetHeader(k, v)
	}
	w.SetHeader("Content-Type", "application/json")
	w.SetBody(jsonrpc.EncodeError(id, e))
}

// ErrorBody returns the JSON-RPC error body (no id) the transport sends for
// failures it detects itself, such as an oversized body (413) or a bad
// Origin (403).
func ErrorBody(code int, msg string) []byte {
	return jsonrpc.EncodeError(nil, jsonrpc.NewError(code, msg, nil))
}

func (s *Server) handlePost(r *Request, w ResponseWriter) {
	if !headers.IsJSONMediaType(r.Header.Get("Content-Type")) {
		writeError(w, nil, jsonrpc.NewError(CodeTransport, "Unsupported Media Type: Content-Type must be application/json", nil).WithStatus(http.StatusUnsupportedMediaType))
		return
	}
	acc := headers.ParseAccept(r.Header.Get("Accept"))
	if !acc.JSON && !acc.SSE {
		writeError(w, nil, jsonrpc.NewError(CodeTransport, "Not Acceptable: Accept must include application/json or text/event-stream", nil).WithStatus(http.StatusNotAcceptable))
		return
	}
	// The body is scanned, not read whole: large strings are decoded or
	// spooled as they arrive (package scan), the rest is held up to
	// MaxBodyBytes.
	sm, err := scan.Read(r.Body, scan.Options{MaxBodyBytes: s.opts.MaxBodyBytes, MaxFileBytes: s.opts.MaxFileBytes,
		SpoolDir: s.opts.SpoolDir}, &router{s: s, r: r})
	defer sm.Files.Release()
	if err != nil {
		s.readFailed(w, err)
		return
	}
	msg, kind, perr := jsonrpc.Parse(sm)
	if perr != nil {
		var id json.RawMessage
		if msg != nil {
			id = msg.ID
		}
		writeError(w, id, perr)
		return
	}
	modern := s.isModern(r, msg, kind)
	if kind == jsonrpc.KindRequest {
		w = s.noteRequest(r, w, msg, modern)
	}
	if modern {
		s.serveModern(r, w, msg, kind, acc)
		return
	}
	s.serveLegacy(r, w, msg, kind, acc)
}

// readFailed answers a body the scanner could not read.
func (s *Server) readFailed(w ResponseWriter, err error) {
	var abort *scan.AbortError
	if !errors.As(err, &abort) {
		id, e, unread := jsonrpc.ReadError(err)
		if unread {
			w.SetHeader("Connection", "close")
		}
		writeError(w, id, e)
		return
	}
	// A rejected file too long to read past: answer now and let the
	// transport close the connection.
	s.log.Debug("mcp: request abandoned", "argument", abort.File.Name, "problem", abort.File.Problem)
	w.SetHeader("Connection", "close")
	fe := &FileError{Arg: abort.File.Name, Reason: abort.File.Problem, Limit: abort.File.Limit}
	res, _ := json.Marshal(fe.result().object())
	w.SetStatus(http.StatusOK)
	w.SetHeader("Content-Type", "application/json")
	id := json.RawMessage(`null`)
	if abort.ID != nil {
		id = abort.ID
	}
	w.SetBody(jsonrpc.Envelope(id, res))
}

// isModern decides the era of a POST (docs/protocol.md, "Which era a request
// belongs to"): initialize selects the 2025-11-25 family; a request carrying
// _meta protocolVersion, or a non-legacy MCP-Protocol-Version header without
// a session, selects 2026-07-28.
func (s *Server) isModern(r *Request, msg *jsonrpc.Message, kind jsonrpc.Kind) bool {
	if _, ok := msg.Meta[headers.MetaProtocolVersion]; ok && kind == jsonrpc.KindRequest {
		return true
	}
	if msg.Method == "initialize" {
		return false
	}
	if headers.Has(r.Header, headers.SessionID) {
		return false
	}
	hv := strings.TrimSpace(r.Header.Get(headers.ProtocolVersion))
	return hv != "" && !legacyVersions[hv]
}

func (s *Server) serveModern(r *Request, w ResponseWriter, msg *jsonrpc.Message, kind jsonrpc.Kind, acc headers.Accept) {
	switch kind {
	case jsonrpc.KindResponse:
		writeError(w, nil, jsonrpc.BadRequest("clients do not send responses in protocol version "+VersionModern))
		return
	case jsonrpc.KindNotification:
		w.SetStatus(http.StatusAccepted)
		return
	}
	ver, caps, e := headers.CheckModern(r.Header, msg, supportedModern)
	if e != nil {
		writeError(w, msg.ID, e)
		return
	}
	m := s.offered(msg.Method)
	if m == nil || !m.modern {
		writeError(w, msg.ID, jsonrpc.NewError(CodeMethodNotFound, "Method not found", nil).WithStatus(http.StatusNotFound))
		return
	}
	c := s.newCall(r, msg)
	c.modern, c.version, c.caps = true, ver, caps
	if raw, ok := msg.Meta[metaLogLevel]; ok {
		var lv string
		if json.Unmarshal(raw, &lv) == nil {
			if n, ok := logLevels[lv]; ok {
				c.logLevel = n
			}
		}
	}
	s.precheckAndRespond(w, c, m, acc)
}

// authorize asks Options.Authorize, when set, whether the caller may make
// the request; nil means yes.
func (s *Server) authorize(principal string, scopes []string, method, name string) *Error {
	if s.opts.Authorize == nil {
		return nil
	}
	return s.opts.Authorize(principal, scopes, method, name)
}

// newCall is the call a request starts.
func (s *Server) newCall(r *Request, msg *jsonrpc.Message) *Call {
	c := &Call{srv: s, id: msg.ID, method: msg.Method, params: msg.ParamFields, meta: msg.Meta, args: msg.Args,
		principal: r.Principal, scopes: r.Scopes, audience: r.Audience, header: r.Header, logLevel: -1, files: msg.Files,
		note: r.Note, values: r.Context, cred: credentialOf(r)}
	if raw, ok := msg.Meta["progressToken"]; ok && string(raw) != "null" {
		c.progressToken = raw
	}
	return c
}

func (s *Server) precheckAndRespond(w ResponseWriter, c *Call, m *method, acc headers.Accept) {
	if e := s.authorize(c.principal, c.scopes, c.method, c.nameParam()); e != nil {
		writeError(w, c.id, e)
		return
	}
	if m.precheck != nil {
		if e := m.precheck(c); e != nil {
			writeError(w, c.id, e)
			return
		}
	}
	s.respond(w, c, m, acc)
}

func (s *Server) serveLegacy(r *Request, w ResponseWriter, msg *jsonrpc.Message, kind jsonrpc.Kind, acc headers.Accept) {
	if kind == jsonrpc.KindRequest && msg.Method == "initialize" {
		s.initialize(r, w, msg)
		return
	}
	sess, e := s.legacySession(r, msg, kind)
	if e != nil {
		writeError(w, e.id, e.err)
		return
	}
	switch kind {
	case jsonrpc.KindResponse:
		sess.Deliver(msg)
		w.SetStatus(http.StatusAccepted)
		return
	case jsonrpc.KindNotification:
		sess.Notification(msg.Method, msg.ParamFields)
		w.SetStatus(http.StatusAccepted)
		return
	}
	m := s.offered(msg.Method)
	if m == nil || !m.legacy {
		writeError(w, msg.ID, jsonrpc.NewError(CodeMethodNotFound, "Method not found", nil))
		return
	}
	c := s.newCall(r, msg)
	c.version, c.caps, c.sess = sess.Version, sess.Caps, sess
	s.precheckAndRespond(w, c, m, acc)
}

// msgNoSession answers a 2025-11-25 message without a session. A client
// that sent nothing but the message (curl after initialize, say) learns both
// ways on: the session, or the stateless 2026-07-28 era, which needs none.
const msgNoSession = "Bad Request: Mcp-Session-Id header is required (send the one initialize returned; " +
	"or use the stateless 2026-07-28 protocol, no initialize and no session: an MCP-Protocol-Version: 2026-07-28 header, " +
	"an Mcp-Method header and params._meta with io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities)"

type idError struct {
	id  json.RawMessage
	err *Error
}

// legacySession finds the session of a 2025-11-25 message.
func (s *Server) legacySession(r *Request, msg *jsonrpc.Message, kind jsonrpc.Kind) (*session.State, *idError) {
	sid := r.Header.Get(headers.SessionID)
	if sid == "" {
		e := &idError{err: jsonrpc.NewError(CodeTransport, msgNoSession, nil).WithStatus(http.StatusBadRequest)}
		if kind == jsonrpc.KindRequest && msg.Method == "server/discover" {
			// A discovery probe without _meta: answer as the legacy
			// transport does so dual-era clients fall back.
			e.id = msg.ID
		}
		return nil, e
	}
	sess, e := s.sessions.Find(sid, r.Principal)
	if e != nil {
		return nil, &idError{err: e}
	}
	if hv := strings.TrimSpace(r.Header.Get(headers.ProtocolVersion)); hv != "" && !legacyVersions[hv] {
		return nil, &idError{err: jsonrpc.NewError(CodeTransport, "Bad Request: Unsupported protocol version: "+hv, Object{
			"supported": legacyList(),
		}).WithStatus(http.StatusBadRequest)}
	}
	return sess, nil
}

func legacyList() []string { return []string{Version20251125, Version20250618, Version20250326} }

func (s *Server) handleGet(r *Request, w ResponseWriter) {
	sid := r.Header.Get(headers.SessionID)
	hv := strings.TrimSpace(r.Header.Get(headers.ProtocolVersion))
	if sid == "" && (hv == "" || !legacyVersions[hv]) {
		w.SetHeader("Allow", "POST")
		writeError(w, nil, jsonrpc.NewError(CodeTransport, "Method not allowed: no standalone stream without a session", nil).WithStatus(http.StatusMethodNotAllowed))
		return
	}
	if !headers.ParseAccept(r.Header.Get("Accept")).SSE {
		writeError(w, nil, jsonrpc.NewError(CodeTransport, "Not Acceptable: Accept must include text/event-stream", nil).WithStatus(http.StatusNotAcceptable))
		return
	}
	if sid == "" {
		writeError(w, nil, jsonrpc.NewError(CodeTransport, msgNoSession, nil).WithStatus(http.StatusBadRequest))
		return
	}
	sess, e := s.sessions.Find(sid, r.Principal)
	if e != nil {
		writeError(w, nil, e)
		return
	}
	if lei := strings.TrimSpace(r.Header.Get("Last-Event-ID")); lei != "" {
		if rs, after := sess.Streams.Lookup(lei); rs != nil {
			// Resumption (SEP-1699): replay what the client missed on
			// that stream, then carry on with the rest of it.
			setSSEHeaders(w)
			w.SetBodyStream(-1, func(sw StreamWriter) error {
				rs.Serve(rs.Attach(sse.NewWriter(sw, nil), after, false))
				return nil
			})
			return
		}
	}
	if !sess.ClaimGetStream() {
		writeError(w, nil, jsonrpc.NewError(CodeTransport, "Conflict: only one GET stream is allowed per session", nil).WithStatus(http.StatusConflict))
		return
	}
	stream, e := s.budgets.OpenStream(r.Principal)
	if e != nil {
		sess.ReleaseGetStream()
		writeError(w, nil, e)
		return
	}
	setSSEHeaders(w)
	w.SetBodyStream(-1, func(sw StreamWriter) error {
		defer stream.Release()
		defer sess.ReleaseGetStream()
		return s.runGetStream(sess, sse.NewWriter(sw, nil), r.Audience, credentialOf(r))
	})
}

func (s *Server) handleDelete(r *Request, w ResponseWriter) {
	sid := r.Header.Get(headers.SessionID)
	if sid == "" {
		w.SetHeader("Allow", "POST")
		writeError(w, nil, jsonrpc.NewError(CodeTransport, "Method not allowed: no session to delete", nil).WithStatus(http.StatusMethodNotAllowed))
		return
	}
	c, e := s.sessions.Verify(sid, r.Principal)
	if e == nil {
		e = s.sessions.End(sid, c.Expires)
	}
	if e != nil {
		writeError(w, nil, e)
		return
	}
	w.SetStatus(http.StatusOK)
}
