package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
)

// How fresh a stream cache entry is.
//
// Its lifetime is the TTL (--stream-cache-ttl), shortened to the ttlMs of
// the 2026-07-28 resources/read answer that stored it; ttlMs 0 stores
// nothing. A 2025-11-25 answer's ttlMs is not read: the member is not in
// that version, and go-sdk v1.8.0 sends "ttlMs":0 in every answer, of
// either era. cacheScope needs nothing more: every entry already belongs to
// one principal, which is what "private" asks, and "public" is kept per
// principal too.
//
// Its version is the first content's annotations.lastModified ("lm:…")
// or, without one, the sha256 of its _meta as sent ("meta:…"). The relay
// looks at the resources/list and resources/read answers it passes
// (whole ones up to maxVersionScan bytes) and remembers, per principal and
// URI, the last version each showed (lastModified from a list's resources;
// both kinds from a read's contents); a lookup that finds an entry stored
// with another version of the same kind drops it. The memory is this
// node's only, in a fixed table: another node, or a version pushed out of
// the table, is not known, and then the TTL and
// notifications/resources/updated are what bound staleness.

// maxVersionScan bounds the relayed resources/list or resources/read
// answer the cache looks at for versions; a longer one is relayed without
// a look.
const maxVersionScan = 256 << 10

// versionSlots is the size of the table of versions seen.
const versionSlots = 4096

const (
	methodList  = "resources/list"
	versionLM   = "lm:"
	versionMeta = "meta:"
)

// facts are the facts of an entry whose download began at began.
func (sc *streamCache) facts(began time.Time, fr Freshness) CacheFacts {
	ttl := sc.opts.TTL
	if fr.TTLGiven {
		ttl = min(ttl, time.Duration(fr.TTLMs)*time.Millisecond)
	}
	return CacheFacts{Expires: began.Add(ttl), Version: versionOf(fr.LastModified, fr.MetaSHA256)}
}

// versionOf is the version of a content or resource ("": none).
func versionOf(lastModified, metaSHA256 string) string {
	switch {
	case lastModified != "":
		return versionLM + lastModified
	case metaSHA256 != "":
		return versionMeta + metaSHA256
	}
	return ""
}

// kind is the kind of version v ("lm:", "meta:").
func kind(v string) string {
	if k, _, ok := strings.Cut(v, ":"); ok {
		return k + ":"
	}
	return ""
}

// stale reports an entry past its lifetime, or stored with another
// version than the last one seen for k.
func (sc *streamCache) stale(k CacheKey, info CacheInfo) bool {
	expires := info.Stored.Add(sc.opts.TTL)
	if !info.Expires.IsZero() && info.Expires.Before(expires) {
		expires = info.Expires
	}
	if time.Now().After(expires) {
		return true
	}
	seen, ok := sc.versions.get(sc.hash(k.Principal, k.URI))
	return ok && info.Version != "" && kind(seen) == kind(info.Version) && seen != info.Version
}

// versionTable remembers the last version seen per hash of a principal
// and URI, in fixed slots: a flood of versions keeps memory flat, and a
// key that loses its slot is only forgotten.
type versionTable struct {
	mu    sync.Mutex
	slots [versionSlots]struct {
		hash    uint64
		version string
	}
}

func (t *versionTable) set(hash uint64, version string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.slots[hash%versionSlots]
	s.hash, s.version = hash, version
}

func (t *versionTable) get(hash uint64) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.slots[hash%versionSlots]
	return s.version, s.hash == hash && s.version != ""
}

// watchVersions returns the body of an upstream answer to method, for the
// stream cache: the answer to a resources/list or resources/read is kept,
// up to maxVersionScan bytes, as it is read, and at its end the versions
// it shows are remembered for principal. The bytes pass unchanged.
func (g *Gateway) watchVersions(principal, method string, resp *http.Response) io.ReadCloser {
	if g.cache == nil || (method != methodList && method != methodRead) || resp.StatusCode != http.StatusOK {
		return resp.Body
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" && mt != "text/event-stream" {
		return resp.Body
	}
	return &versionWatch{ReadCloser: resp.Body, g: g, principal: principal, sse: mt == "text/event-stream"}
}

// versionWatch keeps an answer's bytes while they fit maxVersionScan.
type versionWatch struct {
	io.ReadCloser
	g         *Gateway
	principal string
	sse       bool
	kept      []byte
	over      bool
}

func (v *versionWatch) Read(p []byte) (int, error) {
	n, err := v.ReadCloser.Read(p)
	if !v.over {
		if len(v.kept)+n > maxVersionScan {
			v.over, v.kept = true, nil
		} else {
			v.kept = append(v.kept, p[:n]...)
		}
	}
	if err == io.EOF && !v.over {
		v.over = true
		v.g.sawVersions(v.principal, v.kept, v.sse)
		v.kept = nil
	}
	return n, err
}

// sawVersions remembers the versions a whole answer (JSON, or the data
// lines of SSE events) shows.
func (g *Gateway) sawVersions(principal string, body []byte, sse bool) {
	if !sse {
		g.sawMessage(principal, body)
		return
	}
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		if data, ok := bytes.CutPrefix(bytes.TrimSuffix(line, []byte("\r")), []byte("data:")); ok {
			g.sawMessage(principal, data)
		}
	}
}

// versioned is a resource of resources/list or a content of
// resources/read.
type versioned struct {
	URI         string          `json:"uri"`
	Meta        json.RawMessage `json:"_meta"`
	Annotations struct {
		LastModified string `json:"lastModified"`
	} `json:"annotations"`
}

// sawMessage remembers the versions of one JSON-RPC answer.
func (g *Gateway) sawMessage(principal string, msg []byte) {
	var m struct {
		Result struct {
			Resources []versioned `json:"resources"`
			Contents  []versioned `json:"contents"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return
	}
	for _, r := range m.Result.Resources { // a list's _meta is not a content's
		g.sawVersion(principal, r.URI, versionOf(r.Annotations.LastModified, ""))
	}
	for _, c := range m.Result.Contents {
		sum := ""
		if len(c.Meta) > 0 {
			s := sha256.Sum256(c.Meta)
			sum = hex.EncodeToString(s[:])
		}
		g.sawVersion(principal, c.URI, versionOf(c.Annotations.LastModified, sum))
	}
}

func (g *Gateway) sawVersion(principal, uri, version string) {
	if uri != "" && version != "" {
		g.cache.versions.set(g.cache.hash(principal, uri), version)
	}
}
