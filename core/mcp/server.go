package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/storage"
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
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Defaults of [Options].
const (
	DefaultMaxBodyBytes    = 4 << 20
	DefaultMaxTextBytes    = 16 << 20
	DefaultMaxFileBytes    = 1 << 30
	DefaultPageSize        = 100
	DefaultSessionTTL      = 24 * time.Hour
	DefaultRequestStateTTL = 10 * time.Minute
	DefaultKeepAlive       = 15 * time.Second
	DefaultClientTimeout   = 5 * time.Minute
)

// Options configure a [Server]. The zero value of every field is the
// documented default; only Backend is required.
type Options struct {
	// Backend stores the blobs served as resources. Required.
	Backend storage.Backend
	// Keyring signs session ids and MRTR requestState. nil: a random
	// per-process keyring (tokens then verify on this process only).
	Keyring *token.Keyring
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Hub carries change events to notification streams; nil: a new Hub.
	Hub *Hub
	// PublicURL is the base of minted URLs (download links, upload
	// endpoints, the upload page), without a trailing slash. core/server
	// sets it; default "http://127.0.0.1:8080".
	PublicURL string
	// Name, Version and Title form serverInfo. Defaults "mcpblob", "dev", "".
	Name, Version, Title string
	// Instructions is the optional initialize/discover instructions text.
	Instructions string
	// ConformanceFixtures adds the conformance suite's fixture tools,
	// resources and prompts (SPEC.md §12). Off in production.
	ConformanceFixtures bool
	// MaxBodyBytes bounds one POSTed JSON-RPC message. Default 4 MiB.
	MaxBodyBytes int64
	// MaxTextBytes: text blobs (text/*, JSON, XML… that are valid UTF-8) up
	// to this size are served as TextResourceContents; larger ones as
	// BlobResourceContents (base64). Default 16 MiB. See [Server] for why.
	MaxTextBytes int64
	// PageSize is the page size of list results. Default 100.
	PageSize int
	// SessionTTL is how long a 2025-11-25 session id stays valid. Default 24h.
	SessionTTL time.Duration
	// RequestStateTTL bounds MRTR requestState lifetime. Default 10 min.
	RequestStateTTL time.Duration
	// CacheTTL is the ttlMs hint on 2026-07-28 list and read results.
	// Default 0: clients revalidate every time (blobs change).
	CacheTTL time.Duration
	// KeepAlive is the interval of SSE comment lines on long-lived
	// streams. Default 15s.
	KeepAlive time.Duration
	// StreamMode selects how resources/stream answers: StreamDirect (raw
	// bytes), StreamRedirect (302 to a presigned URL; backends without
	// storage.Presigner fall back to direct) or StreamURL (a signed
	// downloadUrl). Default: redirect when the backend presigns, else direct.
	StreamMode string
	// LinkTTL is the lifetime of download links and presigned redirects
	// the MCP endpoint mints. Default 15 min.
	LinkTTL time.Duration
	// MaxFileBytes bounds the decoded bytes of the data URIs in one message
	// when no x-mcp-file maxSize says less (DESIGN.md: limits). Default 1 GiB.
	MaxFileBytes int64
	// UploadAccept is the accept list of upload_file's x-mcp-file
	// descriptor. Default nil: any media type.
	UploadAccept []string
	// SpoolDir holds the unlinked temporary files large strings are spooled
	// to. Default os.TempDir().
	SpoolDir string
	// ClientTimeout bounds waiting for a client's answer to a
	// server-to-client request (sampling, elicitation). Default 5 min.
	ClientTimeout time.Duration
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
	opts    Options
	backend storage.Backend
	keyring *token.Keyring
	log     *slog.Logger
	hub     *Hub

	methods   map[string]*method
	tools     []*tool
	toolMap   map[string]*tool
	toolsJSON func() ([]byte, error) // tools/list's "tools" array, encoded once

	uploads uploadWaiters // uploads.go

	fixtures *fixtures
	tasks    *taskStore // nil unless a tool supports tasks

	baseCtx context.Context
	stop    context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*session
	revoked  map[string]time.Time
	created  int
}

