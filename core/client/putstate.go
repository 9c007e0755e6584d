package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// StaleStateAge is how long a put's state file is kept after its last
// change: an upload untouched for that long is long gone from a server
// that keeps incomplete uploads a day after their last change (core/tus's
// default), so PutFile removes such files from StateDir as it starts.
const StaleStateAge = 7 * 24 * time.Hour

// staleTempAge is how long a temporary file of an interrupted save may
// stay before PutFile removes it.
const staleTempAge = time.Hour

// fileID tells whether a file is still the one an upload was started
// with: its size, modification time and the sha256 of its first MiB.
type fileID struct {
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtimeUnixNano"`
	Head    string `json:"firstMiBSha256"`
}

func identify(f *os.File, st os.FileInfo) (fileID, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<20)); err != nil {
		return fileID{}, err
	}
	return fileID{Size: st.Size(), ModTime: st.ModTime().UnixNano(), Head: hex.EncodeToString(h.Sum(nil))}, nil
}

// putState is a PutFile's record of its upload, in a file of its own
// (mode 0600) under StateDir, named by the server, the key and the file's
// absolute path. It holds no credential: the upload URL alone is of no use
// without the caller's API key.
type putState struct {
	path   string // "" when nothing is recorded
	Server string `json:"server"`
	Key    string `json:"key"`
	File   fileID `json:"file"`
	Path   string `json:"path"`
	Upload string `json:"upload"`
}

func (c *Client) stateFile(dir, key, path string, id fileID) *putState {
	server := *c.base
	server.User = nil
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	s := &putState{Server: server.String(), Key: key, File: id, Path: abs}
	if dir != "" {
		name := sha256.Sum256([]byte(s.Server + "\n" + key + "\n" + abs))
		s.path = filepath.Join(dir, hex.EncodeToString(name[:16])+".json")
	}
	return s
}

// load reads the state recorded by an earlier run for the same server,
// key and path.
func (s *putState) load() (putState, bool) {
	var old putState
	if s.path == "" {
		return old, false
	}
	raw, err := os.ReadFile(s.path)
	if err != nil || json.Unmarshal(raw, &old) != nil {
		return old, false
	}
	ok := old.Server == s.Server && old.Key == s.Key && old.Path == s.Path && old.Upload != ""
	return old, ok
}

// save writes the state atomically (a temporary file renamed over it).
func (s *putState) save() error {
	if s.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".put-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}

// pruneStates removes the state files in dir last changed before
// now-StaleStateAge (puts never run again), and temporary files a killed
// save left. A state file is changed at each accepted chunk (touch), so
// its age counts from the upload's last progress.
func pruneStates(dir string, now time.Time) {
	if dir == "" {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		maxAge := StaleStateAge
		switch {
		case strings.HasPrefix(name, ".put-"):
			maxAge = staleTempAge
		case !strings.HasSuffix(name, ".json"):
			continue
		}
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && now.Sub(info.ModTime()) > maxAge {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

// touch marks the state file as changed now (an accepted chunk), so
// pruneStates counts its age from the upload's last progress.
func (s *putState) touch() {
	if s.path != "" {
		now := time.Now()
		os.Chtimes(s.path, now, now)
	}
}

func (s *putState) remove() {
	if s.path != "" {
		os.Remove(s.path)
	}
}

type fileSum struct {
	sha256 string
	err    error
}

// hashFile hashes the file's first size bytes on a goroutine of its own,
// while the upload goes on (a resumed upload sends only the tail, but the
// whole file is checked).
func hashFile(ctx context.Context, f *os.File, size int64) <-chan fileSum {
	out := make(chan fileSum, 1)
	go func() {
		h := sha256.New()
		buf := make([]byte, 1<<20)
		for off := int64(0); off < size; {
			if err := ctx.Err(); err != nil {
				out <- fileSum{err: err}
				return
			}
			n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
			h.Write(buf[:n])
			off += int64(n)
			if err != nil && !(err == io.EOF && off == size) {
				out <- fileSum{err: err}
				return
			}
		}
		out <- fileSum{sha256: hex.EncodeToString(h.Sum(nil))}
	}()
	return out
}
