package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/storage"
)

var _ storage.Stager = (*Store)(nil)

// A staged write is a multipart upload of its key (with
// Options.StagedCommit, of a staging key), begun as a Writer begins one:
// its id names the upload's token, the upload and the key. Its parts are
// the upload's parts; CommitStaged completes it as Writer.Commit does.

func stagedID(w *writer) string {
	return w.token + ":" + base64.RawURLEncoding.EncodeToString([]byte(w.uploadID)) + ":" + w.key
}

// stagedWriter is the writer whose upload id names, for its part uploads
// and its completion.
func (s *Store) stagedWriter(ctx context.Context, id string) (*writer, error) {
	f := strings.SplitN(id, ":", 3)
	if len(f) != 3 {
		return nil, fmt.Errorf("%w: staged id %q", storage.ErrStagedGone, id)
	}
	upload, err := base64.RawURLEncoding.DecodeString(f[1])
	if err != nil || f[0] == "" || len(upload) == 0 || checkKey(ctx, f[2]) != nil {
		return nil, fmt.Errorf("%w: staged id %q", storage.ErrStagedGone, id)
	}
	w := &writer{s: s, ctx: ctx, cancel: func() {}, key: f[2], token: f[0], uploadID: string(upload), target: f[2]}
	if s.stagedCommit {
		w.target = stagingPrefix + w.token
	}
	return w, nil
}

// BeginStaged starts the multipart upload, with the object's media type
// and filename.
func (s *Store) BeginStaged(ctx context.Context, key string, opts storage.CreateOptions) (string, error) {
	if err := checkKey(ctx, key); err != nil {
		return "", fmt.Errorf("s3: begin staged %q: %w", key, err)
	}
	opts, err := opts.Normalize()
	if err != nil {
		return "", fmt.Errorf("s3: begin staged %q: %w", key, err)
	}
	if err := s.checkPaths(ctx, key); err != nil {
		return "", fmt.Errorf("s3: begin staged %q: %w", key, err)
	}
	w := &writer{s: s, ctx: ctx, key: key, opts: opts}
	if err := w.startUpload(); err != nil {
		return "", fmt.Errorf("s3: begin staged %q: %w", key, err)
	}
	return stagedID(w), nil
}

// StagedPartMin is S3's smallest part but the last.
func (s *Store) StagedPartMin() int { return minPartSize }

// PutStaged uploads data as the part number (offset is not needed).
func (s *Store) PutStaged(ctx context.Context, id string, number int, _ int64, data []byte) (storage.StagedPart, error) {
	w, err := s.stagedWriter(ctx, id)
	if err == nil {
		err = partNumberCheck(number)
	}
	if err != nil {
		return storage.StagedPart{}, fmt.Errorf("s3: put staged part %d: %w", number, err)
	}
	var check partChecksum
	if s.signParts {
		sum := sha256.Sum256(data)
		check.sha256 = hex.EncodeToString(sum[:])
	} else {
		check.crc32c = crc32.Checksum(data, castagnoli)
	}
	part, err := w.putPart(ctx, number, data, check)
	if err != nil {
		return storage.StagedPart{}, fmt.Errorf("s3: put staged part %d of %q: %w", number, w.key, stagedGone(err))
	}
	return storage.StagedPart{Number: number, Size: int64(len(data)), ETag: part.ETag, Sum: part.ChecksumCRC32C}, nil
}

// partNumberCheck refuses a part number past S3's 10,000 with
// storage.ErrTooLarge: the upload needs more parts than S3 takes.
func partNumberCheck(number int) error {
	if number > maxParts {
		return fmt.Errorf("%w: S3 takes parts 1 to %d", storage.ErrTooLarge, maxParts)
	}
	return nil
}

// stagedGone maps S3's NoSuchUpload to storage.ErrStagedGone.
func stagedGone(err error) error {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && resp.Code == "NoSuchUpload" {
		return fmt.Errorf("%w: %w", storage.ErrStagedGone, err)
	}
	return err
}

// CommitStaged completes the multipart upload as Writer.Commit does: the
// SHA-256 goes to the record the object's metadata names (or, with
// Options.StagedCommit, into the metadata of the server-side copy). The
// media type and filename are those given to BeginStaged.
func (s *Store) CommitStaged(ctx context.Context, id string, parts []storage.StagedPart, opts storage.CreateOptions, sha string) (storage.Info, error) {
	w, err := s.stagedWriter(ctx, id)
	if err != nil {
		return storage.Info{}, fmt.Errorf("s3: commit staged: %w", err)
	}
	if w.opts, err = opts.Normalize(); err != nil {
		return storage.Info{}, fmt.Errorf("s3: commit staged %q: %w", w.key, err)
	}
	w.n = storage.StagedSize(parts)
	etag, err := w.commitStaged(ctx, parts, sha)
	if err != nil {
		return storage.Info{}, fmt.Errorf("s3: commit staged %q: %w", w.key, stagedGone(err))
	}
	return storage.Info{Key: w.key, Size: w.n, MediaType: w.opts.MediaType, Filename: w.opts.Filename,
		SHA256: sha, ETag: quote(etag), ModTime: time.Now(), Expires: w.opts.Expires}, nil
}