// NewServer returns a Server for opts.
func NewServer(opts Options) (*Server, error) {
	if opts.Backend == nil {
		return nil, errors.New("mcp: Options.Backend is required")
	}
	if opts.Keyring == nil {
		opts.Keyring = token.NewRandomKeyring()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Hub == nil {
		opts.Hub = &Hub{}
	}
	if opts.Name == "" {
		opts.Name = "mcpblob"
	}
	if opts.PublicURL == "" {
		opts.PublicURL = "http://127.0.0.1:8080"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxTextBytes <= 0 {
		opts.MaxTextBytes = DefaultMaxTextBytes
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if opts.RequestStateTTL <= 0 {
		opts.RequestStateTTL = DefaultRequestStateTTL
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.ClientTimeout <= 0 {
		opts.ClientTimeout = DefaultClientTimeout
	}
	s := &Server{
		opts:     opts,
		backend:  opts.Backend,
		keyring:  opts.Keyring,
		log:      opts.Logger,
		hub:      opts.Hub,
		sessions: map[string]*session{},
		revoked:  map[string]time.Time{},
	}
	s.baseCtx, s.stop = context.WithCancel(context.Background())
	s.registerMethods()
	s.registerTools()
	if opts.ConformanceFixtures {
		s.registerFixtures()
	}
	s.toolsJSON = sync.OnceValues(s.encodeTools)
	return s, nil
}

// Hub returns the server's event hub.
func (s *Server) Hub() *Hub { return s.hub }

// Close ends every long-lived stream (GET streams, subscriptions/listen)
// gracefully and cancels running requests. Call it before the transport's
// own graceful shutdown so open streams do not hold it up.
func (s *Server) Close() error {
	s.stop()
	return nil
}

// ServeHTTP handles one request to the MCP endpoint.
func (s *Server) ServeHTTP(r *Request, w ResponseWriter) {
	switch r.Method {
	case http.MethodPost:
		s.handlePost(r, w)
	case http.MethodGet:
		s.handleGet(r, w)
	case http.MethodDelete:
		s.handleDelete(r, w)
	default:
		w.SetHeader("Allow", "GET, POST, DELETE")
		writeError(w, nil, newError(CodeTransport, "Method not allowed", nil).withStatus(http.StatusMethodNotAllowed))
	}
}

// writeError sends a standalone JSON error response.
func writeError(w ResponseWriter, id json.RawMessage, e *Error) {
	w.SetStatus(e.httpStatus())
	w.SetHeader("Content-Type", "application/json")
	w.SetBody(encodeError(id, e))
}

// ErrorBody returns the JSON-RPC error body (no id) the transport sends for
// failures it detects itself, such as an oversized body (413) or a bad
// Origin (403).
func ErrorBody(code int, msg string) []byte { return encodeError(nil, newError(code, msg, nil)) }

type acceptance struct{ json, sse bool }

func parseAccept(v string) acceptance {
	if strings.TrimSpace(v) == "" {
		return acceptance{json: true, sse: true}
	}
	var a acceptance
	for part := range strings.SplitSeq(v, ",") {
		mt, _, _ := strings.Cut(part, ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "application/json", "application/*":
			a.json = true
		case "text/event-stream", "text/*":
			a.sse = true
		case "*/*":
			a.json, a.sse = true, true
		}
	}
	return a
}

func (s *Server) handlePost(r *Request, w ResponseWriter) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, nil, newError(CodeTransport, "Unsupported Media Type: Content-Type must be application/json", nil).withStatus(http.StatusUnsupportedMediaType))
		return
	}
	acc := parseAccept(r.Header.Get("Accept"))
	if !acc.json && !acc.sse {
		writeError(w, nil, newError(CodeTransport, "Not Acceptable: Accept must include application/json or text/event-stream", nil).withStatus(http.StatusNotAcceptable))
		return
	}
	// The body is scanned, not read whole: large strings are decoded or
	// spooled as they arrive (reader.go), the rest is held up to
	// MaxBodyBytes.
	body, files, err := s.readMessage(r.Body, func(id []byte) map[string]fileSpec {
		return s.uploads.expected(r.Header.Get(hdrSessionID), id)
	}, func(method, name, state string) map[string]fileSpec {
		return s.stateFiles(r.Principal, method, name, state)
	})
	defer files.release()
	if err != nil {
		var bad *errBadJSON
		var abort *errAbort
		switch {
		case errors.Is(err, errTooLarge):
			writeError(w, nil, newError(CodeInvalidRequest, "Request body too large", nil).withStatus(http.StatusRequestEntityTooLarge))
		case errors.As(err, &bad):
			writeError(w, nil, newError(CodeParseError, "Parse error: invalid JSON", nil).withStatus(http.StatusBadRequest))
		case errors.As(err, &abort):
			// A rejected file too long to read past: answer now and let
			// the transport close the connection.
			s.log.Debug("mcp: request abandoned", "argument", abort.fa.name, "problem", abort.fa.problem)
			w.SetHeader("Connection", "close")
			res, _ := json.Marshal(fileError(abort.fa))
			w.SetStatus(http.StatusOK)
			w.SetHeader("Content-Type", "application/json")
			id := json.RawMessage(`null`)
			if abort.id != nil {
				id = abort.id
			}
			w.SetBody(encodeResult(id, res))
		default:
			writeError(w, nil, newError(CodeParseError, "Parse error: reading body failed", nil).withStatus(http.StatusBadRequest))
		}
		return
	}
	msg, kind, perr := parseMessage(body)
	if msg != nil {
		msg.files = files
	}
	if perr != nil {
		var id json.RawMessage
		if msg != nil {
			id = msg.ID
		}
		writeError(w, id, perr)
		return
	}
	var params map[string]json.RawMessage
	if len(msg.Params) > 0 && json.Unmarshal(msg.Params, &params) != nil {
		writeError(w, msg.ID, newError(CodeInvalidRequest, "Invalid Request: params must be an object", nil).withStatus(http.StatusBadRequest))
		return
	}
	var meta map[string]json.RawMessage
	if raw, ok := params["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		writeError(w, msg.ID, newError(CodeInvalidParams, "Invalid params: _meta must be an object", nil).withStatus(http.StatusBadRequest))
		return
	}
	if s.isModern(r, msg, kind, meta) {
		s.serveModern(r, w, msg, kind, params, meta, acc)
		return
	}
	s.serveLegacy(r, w, msg, kind, params, acc)
}

// isModern decides the era of a POST (SPEC.md §0): initialize selects the
// 2025-11-25 family; a request carrying _meta protocolVersion, or a
// non-legacy MCP-Protocol-Version header without a session, selects
// 2026-07-28.
func (s *Server) isModern(r *Request, msg *message, kind msgKind, meta map[string]json.RawMessage) bool {
	if _, ok := meta[metaProtocolVersion]; ok && kind == kindRequest {
		return true
	}
	if msg.Method == "initialize" {
		return false
	}
	if r.Header.Get(hdrSessionID) != "" {
		return false
	}
	hv := strings.TrimSpace(r.Header.Get(hdrProtocolVersion))
	return hv != "" && !legacyVersions[hv]
}

// methodNameParam names the params member Mcp-Name mirrors.
func methodNameParam(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId"
	}
	return ""
}

