package localfs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/mcpblob/mcpblob/storage"
)

var _ storage.Recorder = (*Store)(nil)

// A record's file holds its version (rand.Text, 26 bytes) and a newline
// before its bytes. The folder lock makes this Store the folder's only
// writer, so a mutex per record name makes the compare-and-swap exact; the
// new file is written and fsynced beside the old one and renamed over it,
// and the folder synced, before PutRecord returns.
const recordVersionLen = 26

// GetRecord reads the record's file.
func (s *Store) GetRecord(ctx context.Context, name string) ([]byte, string, error) {
	if err := recordCheck(ctx, name, nil); err != nil {
		return nil, "", fmt.Errorf("localfs: get record: %w", err)
	}
	data, v, err := s.readRecord(name)
	if err != nil {
		return nil, "", fmt.Errorf("localfs: get record %s: %w", name, err)
	}
	return data, v, nil
}

func (s *Store) readRecord(name string) ([]byte, string, error) {
	f, err := s.openBelow(recordPath(name), os.O_RDONLY)
	if isNotExist(err) {
		return nil, "", storage.ErrNotFound
	} else if err != nil {
		return nil, "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	if fi.Size() > recordVersionLen+1+storage.MaxRecordSize {
		return nil, "", errors.New("record file is damaged: over the size limit")
	}
	b := make([]byte, fi.Size()) // one allocation: records are segments of uploads
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, "", err
	}
	if len(b) <= recordVersionLen || b[recordVersionLen] != '\n' {
		return nil, "", errors.New("record file is damaged")
	}
	return b[recordVersionLen+1:], string(b[:recordVersionLen]), nil
}

// PutRecord replaces the record's file when its version is ifMatch.
func (s *Store) PutRecord(ctx context.Context, name string, data []byte, ifMatch string) (string, error) {
	if err := recordCheck(ctx, name, data); err != nil {
		return "", fmt.Errorf("localfs: put record: %w", err)
	}
	mu := s.keyLock(recordPath(name))
	mu.Lock()
	defer mu.Unlock()
	_, cur, err := s.readRecord(name)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		cur = ""
	case err != nil:
		return "", fmt.Errorf("localfs: put record %s: %w", name, err)
	}
	if cur != ifMatch {
		return "", fmt.Errorf("localfs: put record %s: %w", name, storage.ErrPreconditionFailed)
	}
	v := rand.Text()
	if err := s.replaceRecord(name, v, data); err != nil {
		return "", fmt.Errorf("localfs: put record %s: %w", name, noSpace(err))
	}
	return v, nil
}

// replaceRecord writes and syncs the new file, renames it into place and
// syncs the folder.
func (s *Store) replaceRecord(name, version string, data []byte) error {
	tmp := tmpDir + "/" + rand.Text() + ".record"
	if err := s.writeFile(tmp, []byte(version+"\n"), data); err != nil {
		s.root.Remove(tmp)
		return err
	}
	p := recordPath(name)
	if err := s.place(tmp, p); err != nil {
		s.root.Remove(tmp)
		return err
	}
	return s.syncDir(path.Dir(p))
}

// DeleteRecord removes the record's file.
func (s *Store) DeleteRecord(ctx context.Context, name string) error {
	if err := recordCheck(ctx, name, nil); err != nil {
		return fmt.Errorf("localfs: delete record: %w", err)
	}
	mu := s.keyLock(recordPath(name))
	mu.Lock()
	defer mu.Unlock()
	if err := ignoreNotExist(s.root.Remove(recordPath(name))); err != nil {
		return fmt.Errorf("localfs: delete record %s: %w", name, err)
	}
	return nil
}

func recordCheck(ctx context.Context, name string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return storage.CheckRecord(name, data)
}

func recordPath(name string) string { return storage.RecordsDir + "/" + name }

// ListRecords walks the folder of dir.
func (s *Store) ListRecords(ctx context.Context, dir string, fn func(string) bool) error {
	if err := recordCheck(ctx, dir, nil); err != nil {
		return fmt.Errorf("localfs: list records: %w", err)
	}
	err := fs.WalkDir(s.root.FS(), recordPath(dir), func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		case d.IsDir():
			return nil
		case !fn(strings.TrimPrefix(p, storage.RecordsDir+"/")):
			return fs.SkipAll
		}
		return nil
	})
	if err != nil && !isNotExist(err) {
		return fmt.Errorf("localfs: list records: %w", err)
	}
	return nil
}
