package badupstream

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Server is the hostile upstream. Size is how many bytes the endless and
// huge answers send (their bound, so a run ends).
type Server struct {
	Size int64

	ln   net.Listener
	wg   sync.WaitGroup
	quit chan struct{}

	mu       sync.Mutex
	auths    map[string]bool
	followed int
	conns    map[net.Conn]bool
}

// Start listens on a free loopback port and serves until Close.
func Start(size int64) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Size: size, ln: ln, quit: make(chan struct{}), auths: map[string]bool{}, conns: map[net.Conn]bool{}}
	s.wg.Go(s.accept)
	return s, nil
}

// URL is the MCP endpoint to give --upstream.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/mcp" }

// Close stops listening and closes every connection.
func (s *Server) Close() {
	close(s.quit)
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Authorizations are the distinct Authorization header values received.
func (s *Server) Authorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for a := range s.auths {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// Followed is how many requests followed a redirect this server gave.
func (s *Server) Followed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.followed
}

func (s *Server) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Go(func() {
			defer s.forget(c)
			s.serve(c)
		})
	}
}

func (s *Server) forget(c net.Conn) {
	c.Close()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// call is what the server read of one request.
type call struct {
	id   string // the JSON-RPC id, raw ("null" for none)
	name string // the behaviour asked for
}

// serve answers one request on c (then closes it: one request per
// connection keeps the behaviours apart).
func (s *Server) serve(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	c.SetReadDeadline(time.Time{})
	s.mu.Lock()
	s.auths[req.Header.Get("Authorization")] = true
	if req.URL.Path == "/elsewhere" {
		s.followed++
	}
	s.mu.Unlock()
	cl := parseCall(body)
	if req.URL.Path == "/elsewhere" {
		cl.name = "ok"
	}
	w := bufio.NewWriterSize(c, 32<<10)
	defer w.Flush()
	answer(s, w, c, cl)
}

// parseCall reads the behaviour a request body asks for.
func parseCall(body []byte) call {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &m)
	cl := call{id: string(m.ID), name: "ok"}
	if cl.id == "" {
		cl.id = "null"
	}
	switch m.Method {
	case "initialize", "server/discover":
		cl.name = "discover"
	case "tools/call":
		cl.name = m.Params.Name
	case "resources/read":
		cl.name, _ = strings.CutPrefix(m.Params.URI, "bad://")
	}
	return cl
}
