package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/core/metrics"
	"github.com/mcpblob/mcpblob/core/server/telemetry"
)

// Options say who the admin listener answers.
type Options struct {
	// Hosts are further Host header names accepted (any port), beside
	// localhost, loopback and other IP address literals: the names
	// Prometheus or an operator reach the listener by.
	Hosts []string
	// Token, when set, is the bearer every request must carry
	// ("Authorization: Bearer <Token>"); empty: no authentication.
	Token string
}

// Handler serves /metrics from m and /debug/pprof/, behind the Host check
// and, when o.Token is set, the bearer check.
func Handler(m *metrics.Set, o Options) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", telemetry.ContentType)
		m.WritePrometheus(w)
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return guard(mux, o)
}

// guard refuses, before h sees it, a request whose Host is not one the
// listener is known by (403) and, with a token, one without it (401).
func guard(h http.Handler, o Options) http.Handler {
	var want [sha256.Size]byte
	if o.Token != "" {
		want = sha256.Sum256([]byte(o.Token))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, o.Hosts) {
			refuse(w, http.StatusForbidden, "forbidden", "Host is not localhost, an IP address or one of --admin-hosts")
			return
		}
		if o.Token != "" && !bearerMatches(r.Header.Get("Authorization"), want) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpblob-admin"`)
			refuse(w, http.StatusUnauthorized, "unauthorized", "the admin listener needs Authorization: Bearer <MCPBLOB_ADMIN_TOKEN>")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether a Host header names this listener in a way
// a DNS-rebinding page cannot: localhost, an IP address literal (a page
// can only send its own name, and one that is an address is not rebound),
// or a name of hosts. The port does not matter.
func hostAllowed(hostport string, hosts []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ".")
	if host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") || net.ParseIP(host) != nil {
		return true
	}
	for _, h := range hosts {
		if strings.EqualFold(strings.TrimSuffix(h, "."), host) {
			return true
		}
	}
	return false
}

// bearerMatches compares the bearer of an Authorization header with the
// token's digest in constant time (digests, so not even the length shows).
func bearerMatches(authz string, want [sha256.Size]byte) bool {
	scheme, cred, ok := strings.Cut(authz, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(cred)))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// refuse answers {"error":{"code","message"}} with status.
func refuse(w http.ResponseWriter, status int, code, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// Server is a running admin listener.
type Server struct {
	srv *http.Server
	ln  net.Listener
}

// Listen starts serving Handler(m, o) on addr. A listener reachable from
// other machines without a token is logged loudly (WARN): anyone who
// reaches it reads the metrics and the profiles, the command line
// included.
func Listen(addr string, m *metrics.Set, o Options, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	s := &Server{ln: ln, srv: &http.Server{Handler: Handler(m, o), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}}
	// One request per connection: net/http frames a request that has both
	// Transfer-Encoding and Content-Length (or a folded or bare-LF header)
	// by Transfer-Encoding and keeps the connection, so bytes after its body
	// would be served as a request of their own. Scrapes and profiles are
	// few; closing after each answer leaves nothing on the connection.
	s.srv.SetKeepAlivesEnabled(false)
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("admin: listener failed", "err", err)
		}
	}()
	logStart(log, ln.Addr(), o)
	return s, nil
}

// logStart logs the listener's start, and a WARN when it answers other
// machines without authentication: bound to a non-loopback address, with
// no token.
func logStart(log *slog.Logger, addr net.Addr, o Options) {
	log.Info("admin: serving /metrics and /debug/pprof/", "addr", addr.String(), "bearer_required", o.Token != "")
	if tcp, ok := addr.(*net.TCPAddr); o.Token == "" && (!ok || !tcp.IP.IsLoopback()) {
		log.Warn("admin: SECURITY: the admin listener binds a non-loopback address without a token: "+
			"anyone who reaches it reads /metrics and /debug/pprof/ (the command line included); "+
			"set MCPBLOB_ADMIN_TOKEN or bind it to 127.0.0.1",
			"addr", addr.String())
	}
}

// Addr is the listener's address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the listener; a profile being taken is cut short.
func (s *Server) Close(ctx context.Context) error {
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}