func (s *Server) serveModern(r *Request, w ResponseWriter, msg *message, kind msgKind, params, meta map[string]json.RawMessage, acc acceptance) {
	switch kind {
	case kindResponse:
		writeError(w, nil, newError(CodeInvalidRequest, "Invalid Request: clients do not send responses in protocol version "+VersionModern, nil).withStatus(http.StatusBadRequest))
		return
	case kindNotification:
		w.SetStatus(http.StatusAccepted)
		return
	}
	var ver string
	verRaw, hasVer := meta[metaProtocolVersion]
	if hasVer && json.Unmarshal(verRaw, &ver) != nil {
		hasVer = false
	}
	capsRaw, hasCaps := meta[metaClientCapabilities]
	if hasCaps && (len(capsRaw) == 0 || capsRaw[0] != '{') {
		hasCaps = false
	}
	switch {
	case meta == nil:
		writeError(w, msg.ID, newError(CodeInvalidParams, "Invalid params: params._meta is required", nil).withStatus(http.StatusBadRequest))
		return
	case !hasVer || ver == "":
		writeError(w, msg.ID, newError(CodeInvalidParams, "Invalid params: _meta is missing "+metaProtocolVersion, nil).withStatus(http.StatusBadRequest))
		return
	case !hasCaps:
		writeError(w, msg.ID, newError(CodeInvalidParams, "Invalid params: _meta is missing "+metaClientCapabilities, nil).withStatus(http.StatusBadRequest))
		return
	}
	if hv, ok := decodeHeaderValue(r.Header.Get(hdrProtocolVersion)); !ok || hv != ver {
		writeError(w, msg.ID, headerMismatch("MCP-Protocol-Version does not match _meta "+metaProtocolVersion))
		return
	}
	if ver != VersionModern {
		writeError(w, msg.ID, newError(CodeUnsupportedVersion, "Unsupported protocol version", map[string]any{
			"supported": supportedModern, "requested": ver,
		}).withStatus(http.StatusBadRequest))
		return
	}
	if hm, ok := decodeHeaderValue(r.Header.Get(hdrMethod)); !ok || hm != msg.Method {
		if r.Header.Get(hdrMethod) == "" {
			writeError(w, msg.ID, headerMismatch("Mcp-Method header is required"))
		} else {
			writeError(w, msg.ID, headerMismatch("Mcp-Method does not match the request method"))
		}
		return
	}
	if p := methodNameParam(msg.Method); p != "" {
		var name string
		raw, present := params[p]
		if present && json.Unmarshal(raw, &name) != nil {
			present = false
		}
		if e := checkNameHeader(r.Header, name, present); e != nil {
			writeError(w, msg.ID, e)
			return
		}
	}
	m := s.methods[msg.Method]
	if m == nil || !m.modern {
		writeError(w, msg.ID, newError(CodeMethodNotFound, "Method not found", nil).withStatus(http.StatusNotFound))
		return
	}
	c := &call{
		srv:       s,
		modern:    true,
		version:   ver,
		id:        msg.ID,
		method:    msg.Method,
		params:    params,
		caps:      capsRaw,
		principal: r.Principal,
		header:    r.Header,
		logLevel:  -1,
		files:     msg.files,
	}
	if raw, ok := meta[metaLogLevel]; ok {
		var lv string
		if json.Unmarshal(raw, &lv) == nil {
			if n, ok := logLevels[lv]; ok {
				c.logLevel = n
			}
		}
	}
	if raw, ok := meta["progressToken"]; ok && string(raw) != "null" {
		c.progressToken = raw
	}
	if m.precheck != nil {
		if e := m.precheck(c); e != nil {
			writeError(w, msg.ID, e)
			return
		}
	}
	s.respond(w, c, m, acc)
}