func (w *writer) commitStaged(ctx context.Context, parts []storage.StagedPart, sha string) (string, error) {
	s := w.s
	if w.opts.Size > 0 && w.n != w.opts.Size {
		return "", fmt.Errorf("%w: staged %d of the %d bytes declared", storage.ErrSizeMismatch, w.n, w.opts.Size)
	}
	if err := s.checkPaths(ctx, w.key); err != nil {
		return "", err
	}
	var cond minio.PutObjectOptions
	opts := w.objectOptions(map[string]string{metaSHA256: sha})
	if w.opts.IfNotExists {
		opts.SetMatchETagExcept("*")
		cond.SetMatchETagExcept("*")
	}
	for _, p := range parts {
		w.parts = append(w.parts, minio.CompletePart{PartNumber: p.Number, ETag: p.ETag, ChecksumCRC32C: p.Sum})
	}
	switch {
	case len(parts) == 0:
		// S3 completes no upload of no parts: an empty object is one PUT.
		up, err := s.core.PutObject(ctx, s.bucket, w.key, bytes.NewReader(nil), 0, "", hex.EncodeToString(sha256.New().Sum(nil)), opts)
		if err != nil {
			return "", mapError(err)
		}
		w.abortUpload(ctx, w.target, w.uploadID)
		return up.ETag, nil
	case s.stagedCommit:
		if _, _, err := w.complete(ctx, minio.PutObjectOptions{}); err != nil {
			return "", err
		}
		w.staged = true
		defer w.discard()
		return w.copyStaged(ctx, opts, cond)
	}
	return w.completeRecorded(ctx, sha, cond)
}

// AbortStaged aborts the multipart upload (and with Options.StagedCommit
// removes the staged object a failed copy left).
func (s *Store) AbortStaged(ctx context.Context, id string) error {
	w, err := s.stagedWriter(ctx, id)
	if err != nil {
		return nil
	}
	err = s.core.AbortMultipartUpload(ctx, s.bucket, w.target, w.uploadID)
	if err != nil && !errors.Is(stagedGone(err), storage.ErrStagedGone) {
		return fmt.Errorf("s3: abort staged %q: %w", w.key, mapError(err))
	}
	if s.stagedCommit {
		w.staged = true
		w.uploadID = ""
		w.discard()
	}
	return nil
}

// StagedSender gives the Store's streamed part uploads (SendStaged), nil
// with Options.SignPayloads: a signed part needs its SHA-256 before its
// first byte goes out.
func (s *Store) StagedSender() storage.StagedSender {
	if s.signParts {
		return nil
	}
	return sender{s}
}

type sender struct{ *Store }

// SendStaged uploads the size bytes of r as part number while they
// arrive: one UploadPart of known length, its CRC32C computed as the bytes
// pass and sent in a trailer (aws-chunked, STREAMING-UNSIGNED-PAYLOAD-
// TRAILER), which the service verifies as it verifies PutStaged's header.
// A body that ends early cuts the request: no part is stored.
func (s sender) SendStaged(ctx context.Context, id string, number int, _, size int64, r io.Reader) (storage.StagedPart, error) {
	w, err := s.stagedWriter(ctx, id)
	if err == nil {
		err = partNumberCheck(number)
	}
	if err != nil {
		return storage.StagedPart{}, fmt.Errorf("s3: send staged part %d: %w", number, err)
	}
	// The placeholder has the length of the value: minio-go counts the
	// trailer into the request's length before the body is read.
	trailer := http.Header{headerChecksumCRC32C: {crc32cBase64(0)}}
	body := &crcReader{r: r, left: size, trailer: trailer}
	opts := minio.PutObjectPartOptions{DisableContentSha256: true, Trailer: trailer}
	part, err := s.core.PutObjectPart(ctx, s.bucket, w.target, w.uploadID, number, body, size, opts)
	switch {
	case err != nil:
		return storage.StagedPart{}, fmt.Errorf("s3: send staged part %d of %q: %w", number, w.key, stagedGone(mapError(err)))
	case body.left != 0:
		return storage.StagedPart{}, fmt.Errorf("s3: send staged part %d of %q: %d of %d bytes: %w", number, w.key, size-body.left, size, io.ErrUnexpectedEOF)
	}
	return storage.StagedPart{Number: number, Size: size, ETag: part.ETag, Sum: crc32cBase64(body.crc)}, nil
}

// crcReader reads left bytes of r, computing their CRC32C, and sets the
// trailer's CRC32C at the last one; r ending before is io.ErrUnexpectedEOF.
type crcReader struct {
	r       io.Reader
	left    int64
	crc     uint32
	trailer http.Header
}

func (c *crcReader) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	n, err := c.r.Read(p[:min(int64(len(p)), c.left)])
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	c.left -= int64(n)
	switch {
	case c.left == 0:
		c.trailer.Set(headerChecksumCRC32C, crc32cBase64(c.crc))
		return n, io.EOF
	case errors.Is(err, io.EOF):
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}
