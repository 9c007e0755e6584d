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
}

// matches reports whether r describes the data file fi.
func (r *record) matches(fi fs.FileInfo) bool {
	return fi.Mode().IsRegular() && fi.Size() == r.Size && fi.ModTime().UnixNano() == r.MTime
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
	}
}

// match returns the record describing fi, or nil.
func (m *sidecar) match(fi fs.FileInfo) *record {
	if m == nil {
		return nil
	}
	for i := range m.Versions {
		if m.Versions[i].matches(fi) {
			return &m.Versions[i]
		}
	}
	return nil
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