func (s *Server) serveLegacy(r *Request, w ResponseWriter, msg *message, kind msgKind, params map[string]json.RawMessage, acc acceptance) {
	if kind == kindRequest && msg.Method == "initialize" {
		s.initialize(r, w, msg, params)
		return
	}
	sid := r.Header.Get(hdrSessionID)
	if sid == "" {
		if kind == kindRequest && msg.Method == "server/discover" {
			// A discovery probe without _meta: answer as the legacy
			// transport does so dual-era clients fall back.
			writeError(w, msg.ID, newError(CodeTransport, "Bad Request: Mcp-Session-Id header is required", nil).withStatus(http.StatusBadRequest))
			return
		}
		writeError(w, nil, newError(CodeTransport, "Bad Request: Mcp-Session-Id header is required", nil).withStatus(http.StatusBadRequest))
		return
	}
	sess := s.lookupSession(sid, r.Principal)
	if sess == nil {
		writeError(w, nil, newError(CodeSessionNotFound, "Session not found", nil).withStatus(http.StatusNotFound))
		return
	}
	if hv := strings.TrimSpace(r.Header.Get(hdrProtocolVersion)); hv != "" && !legacyVersions[hv] {
		writeError(w, nil, newError(CodeTransport, "Bad Request: Unsupported protocol version: "+hv, map[string]any{
			"supported": legacyList(),
		}).withStatus(http.StatusBadRequest))
		return
	}
	switch kind {
	case kindResponse:
		sess.deliver(msg)
		w.SetStatus(http.StatusAccepted)
		return
	case kindNotification:
		sess.notification(msg.Method, params)
		w.SetStatus(http.StatusAccepted)
		return
	}
	m := s.methods[msg.Method]
	if m == nil || !m.legacy {
		writeError(w, msg.ID, newError(CodeMethodNotFound, "Method not found", nil))
		return
	}
	c := &call{
		srv:       s,
		version:   sess.version,
		id:        msg.ID,
		method:    msg.Method,
		params:    params,
		caps:      sess.caps,
		principal: r.Principal,
		header:    r.Header,
		sess:      sess,
		logLevel:  -1,
		files:     msg.files,
	}
	if raw, ok := metaOf(params)["progressToken"]; ok && string(raw) != "null" {
		c.progressToken = raw
	}
	if m.precheck != nil {
		if e := m.precheck(c); e != nil {
			writeError(w, msg.ID, e)
			return
		}
	}
	s.respond(w, c, m, acc)
}

