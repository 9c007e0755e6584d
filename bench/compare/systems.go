package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"github.com/mcpblob/mcpblob/bench/compare/measure"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
)

// system is one server under test: how to fetch a blob of a given key from
// it, and which process to watch for memory (pid 0: none of its own).
type system struct {
	name     string
	note     string // what it is, for the report
	mcp      *mcpc.Client
	base     string
	proc     *proc.Proc
	stop     func() // stops the system when set (else proc.Stop)
	rawTCP   *rawTCP
	s3       *s3Peer // set for SeaweedFS: GETs go to presigned URLs
	plain    bool    // serves the raw bytes by GET (nginx, SeaweedFS), no MCP
	slow     bool    // few repetitions at large sizes (the whole message is built in memory)
	baseline int64
}

func (s *system) pid() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.PID()
}

// fetch transfers the blob key (size raw bytes) once and returns the body
// bytes received and the time to the first body byte.
func (s *system) fetch(ctx context.Context, key string, size int64, buf []byte) (int64, time.Duration, error) {
	t0 := time.Now()
	switch {
	case s.rawTCP != nil:
		return s.rawTCP.fetch(size, buf, t0)
	case s.mcp != nil:
		resp, err := s.mcp.Post(ctx, "resources/read", map[string]string{"uri": "blob:///" + key})
		if err != nil {
			return 0, 0, err
		}
		return measure.Drain(resp, t0, buf, 4*((size+2)/3))
	default:
		url := s.base + "/" + key
		if s.s3 != nil {
			url = s.s3.urls[key]
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := s.mcpHTTP().Do(req)
		if err != nil {
			return 0, 0, err
		}
		return measure.Drain(resp, t0, buf, size)
	}
}

var plainHTTP = mcpc.NewHTTPClient()

func (s *system) mcpHTTP() *http.Client { return plainHTTP }

// rawTCP is the loopback ceiling: a server goroutine that writes n bytes
// from a 1 MiB buffer for every 8-byte request, and one kept connection.
type rawTCP struct {
	ln   net.Listener
	conn net.Conn
	r    *bufio.Reader
}

func startRawTCP() (*rawTCP, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				block := make([]byte, 1<<20)
				var hdr [8]byte
				for {
					if _, err := io.ReadFull(c, hdr[:]); err != nil {
						return
					}
					for n := int64(binary.LittleEndian.Uint64(hdr[:])); n > 0; {
						k, err := c.Write(block[:min(n, int64(len(block)))])
						if err != nil {
							return
						}
						n -= int64(k)
					}
				}
			}()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil, err
	}
	return &rawTCP{ln: ln, conn: c, r: bufio.NewReaderSize(c, 1)}, nil
}

func (t *rawTCP) fetch(size int64, buf []byte, t0 time.Time) (int64, time.Duration, error) {
	var hdr [8]byte
	binary.LittleEndian.PutUint64(hdr[:], uint64(size))
	if _, err := t.conn.Write(hdr[:]); err != nil {
		return 0, 0, err
	}
	var got int64
	var ttfb time.Duration
	for got < size {
		n, err := t.conn.Read(buf[:min(int64(len(buf)), size-got)])
		if got == 0 {
			ttfb = time.Since(t0)
		}
		got += int64(n)
		if err != nil {
			return got, ttfb, err
		}
	}
	return got, ttfb, nil
}

func (t *rawTCP) close() { t.conn.Close(); t.ln.Close() }

// startNginx serves dir with sendfile on addr from the folder prefix: one
// process (master_process off), so its memory is the serving process's.
// pin, when given, is a command nginx runs under (taskset -c 0).
func startNginx(prefix, dir, addr string, pin ...string) (*proc.Proc, error) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
			if _, e := os.Stat(p); e == nil {
				bin, err = p, nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("nginx not installed (make tools-apt)")
		}
	}
	os.MkdirAll(filepath.Join(prefix, "logs"), 0o755)
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
user root;
error_log %[1]s/logs/error.log warn;
pid %[1]s/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  sendfile_max_chunk 0;
  keepalive_requests 100000;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  default_type application/octet-stream;
  server {
    listen %[2]s;
    root %[3]s;
    location = /readyz { return 200; }
  }
}
`, prefix, addr, dir)
	confPath := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	cmd := append(append([]string{}, pin...), bin, "-p", prefix, "-c", confPath)
	return proc.Start("nginx", "http://"+addr+"/readyz", cmd[0], cmd[1:])
}

// nginxVersion is `nginx -v` without the prefix.
func nginxVersion() string {
	out, err := exec.Command("nginx", "-v").CombinedOutput()
	if err != nil {
		out, err = exec.Command("/usr/sbin/nginx", "-v").CombinedOutput()
		if err != nil {
			return "not installed"
		}
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "nginx version: ")
}
