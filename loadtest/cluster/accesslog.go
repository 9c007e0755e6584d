package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// entry is one line of the "mcpblob" log_format of deploy/nginx.conf.
type entry struct {
	end         time.Time
	dur         time.Duration
	status      int
	method, uri string
	upstreams   []string // every node nginx tried, in order
	upStatus    string
	done        bool // $request_completion: the whole response went out
}

func (e entry) start() time.Time { return e.end.Add(-e.dur) }

// last is the node that gave the answer ("" when nginx reached none).
func (e entry) last() string {
	if len(e.upstreams) == 0 {
		return ""
	}
	return e.upstreams[len(e.upstreams)-1]
}

// failed: an error status, or a response nginx could not finish (the node
// died while its body was being relayed).
func (e entry) failed() bool { return e.status >= 400 || !e.done }

var reLog = regexp.MustCompile(`^(\d+)\.(\d{3}) (\d+\.\d{3}) (\d{3}) (\S+) (\S+) up=(.*) ups=(.*) sent=(\d+) done=(\S*)$`)

// logMark is a place in nginx's access log: its size at some moment.
// Entries are picked by where they are in the file, not by their
// timestamps, so that a step of the machine's clock between the harness
// and nginx cannot hide them.
type logMark int64

// markLog is the access log's current end (0 when it does not exist yet).
func markLog(path string) logMark {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return logMark(fi.Size())
}

// logToEnd reads every line after a mark.
const logToEnd logMark = -1

// readAccessLog returns the entries of requests logged between the marks
// from and to (to: logToEnd). A last line without its newline (nginx in
// the middle of writing it) is left for the next read.
func readAccessLog(path string, from, to logMark) ([]entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if _, err := f.Seek(int64(from), io.SeekStart); err != nil {
		return nil, err
	}
	if to != logToEnd {
		r = io.LimitReader(f, int64(to-from))
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	var out []entry
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		e, err := parseEntry(strings.TrimSuffix(line, "\n"))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// parseEntry reads one line of the "mcpblob" log_format.
func parseEntry(line string) (entry, error) {
	m := reLog.FindStringSubmatch(line)
	if m == nil {
		return entry{}, fmt.Errorf("nginx access log: unexpected line %q (does deploy/nginx.conf's log_format mcpblob still match?)", line)
	}
	sec, _ := strconv.ParseInt(m[1], 10, 64)
	ms, _ := strconv.ParseInt(m[2], 10, 64)
	rt, _ := strconv.ParseFloat(m[3], 64)
	status, _ := strconv.Atoi(m[4])
	e := entry{
		end: time.UnixMilli(sec*1000 + ms), dur: time.Duration(rt * float64(time.Second)),
		status: status, method: m[5], uri: m[6], upStatus: m[8], done: m[10] == "OK",
	}
	// "a, b" when nginx tried a, then b; " : " separates internal redirects.
	for _, a := range strings.Fields(strings.NewReplacer(",", " ", " : ", " ").Replace(m[7])) {
		if a != "-" {
			e.upstreams = append(e.upstreams, a)
		}
	}
	return e, nil
}

// routeName groups requests for the report's table.
func routeName(e entry) string {
	switch {
	case e.uri == "/mcp":
		return "POST /mcp (resources/read, tools/list)"
	case e.method == http.MethodPut && strings.HasPrefix(e.uri, "/v1/blobs/cluster/slow/"):
		return "PUT /v1/blobs/… (slow upload across the kill)"
	case e.method == http.MethodPut && strings.HasPrefix(e.uri, "/v1/blobs/"):
		return "PUT /v1/blobs/… (upload)"
	case e.method == http.MethodGet && strings.HasPrefix(e.uri, "/v1/blobs/cluster/"):
		return "GET /v1/blobs/… (reads across the volume server's loss)"
	case e.uri == "/v1/uploads":
		return "POST /v1/uploads (mint endpoint)"
	case strings.HasPrefix(e.uri, "/u/"):
		return e.method + " /u/… (upload endpoint)"
	case strings.HasPrefix(e.uri, "/d/"):
		return e.method + " /d/… (link, Range)"
	}
	return e.method + " " + e.uri
}
