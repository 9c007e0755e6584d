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

// A record's file holds two slots (recordslots.go), each with a version
// (rand.Text, 26 bytes) and the record's bytes; a file of the older
// format, the version and a newline before the bytes, is read as well and
// replaced by a slot file at its next write. The folder lock makes this
// Store the folder's only writer, so a mutex per record name, held by
// reads too, makes the compare-and-swap exact and keeps a read from
// meeting a write half done. A write is durable before PutRecord returns.
const recordVersionLen = 26

// GetRecord reads the record's file.
func (s *Store) GetRecord(ctx context.Context, name string) ([]byte, string, error) {
	if err := recordCheck(ctx, name, nil); err != nil {
		return nil, "", fmt.Errorf("localfs: get record: %w", err)
	}
	mu := s.keyLock(recordPath(name))
	mu.Lock()
	defer mu.Unlock()
	r, err := s.readRecord(name)
	if err != nil {
		return nil, "", fmt.Errorf("localfs: get record %s: %w", name, err)
	}
	return r.data, r.version, nil
}

// readRecord reads the record's file, of either format.
func (s *Store) readRecord(name string) (recordFile, error) {
	f, err := s.openBelow(recordPath(name), os.O_RDONLY)
	if isNotExist(err) {
		return recordFile{}, storage.ErrNotFound
	} else if err != nil {
		return recordFile{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return recordFile{}, err
	}
	if fi.Size() > 2*slotCap(storage.MaxRecordSize) {
		return recordFile{}, errors.New("record file is damaged: over the size limit")
	}
	first := make([]byte, len(slotMagic))
	if _, err := io.ReadFull(f, first); err == nil && isSlotFile(first) {
		return readSlots(f, fi.Size())
	}
	return readOldRecord(f, fi.Size())
}

// readOldRecord reads a record file of the older format: its version, a
// newline and its bytes.
func readOldRecord(f *os.File, size int64) (recordFile, error) {
	if size > recordVersionLen+1+storage.MaxRecordSize {
		return recordFile{}, errors.New("record file is damaged: over the size limit")
	}
	b := make([]byte, size) // one allocation: records are segments of uploads
	if _, err := f.ReadAt(b, 0); err != nil {
		return recordFile{}, err
	}
	if len(b) <= recordVersionLen || b[recordVersionLen] != '\n' {
		return recordFile{}, errors.New("record file is damaged")
	}
	return recordFile{data: b[recordVersionLen+1:], version: string(b[:recordVersionLen])}, nil
}

// PutRecord replaces the record when its version is ifMatch: in place
// when the new bytes fit its file's slots, else with a new file.
func (s *Store) PutRecord(ctx context.Context, name string, data []byte, ifMatch string) (string, error) {
	if err := recordCheck(ctx, name, data); err != nil {
		return "", fmt.Errorf("localfs: put record: %w", err)
	}
	mu := s.keyLock(recordPath(name))
	mu.Lock()
	defer mu.Unlock()
	cur, err := s.readRecord(name)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		cur = recordFile{}
	case err != nil:
		return "", fmt.Errorf("localfs: put record %s: %w", name, err)
	}
	if cur.version != ifMatch {
		return "", fmt.Errorf("localfs: put record %s: %w", name, storage.ErrPreconditionFailed)
	}
	v := rand.Text()
	if cur.fits(data) {
		err = s.rewriteSlot(name, cur, v, data)
	} else {
		err = s.replaceRecord(name, cur.seq+1, v, data)
	}
	if err != nil {
		return "", fmt.Errorf("localfs: put record %s: %w", name, noSpace(err))
	}
	return v, nil
}

// replaceRecord writes and syncs a new slot file, renames it into place
// and syncs the folder.
func (s *Store) replaceRecord(name string, seq uint64, version string, data []byte) error {
	tmp := tmpDir + "/" + rand.Text() + ".record"
	if err := s.writeSlotFile(tmp, seq, version, data); err != nil {
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