func legacyList() []string { return []string{Version20251125, Version20250618, Version20250326} }

func metaOf(params map[string]json.RawMessage) map[string]json.RawMessage {
	var meta map[string]json.RawMessage
	if raw, ok := params["_meta"]; ok {
		_ = json.Unmarshal(raw, &meta)
	}
	return meta
}

func (s *Server) handleGet(r *Request, w ResponseWriter) {
	sid := r.Header.Get(hdrSessionID)
	hv := strings.TrimSpace(r.Header.Get(hdrProtocolVersion))
	if sid == "" && (hv == "" || !legacyVersions[hv]) {
		w.SetHeader("Allow", "POST")
		writeError(w, nil, newError(CodeTransport, "Method not allowed: no standalone stream without a session", nil).withStatus(http.StatusMethodNotAllowed))
		return
	}
	if !parseAccept(r.Header.Get("Accept")).sse {
		writeError(w, nil, newError(CodeTransport, "Not Acceptable: Accept must include text/event-stream", nil).withStatus(http.StatusNotAcceptable))
		return
	}
	if sid == "" {
		writeError(w, nil, newError(CodeTransport, "Bad Request: Mcp-Session-Id header is required", nil).withStatus(http.StatusBadRequest))
		return
	}
	sess := s.lookupSession(sid, r.Principal)
	if sess == nil {
		writeError(w, nil, newError(CodeSessionNotFound, "Session not found", nil).withStatus(http.StatusNotFound))
		return
	}
	if lei := strings.TrimSpace(r.Header.Get("Last-Event-ID")); lei != "" {
		if rs, after := sess.lookupStream(lei); rs != nil {
			// Resumption (SEP-1699): replay what the client missed on
			// that stream, then carry on with the rest of it.
			setSSEHeaders(w)
			w.SetBodyStream(-1, func(sw StreamWriter) error {
				rs.serve(rs.attach(newSSE(sw), after, false))
				return nil
			})
			return
		}
	}
	if !sess.claimGetStream() {
		writeError(w, nil, newError(CodeTransport, "Conflict: only one GET stream is allowed per session", nil).withStatus(http.StatusConflict))
		return
	}
	setSSEHeaders(w)
	w.SetBodyStream(-1, func(sw StreamWriter) error {
		defer sess.releaseGetStream()
		return sess.runGetStream(newSSE(sw))
	})
}

func (s *Server) handleDelete(r *Request, w ResponseWriter) {
	sid := r.Header.Get(hdrSessionID)
	if sid == "" {
		w.SetHeader("Allow", "POST")
		writeError(w, nil, newError(CodeTransport, "Method not allowed: no session to delete", nil).withStatus(http.StatusMethodNotAllowed))
		return
	}
	sess := s.lookupSession(sid, r.Principal)
	if sess == nil {
		writeError(w, nil, newError(CodeSessionNotFound, "Session not found", nil).withStatus(http.StatusNotFound))
		return
	}
	s.endSession(sess)
	w.SetStatus(http.StatusOK)
}

func setSSEHeaders(w ResponseWriter) {
	w.SetStatus(http.StatusOK)
	w.SetHeader("Content-Type", "text/event-stream")
	w.SetHeader("Cache-Control", "no-cache")
	w.SetHeader("X-Accel-Buffering", "no")
}
