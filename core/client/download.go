package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
)

// Progress is called as a transfer advances with the bytes done so far and
// the total (-1 when unknown). It must be cheap; it runs on the copying goroutine.
type Progress func(done, total int64)

// Download fetches key into the file at path, resumably. Bytes go to
// path+".part" and the blob's ETag to path+".part.etag"; if both exist from an
// interrupted Download, it asks only for the missing tail (Range + If-Range),
// and starts over when the blob has changed since. The finished file is
// checked against the blob's size and sha256, then renamed to path.
func (c *Client) Download(ctx context.Context, key, path string, progress Progress) (Blob, error) {
	part, etagPath := path+".part", path+".part.etag"
	offset, etag := resumePoint(part, etagPath)

	r, err := c.Open(ctx, key, offset, etag)
	if err != nil {
		return Blob{}, err
	}
	defer r.Close()
	if r.Offset != offset { // the server sent the whole blob: it changed, or no resume was asked
		offset = 0
	}
	f, err := os.OpenFile(part, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return Blob{}, fmt.Errorf("client: download %q: %w", key, err)
	}
	defer f.Close()
	if err := f.Truncate(offset); err != nil {
		return Blob{}, fmt.Errorf("client: download %q: %w", key, err)
	}
	if offset == 0 {
		if err := os.WriteFile(etagPath, []byte(r.Blob.ETag), 0o644); err != nil {
			return Blob{}, fmt.Errorf("client: download %q: %w", key, err)
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, offset)); err != nil {
		return Blob{}, fmt.Errorf("client: download %q: rehash partial file: %w", key, err)
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return Blob{}, fmt.Errorf("client: download %q: %w", key, err)
	}
	n, err := copyWithProgress(io.MultiWriter(f, h), r, offset, r.Blob.Size, progress)
	if err != nil {
		return Blob{}, fmt.Errorf("client: download %q: interrupted after %d bytes (run again to resume): %w", key, offset+n, err)
	}
	if err := finishDownload(f, h, r.Blob, offset+n); err != nil {
		os.Remove(part)
		os.Remove(etagPath)
		return Blob{}, fmt.Errorf("client: download %q: %w", key, err)
	}
	if err := os.Rename(part, path); err != nil {
		return Blob{}, fmt.Errorf("client: download %q: %w", key, err)
	}
	os.Remove(etagPath)
	return r.Blob, nil
}

// resumePoint returns the size of an earlier partial download and the ETag it
// was fetched under, or 0 and "" when there is nothing usable to resume.
func resumePoint(part, etagPath string) (int64, string) {
	st, err := os.Stat(part)
	if err != nil {
		return 0, ""
	}
	etag, err := os.ReadFile(etagPath)
	if err != nil || len(etag) == 0 || st.Size() == 0 {
		return 0, ""
	}
	return st.Size(), strings.TrimSpace(string(etag))
}

func finishDownload(f *os.File, h hash.Hash, b Blob, got int64) error {
	if b.Size >= 0 && got != b.Size {
		return fmt.Errorf("got %d bytes, want %d", got, b.Size)
	}
	if b.SHA256 != "" {
		if sum := hex.EncodeToString(h.Sum(nil)); sum != b.SHA256 {
			return fmt.Errorf("%w: sha256 %s, want %s", ErrChecksum, sum, b.SHA256)
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// copyWithProgress copies r to w in 1 MiB steps, reporting start+done of total.
func copyWithProgress(w io.Writer, r io.Reader, start, total int64, progress Progress) (int64, error) {
	if progress == nil {
		return io.Copy(w, r)
	}
	buf := make([]byte, 1<<20)
	var done int64
	progress(start, total)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return done, werr
			}
			done += int64(n)
			progress(start+done, total)
		}
		if errors.Is(err, io.EOF) {
			return done, nil
		}
		if err != nil {
			return done, err
		}
	}
}

// ProgressReader wraps r and reports the bytes read so far through Progress,
// for uploads: client.Put(ctx, key, client.ProgressReader(f, size, bar), …).
func ProgressReader(r io.Reader, total int64, progress Progress) io.Reader {
	return &progressReader{r: r, total: total, progress: progress}
}

type progressReader struct {
	r        io.Reader
	done     int64
	total    int64
	progress Progress
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	p.progress(p.done, p.total)
	return n, err
}
