package main

import (
	"bufio"
	"fmt"
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

// readAccessLog returns the entries of requests that ended in [from, to].
func readAccessLog(path string, from, to time.Time) ([]entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	from = from.Truncate(time.Millisecond) // nginx logs whole milliseconds
	var out []entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := reLog.FindStringSubmatch(sc.Text())
		if m == nil {
			return nil, fmt.Errorf("nginx access log: unexpected line %q (does deploy/nginx.conf's log_format mcpblob still match?)", sc.Text())
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
		if !e.end.Before(from) && !e.end.After(to) {
			out = append(out, e)
		}
	}
	return out, sc.Err()
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
		return "GET /v1/blobs/… (reads across the drive wipe)"
	case e.uri == "/v1/uploads":
		return "POST /v1/uploads (mint endpoint)"
	case strings.HasPrefix(e.uri, "/u/"):
		return e.method + " /u/… (upload endpoint)"
	case strings.HasPrefix(e.uri, "/d/"):
		return e.method + " /d/… (link, Range)"
	}
	return e.method + " " + e.uri
}
