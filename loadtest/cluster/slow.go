package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Slow uploads straddle the kill for sure: each streams slowSize bytes over
// slowTime, started slowLead before the kill. Three go through nginx (least
// connections spreads them over the nodes) and one straight to the node
// that is about to be killed.
const (
	slowSize  = 4 << 20
	slowChunk = 256 << 10
	slowTime  = 1600 * time.Millisecond
	slowLead  = 800 * time.Millisecond
)

// slowUpload is one such upload and how it ended.
type slowUpload struct {
	key, via string // via: "nginx" or a node name
	sent
	status int
	err    error
}

func (s *slowUpload) acked() bool { return s.err == nil && s.status == http.StatusCreated }

// startSlowUploads starts them and returns a function that waits for all.
func startSlowUploads(ctx context.Context, cl *cluster, victim *node) func() []*slowUpload {
	var ups []*slowUpload
	for i := range 3 {
		ups = append(ups, &slowUpload{key: fmt.Sprintf("cluster/slow/nginx-%d", i), via: "nginx"})
	}
	ups = append(ups, &slowUpload{key: "cluster/slow/direct-" + victim.name, via: victim.name})
	var wg sync.WaitGroup
	for _, u := range ups {
		data := content(slowSize)
		copy(data, u.key) // unique bytes per key
		u.sent = sent{size: slowSize, sha: sum(data)}
		base := cl.lb
		if u.via != "nginx" {
			base = victim.url()
		}
		wg.Go(func() { u.status, _, u.err = cl.putTrickled(ctx, base, u.key, data, u.sha, slowChunk, slowTime) })
	}
	return func() []*slowUpload { wg.Wait(); return ups }
}

// putTrickled PUTs data under key through base at an even pace (see
// trickle: chunk bytes at a time, all of it over `over`) with its sha256
// and returns the answer's status and body; err is a request that got no
// answer.
func (cl *cluster) putTrickled(ctx context.Context, base, key string, data []byte, sha string, chunk int, over time.Duration) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+"/v1/blobs/"+key, &trickle{data: data, chunk: chunk, over: over})
	if err != nil {
		return 0, nil, err
	}
	req.ContentLength = int64(len(data))
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("x-mcp-sha256", sha)
	resp, err := cl.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, nil
}

// trickle hands out data at an even pace: at most chunk bytes per Read,
// each returned no earlier than its share of over (the time for the whole
// of data) since the first Read, whatever the size of the reader's
// buffer.
type trickle struct {
	data  []byte
	off   int
	chunk int
	over  time.Duration
	start time.Time
}

func (t *trickle) Read(p []byte) (int, error) {
	if t.off >= len(t.data) {
		return 0, io.EOF
	}
	if t.start.IsZero() {
		t.start = time.Now()
	}
	n := copy(p[:min(len(p), t.chunk)], t.data[t.off:])
	t.off += n
	time.Sleep(time.Until(t.start.Add(time.Duration(float64(t.over) * float64(t.off) / float64(len(t.data))))))
	return n, nil
}
