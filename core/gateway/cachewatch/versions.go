package cachewatch

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"sync"
)

// MaxScan bounds the answer a Watch looks at; a longer one is relayed
// without a look.
const MaxScan = 256 << 10

// Slots is the size of a Table.
const Slots = 4096

// Version kinds: the prefix of a version.
const (
	KindLastModified = "lm:"
	KindMeta         = "meta:"
)

// Of is the version of a content or resource: its lastModified, else the
// hex sha256 of its _meta ("" for none of them).
func Of(lastModified, metaSHA256 string) string {
	switch {
	case lastModified != "":
		return KindLastModified + lastModified
	case metaSHA256 != "":
		return KindMeta + metaSHA256
	}
	return ""
}

// Kind is the kind of version v.
func Kind(v string) string {
	if k, _, ok := strings.Cut(v, ":"); ok {
		return k + ":"
	}
	return ""
}

// Differs reports whether seen shows that an entry stored with version
// stored is another version: both given, of one kind, and unequal.
func Differs(seen, stored string) bool {
	return seen != "" && stored != "" && Kind(seen) == Kind(stored) && seen != stored
}

// Table remembers the last version seen per hash of a principal and URI,
// in fixed slots: a flood of versions keeps memory flat, and a key that
// loses its slot is only forgotten.
type Table struct {
	mu    sync.Mutex
	slots [Slots]struct {
		hash    uint64
		version string
	}
}

// Set records version for hash.
func (t *Table) Set(hash uint64, version string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.slots[hash%Slots]
	s.hash, s.version = hash, version
}

// Get returns the version last recorded for hash.
func (t *Table) Get(hash uint64) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.slots[hash%Slots]
	return s.version, s.hash == hash && s.version != ""
}

// Watch returns body, read through a watch that keeps its bytes while
// they fit MaxScan and, at its end, calls saw with the URI and version of
// each resource of a resources/list answer and each content of a
// resources/read answer in it (a JSON message, or the data lines of SSE
// events when sse).
func Watch(body io.ReadCloser, sse bool, saw func(uri, version string)) io.ReadCloser {
	return &watch{ReadCloser: body, sse: sse, saw: saw}
}

type watch struct {
	io.ReadCloser
	sse   bool
	saw   func(uri, version string)
	kept  []byte
	keptp *[]byte // the pooled buffer kept is in, given back as it came
	over  bool
}

func (w *watch) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if !w.over {
		if len(w.kept)+n > MaxScan {
			w.over = true
			w.release()
		} else {
			if w.kept == nil {
				w.keptp = keptBuffers.Get().(*[]byte)
				w.kept = (*w.keptp)[:0]
			}
			w.kept = append(w.kept, p[:n]...)
		}
	}
	if err == io.EOF && !w.over {
		w.over = true
		w.answer(w.kept)
		w.release()
	}
	return n, err
}

// keptBuffers are the buffers a watch keeps an answer in: most answers
// are small, and one buffer serves answer after answer.
var keptBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// release gives the kept buffer back (one grown past 64 KiB is let go).
func (w *watch) release() {
	if w.kept != nil && cap(w.kept) <= 64<<10 {
		*w.keptp = w.kept[:0]
		keptBuffers.Put(w.keptp)
	}
	w.kept, w.keptp = nil, nil
}

func (w *watch) answer(body []byte) {
	if !w.sse {
		w.message(body)
		return
	}
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		if data, ok := bytes.CutPrefix(bytes.TrimSuffix(line, []byte("\r")), []byte("data:")); ok {
			w.message(data)
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

// message reports the versions of one JSON-RPC answer. One that cannot
// name a version (most: a read's blob without _meta or lastModified) is
// not decoded.
func (w *watch) message(msg []byte) {
	if !mayHoldVersion(msg) {
		return
	}
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
		w.report(r.URI, Of(r.Annotations.LastModified, ""))
	}
	for _, c := range m.Result.Contents {
		sum := ""
		if len(c.Meta) > 0 {
			s := sha256.Sum256(c.Meta)
			sum = hex.EncodeToString(s[:])
		}
		w.report(c.URI, Of(c.Annotations.LastModified, sum))
	}
}

func (w *watch) report(uri, version string) {
	if uri != "" && version != "" {
		w.saw(uri, version)
	}
}

// mayHoldVersion reports whether msg may hold a key lastModified or _meta
// as encoding/json matches keys: in any case (its folding, bytes.EqualFold),
// or spelled with an escape. Without an escape every string is its bytes
// between two quotes, and only those are compared: a blob's base64 is
// passed over in one step.
func mayHoldVersion(msg []byte) bool {
	if bytes.IndexByte(msg, '\\') >= 0 {
		return true
	}
	for {
		open := bytes.IndexByte(msg, '"')
		if open < 0 {
			return false
		}
		msg = msg[open+1:]
		end := bytes.IndexByte(msg, '"')
		if end < 0 {
			return false
		}
		if s := msg[:end]; bytes.EqualFold(s, []byte("lastmodified")) || bytes.EqualFold(s, []byte("_meta")) {
			return true
		}
		msg = msg[end+1:]
	}
}
