package localfs

import (
	"encoding/json"
	"errors"
	"io/fs"
	"syscall"
	"time"

	"github.com/mcpblob/mcpblob/storage"
)

// sidecar is the JSON content of .mcpblob/meta/<key>. Versions holds the
// record of the newest committed (or committing) data file first and at most
// one older record: the one that matched the data file when the newest commit
// began, kept so that a crash between the sidecar rename and the data rename
// leaves the old version fully described.
type sidecar struct {
	Versions []record `json:"versions"`
}

// record describes one data file version. Size and MTime (the data file's
// modification time in Unix nanoseconds, stamped at commit) identify it.
type record struct {
	Size      int64  `json:"size"`
	MTime     int64  `json:"mtime"`
	SHA256    string `json:"sha256"`
	MediaType string `json:"mediaType"`
	Filename  string `json:"filename,omitempty"`
	// Expires is Info.Expires in Unix milliseconds, 0 for none.
	Expires int64 `json:"expires,omitempty"`
}

// version identifies a regular data file: its size and modification time
// in Unix nanoseconds.
type version struct{ size, mtime int64 }

func versionOf(fi fs.FileInfo) version {
	return version{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}

// errNotRegular reports a name that is not a regular file (so no object).
var errNotRegular = errors.New("not a regular file")

// describes reports whether r describes the regular data file version v.
func (r *record) describes(v version) bool {
	return v.size == r.Size && v.mtime == r.MTime
}

// sameVersion reports whether r and o identify the same data file version.
func (r *record) sameVersion(o *record) bool {
	return r.Size == o.Size && r.MTime == o.MTime
}

func (r *record) info(key string) storage.Info {
	return storage.Info{
		Key:       key,
		Size:      r.Size,
		MediaType: r.MediaType,
		Filename:  r.Filename,
		SHA256:    r.SHA256,
		ETag:      `"` + r.SHA256 + `"`,
		ModTime:   time.Unix(0, r.MTime),
		Expires:   expiresTime(r.Expires),
	}
}

// expiresMillis and expiresTime convert Info.Expires to and from the
// record's Unix milliseconds (0: none).
func expiresMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func expiresTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// match returns the record describing the data file fi, or nil.
func (m *sidecar) match(fi fs.FileInfo) *record {
	if !fi.Mode().IsRegular() {
		return nil
	}
	return m.describing(versionOf(fi))
}

// describing returns the record describing the regular data file version
// v, or nil.
func (m *sidecar) describing(v version) *record {
	if m == nil {
		return nil
	}
	for i := range m.Versions {
		if m.Versions[i].describes(v) {
			return &m.Versions[i]
		}
	}
	return nil
}

// recordFor returns key's sidecar record describing the data file version
// v, or nil: from the cache when a cached record matches, else from the
// sidecar file (then cached).
func (s *Store) recordFor(key string, v version) (*record, error) {
	if r := s.meta.get(key).describing(v); r != nil {
		return r, nil
	}
	gen := s.meta.generation(key)
	m, err := s.readSidecar(key)
	if err != nil {
		return nil, err
	}
	s.meta.put(key, gen, m)
	return m.describing(v), nil
}

// readSidecar returns the sidecar of key, or nil when there is none. A
// sidecar that does not parse is treated as missing: it describes nothing.
func (s *Store) readSidecar(key string) (*sidecar, error) {
	b, err := s.root.ReadFile(metaPath(key))
	if err != nil {
		if isNotExist(err) || errors.Is(err, syscall.EISDIR) {
			return nil, nil
		}
		return nil, err
	}
	var m sidecar
	if json.Unmarshal(b, &m) != nil {
		return nil, nil
	}
	return &m, nil
}

func marshalSidecar(m *sidecar) ([]byte, error) { return json.Marshal(m) }
