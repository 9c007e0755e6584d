package tusjs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// event is one line upload.mjs writes on stdout.
type event struct {
	Event   string  `json:"event"`
	Offset  int64   `json:"offset"`
	Bytes   int64   `json:"bytes"`
	Attempt int     `json:"attempt"`
	Status  int     `json:"status"`
	Concat  string  `json:"concat"`
	Error   string  `json:"error"`
	URL     string  `json:"url"`
	Handed  *int64  `json:"handed"`
	Seconds float64 `json:"seconds"`
}

// run is how one upload.mjs run went.
type run struct {
	done                    *event
	retries                 []event
	patches                 int
	partial, final, created int // POSTs with Upload-Concat partial, final; POSTs answered 201
	err                     error
	stderr                  string
}

// runUploadJS runs upload.mjs and hands each event to onEvent (nil: none)
// while it runs.
func runUploadJS(ctx context.Context, node, script, endpoint, file, key, apiKey string, parallel int, onEvent func(event)) run {
	var r run
	cmd := exec.CommandContext(ctx, node, script, endpoint, file, key, strconv.Itoa(Chunk), strconv.Itoa(parallel))
	cmd.Env = append(os.Environ(), "MCPBLOB_API_KEY="+apiKey)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		r.err = err
		return r
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			r.err = fmt.Errorf("upload.mjs wrote %q: %w", clip(sc.Text()), err)
			continue
		}
		r.note(ev)
		if onEvent != nil {
			onEvent(ev)
		}
	}
	if err := cmd.Wait(); err != nil && r.err == nil {
		r.err = fmt.Errorf("upload.mjs: %w", err)
	}
	r.stderr = stderr.String()
	return r
}

func (r *run) note(ev event) {
	switch ev.Event {
	case "patch":
		r.patches++
	case "create":
		switch {
		case ev.Concat == "partial":
			r.partial++
		case strings.HasPrefix(ev.Concat, "final;"):
			r.final++
		}
		if ev.Status == http.StatusCreated {
			r.created++
		}
	case "retry":
		r.retries = append(r.retries, ev)
	case "done":
		r.done = &ev
	case "error":
		r.err = errors.New("tus-js-client: " + ev.Error)
	}
}

func (r *run) describe() string {
	if r.err != nil {
		return fmt.Sprintf("error: %v %s", r.err, clip(strings.TrimSpace(r.stderr)))
	}
	if r.done == nil {
		return "no result from upload.mjs"
	}
	return fmt.Sprintf("tus-js-client %s done in %.1f s at %s", Version, r.done.Seconds, r.done.URL)
}

func (r *run) handedText() string {
	if r.done == nil || r.done.Handed == nil {
		return "bytes read into PATCH bodies unknown"
	}
	return fmt.Sprintf("%d bytes read into PATCH bodies", *r.done.Handed)
}

func (r *run) retryText() string {
	var s []string
	for _, ev := range r.retries {
		s = append(s, fmt.Sprintf("#%d http %d %s", ev.Attempt, ev.Status, clip(ev.Error)))
	}
	return strings.Join(s, "; ")
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}
