package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"net/http"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/storage"
)

// cleanupTimeout bounds the requests that undo a failed or aborted upload;
// they run even when the caller's context is done.
const cleanupTimeout = time.Minute

// The headers of a part's CRC32C and of the algorithm an upload's parts
// are checked with.
const (
	headerChecksumCRC32C    = "X-Amz-Checksum-Crc32c"
	headerChecksumAlgorithm = "X-Amz-Checksum-Algorithm"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc32cBase64 is a CRC32C as S3 headers carry it: its four big-endian
// bytes in base64.
func crc32cBase64(c uint32) string {
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, c))
}

// Create starts a streaming write of key. ctx bounds the whole write:
// cancelling it stops an upload in progress. See the package documentation
// for how the bytes travel.
func (s *Store) Create(ctx context.Context, key string, opts storage.CreateOptions) (storage.Writer, error) {
	if err := checkKey(ctx, key); err != nil {
		return nil, fmt.Errorf("s3: create %q: %w", key, err)
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, fmt.Errorf("s3: create %q: %w", key, err)
	}
	if err := s.checkPaths(ctx, key); err != nil {
		return nil, fmt.Errorf("s3: create %q: %w", key, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	return &writer{s: s, ctx: ctx, cancel: cancel, key: key, opts: opts, h: sha256.New()}, nil
}

// writer fills one part buffer while up to Store.inFlight earlier parts
// upload in the background: at most inFlight+1 buffers of Options.PartSize
// per Writer.
type writer struct {
	s      *Store
	ctx    context.Context // Create's, cancelled by Abort and at the end
	cancel context.CancelFunc
	key    string
	opts   storage.CreateOptions

	mu       sync.Mutex
	buf      []byte    // bytes not yet sent; never more than a part
	spare    []byte    // a part-sized buffer free for the next fill
	h        hash.Hash // the object's SHA-256
	ph       hash.Hash // SHA-256 of the part in buf, to sign it; from the second part on
	crc      uint32    // CRC32C of the part in buf, when parts are not signed
	n        int64
	target   string // the key the multipart upload writes: key, or a staging key
	token    string // the upload's random token: names its SHA-256 record, or its staging key
	uploadID string // multipart upload of target, until completed
	sent     int    // parts handed to uploads
	parts    []minio.CompletePart
	inflight []chan partResult // background part uploads, oldest first
	staged   bool              // target is a staged object to delete
	err      error             // sticky failure of Write
	done     bool              // Commit or Abort called
}

// partResult is the outcome of one background part upload.
type partResult struct {
	part minio.CompletePart
	buf  []byte // the part's buffer, free again
	err  error
}

// Write appends p, uploading each full part once more bytes follow it (the
// last part is kept for Commit, which sends a small object in one PUT).
func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.done:
		return 0, fmt.Errorf("s3: write %q: %w", w.key, storage.ErrClosed)
	case w.err != nil:
		return 0, w.err
	}
	if err := w.ctx.Err(); err != nil {
		return 0, w.fail(err)
	}
	total := w.n + int64(len(p))
	if w.opts.MaxSize > 0 && total > w.opts.MaxSize {
		return 0, w.fail(fmt.Errorf("%w: more than %d bytes", storage.ErrTooLarge, w.opts.MaxSize))
	}
	if w.opts.Size > 0 && total > w.opts.Size {
		return 0, w.fail(fmt.Errorf("%w: more than the %d bytes declared", storage.ErrSizeMismatch, w.opts.Size))
	}
	written := 0
	for len(p) > 0 {
		if len(w.buf) == w.partCap() {
			if err := w.sendPart(); err != nil {
				return written, w.fail(err)
			}
		}
		k := min(len(p), w.partCap()-len(w.buf))
		w.grow(k)
		w.buf = append(w.buf, p[:k]...)
		w.h.Write(p[:k])
		switch {
		case !w.s.signParts:
			w.crc = crc32.Update(w.crc, castagnoli, p[:k])
		case w.ph != nil:
			w.ph.Write(p[:k])
		}
		w.n += int64(k)
		written += k
		p = p[k:]
	}
	return written, nil
}

// growInPlaceMax is the largest buffer grow allocates by doubling; past it
// the bytes move to a part buffer from the Store's free list, so a large
// upload does not leave a trail of half-part buffers for the collector
// (2+4 MiB on the way to an 8 MiB part).
const growInPlaceMax = 1 << 20

// grow makes room for k more bytes in buf, doubling up to growInPlaceMax so
// that small objects cost small buffers, then switching to a part buffer.
func (w *writer) grow(k int) {
	if cap(w.buf)-len(w.buf) >= k {
		return
	}
	c := min(max(2*cap(w.buf), len(w.buf)+k, 64<<10), w.partCap())
	var buf []byte
	if c > growInPlaceMax {
		buf = w.partBuffer()[:len(w.buf)]
	} else {
		buf = make([]byte, len(w.buf), c)
	}
	copy(buf, w.buf)
	w.buf = buf
}

// sendPart hands the full buffer to a background upload (once fewer than
// Store.inFlight are running) and continues with a free buffer. The first
// call starts the multipart upload.
func (w *writer) sendPart() error {
	if len(w.inflight) >= w.s.inFlight {
		if err := w.waitOldest(); err != nil {
			return err
		}
	}
	if w.uploadID == "" {
		if err := w.startUpload(); err != nil {
			return err
		}
	}
	w.sent++
	num, data, check := w.sent, w.buf, w.partCheck()
	if w.spare == nil || cap(w.spare) != w.partCap() {
		w.s.parts.put(w.spare)
		w.spare = w.partBuffer()
	}
	w.buf, w.spare = w.spare[:0], nil
	ch := make(chan partResult, 1)
	w.inflight = append(w.inflight, ch)
	go func() {
		part, err := w.putPart(w.ctx, num, data, check)
		ch <- partResult{part, data, err}
	}()
	return nil
}

// partCap is the size of the part being filled (see Store.partSizeFor).
func (w *writer) partCap() int { return w.s.partSizeFor(w.sent+1, w.opts.Size) }

// partBuffer returns an empty buffer for the part being filled: from the
// Store's free list when it has the Store's part size.
func (w *writer) partBuffer() []byte {
	if c := w.partCap(); int64(c) != w.s.partSize {
		return make([]byte, 0, c)
	}
	return w.s.parts.get()
}

// startUpload starts the multipart upload: of the key itself, whose
// metadata names the upload's SHA-256 record, or with Options.StagedCommit
// of a staging key.
func (w *writer) startUpload() error {
	s := w.s
	w.token = rand.Text()
	w.target = w.key
	opts := w.objectOptions(map[string]string{metaSHA256Record: w.token})
	if s.stagedCommit {
		w.target, opts = stagingPrefix+w.token, minio.PutObjectOptions{UserMetadata: map[string]string{}}
	}
	if !s.signParts {
		// Parts then carry a CRC32C, which S3 wants announced here.
		opts.UserMetadata[headerChecksumAlgorithm] = "CRC32C"
	}
	id, err := s.core.NewMultipartUpload(w.ctx, s.bucket, w.target, opts)
	if err != nil {
		return mapError(err)
	}
	w.uploadID = id
	return nil
}

// objectOptions returns the options that write the object with its media
// type, filename, expiry and meta.
func (w *writer) objectOptions(meta map[string]string) minio.PutObjectOptions {
	if w.opts.Filename != "" {
		meta[metaFilename] = encodeFilename(w.opts.Filename)
	}
	if !w.opts.Expires.IsZero() {
		meta[metaExpires] = formatExpires(w.opts.Expires)
	}
	return minio.PutObjectOptions{ContentType: w.opts.MediaType, UserMetadata: meta, DisableContentSha256: true}
}

// waitOldest collects the oldest background upload; the caller checks
// that one is running.
func (w *writer) waitOldest() error {
	r := <-w.inflight[0]
	w.inflight = w.inflight[1:]
	if w.spare == nil && cap(r.buf) == w.partCap() {
		w.spare = r.buf[:0]
	} else {
		w.s.parts.put(r.buf)
	}
	if r.err != nil {
		return r.err
	}
	w.parts = append(w.parts, r.part)
	return nil
}

// wait collects every background upload and returns the first failure.
func (w *writer) wait() error {
	var first error
	for len(w.inflight) > 0 {
		if err := w.waitOldest(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// partChecksum is what guards a part's bytes in transit: the hex SHA-256
// that signs it, or else its CRC32C.
type partChecksum struct {
	sha256 string
	crc32c uint32
}

// partCheck returns the checksum of the full part in buf and starts the
// next part's. Write computes both as it fills parts, so that uploads start
// without a pass over the bytes; the first part's SHA-256 is the object's
// so far, small objects are hashed once.
func (w *writer) partCheck() partChecksum {
	if !w.s.signParts {
		c := partChecksum{crc32c: w.crc}
		w.crc = 0
		return c
	}
	var sum []byte
	if w.ph == nil {
		sum, w.ph = w.h.Sum(nil), sha256.New()
	} else {
		sum = w.ph.Sum(nil)
		w.ph.Reset()
	}
	return partChecksum{sha256: hex.EncodeToString(sum)}
}

// putPart uploads data as part num of the multipart upload: signed with
// its SHA-256, or unsigned with its CRC32C, which the service verifies.
func (w *writer) putPart(ctx context.Context, num int, data []byte, check partChecksum) (minio.CompletePart, error) {
	s := w.s
	opts := minio.PutObjectPartOptions{DisableContentSha256: true, Sha256Hex: check.sha256}
	var crc string
	if check.sha256 == "" {
		crc = crc32cBase64(check.crc32c)
		opts.CustomHeader = http.Header{headerChecksumCRC32C: {crc}}
	}
	part, err := s.core.PutObjectPart(ctx, s.bucket, w.target, w.uploadID, num, bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		return minio.CompletePart{}, mapError(err)
	}
	return minio.CompletePart{PartNumber: part.PartNumber, ETag: part.ETag, ChecksumCRC32C: crc}, nil
}

// release returns the part-sized buffers to the Store's free list.
func (w *writer) release() {
	w.s.parts.put(w.buf)
	w.s.parts.put(w.spare)
	w.buf, w.spare = nil, nil
}

// fail records a sticky Write error and undoes the upload.
func (w *writer) fail(err error) error {
	w.err = fmt.Errorf("s3: write %q: %w", w.key, err)
	w.discard()
	return w.err
}

// discard stops the upload and removes what it left on the server.
func (w *writer) discard() {
	w.cancel()
	w.wait() // a part must not land after the abort
	w.release()
	if w.uploadID == "" && !w.staged {
		return
	}
	s := w.s
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), cleanupTimeout)
	defer cancel()
	if w.uploadID != "" {
		if err := s.core.AbortMultipartUpload(ctx, s.bucket, w.target, w.uploadID); err != nil {
			s.log.Warn("s3: aborting an upload failed", "bucket", s.bucket, "key", w.target, "err", err)
		}
		w.uploadID = ""
	}
	if w.staged {
		if err := s.client.RemoveObject(ctx, s.bucket, w.target, minio.RemoveObjectOptions{}); err != nil {
			s.log.Warn("s3: removing a staged upload failed", "bucket", s.bucket, "key", w.target, "err", err)
		}
		w.staged = false
	}
}

// Written reports the number of bytes accepted so far.
func (w *writer) Written() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Abort stops the upload (also one blocked in Write on another goroutine)
// and removes what it left on the server.
func (w *writer) Abort(context.Context) error {
	w.cancel() // before the lock: unblocks a Write in progress
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return fmt.Errorf("s3: abort %q: %w", w.key, storage.ErrClosed)
	}
	w.done = true
	w.discard()
	return nil
}

// Commit makes the upload the object under the key.
func (w *writer) Commit(ctx context.Context) (storage.Info, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return storage.Info{}, fmt.Errorf("s3: commit %q: %w", w.key, storage.ErrClosed)
	}
	w.done = true
	if w.err != nil {
		return storage.Info{}, w.err
	}
	defer w.discard()
	// Either context ends the commit.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(w.ctx, cancel)()
	info, err := w.commit(ctx)
	if err != nil {
		return storage.Info{}, fmt.Errorf("s3: commit %q: %w", w.key, err)
	}
	return info, nil
}

func (w *writer) commit(ctx context.Context) (storage.Info, error) {
	if err := w.ctx.Err(); err != nil {
		return storage.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return storage.Info{}, err
	}
	if w.opts.Size > 0 && w.n != w.opts.Size {
		return storage.Info{}, fmt.Errorf("%w: wrote %d of the %d bytes declared", storage.ErrSizeMismatch, w.n, w.opts.Size)
	}
	s := w.s
	if err := s.checkPaths(ctx, w.key); err != nil {
		return storage.Info{}, err
	}
	sha := hex.EncodeToString(w.h.Sum(nil))
	opts := w.objectOptions(map[string]string{metaSHA256: sha})
	// The precondition alone, for the completion of a multipart upload.
	var cond minio.PutObjectOptions
	if w.opts.IfNotExists {
		opts.SetMatchETagExcept("*")
		cond.SetMatchETagExcept("*")
	}

	var etag string
	var err error
	switch {
	case w.uploadID == "":
		// One part: a single PUT signed with the object's SHA-256.
		up, err := s.core.PutObject(ctx, s.bucket, w.key, bytes.NewReader(w.buf), w.n, "", sha, opts)
		if err != nil {
			return storage.Info{}, mapError(err)
		}
		etag = up.ETag
	case s.stagedCommit:
		if err := w.sendLastPart(ctx); err != nil {
			return storage.Info{}, err
		}
		if _, _, err := w.complete(ctx, minio.PutObjectOptions{}); err != nil {
			return storage.Info{}, err
		}
		w.staged = true
		if etag, err = w.copyStaged(ctx, opts, cond); err != nil {
			return storage.Info{}, err
		}
		// discard (deferred by Commit) deletes the staged object.
	default:
		if err := w.sendLastPart(ctx); err != nil {
			return storage.Info{}, err
		}
		if etag, err = w.completeRecorded(ctx, sha, cond); err != nil {
			return storage.Info{}, err
		}
	}
	return storage.Info{
		Key:       w.key,
		Size:      w.n,
		MediaType: w.opts.MediaType,
		Filename:  w.opts.Filename,
		SHA256:    sha,
		ETag:      quote(etag),
		ModTime:   time.Now(),
		Expires:   w.opts.Expires,
	}, nil
}

// sendLastPart uploads the part Write kept, once the part before it is
// uploaded.
func (w *writer) sendLastPart(ctx context.Context) error {
	if err := w.wait(); err != nil {
		return err
	}
	w.s.parts.put(w.spare) // no more parts to fill
	w.spare = nil
	w.sent++
	part, err := w.putPart(ctx, w.sent, w.buf, w.partCheck())
	if err != nil {
		return err
	}
	w.parts = append(w.parts, part)
	return nil
}

// complete completes the multipart upload of target with the options cond.
// refused reports a failure the server answered with a client error (4xx):
// the upload did not complete.
func (w *writer) complete(ctx context.Context, cond minio.PutObjectOptions) (etag string, refused bool, err error) {
	up, err := w.s.core.CompleteMultipartUpload(ctx, w.s.bucket, w.target, w.uploadID, w.parts, cond)
	if err != nil {
		var answer minio.ErrorResponse
		refused := errors.As(err, &answer) && answer.StatusCode >= 400 && answer.StatusCode < 500
		return "", refused, mapError(err)
	}
	w.uploadID = ""
	return up.ETag, false, nil
}

// completeRecorded records the SHA-256, completes the upload of the key
// (its parts all sent), tags the object for listings and removes the
// record of the object it replaced. Once the upload is complete, the tags and the clean-up are
// done even if ctx ends.
func (w *writer) completeRecorded(ctx context.Context, sha string, cond minio.PutObjectOptions) (string, error) {
	s := w.s
	previous, err := s.uploadOf(ctx, w.key)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return "", err
	}
	if err := s.putRecord(ctx, w.key, w.token, sha); err != nil {
		return "", err
	}
	etag, refused, err := w.complete(ctx, cond)
	finishCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err != nil {
		if refused {
			// 412 for IfNotExists, say: no object refers to the record.
			// After other failures the upload may have completed all the
			// same; Open's sweep removes the record if it did not.
			s.removeRecord(finishCtx, w.token)
		}
		return "", err
	}
	s.tagSHA256(finishCtx, w.key, w.token, sha)
	if previous != "" && previous != w.token { // the same token: a staged write completed again
		s.removeRecord(finishCtx, previous)
	}
	return etag, nil
}

// copyStaged copies the staged object, server side, into a multipart upload
// of the key that carries the final metadata, and completes it.
func (w *writer) copyStaged(ctx context.Context, opts, cond minio.PutObjectOptions) (string, error) {
	s := w.s
	id, err := s.core.NewMultipartUpload(ctx, s.bucket, w.key, opts)
	if err != nil {
		return "", mapError(err)
	}
	var parts []minio.CompletePart
	for off := int64(0); off < w.n; off += copyPartSize {
		part, err := s.core.CopyObjectPart(ctx, s.bucket, w.target, s.bucket, w.key, id,
			len(parts)+1, off, min(copyPartSize, w.n-off), nil)
		if err != nil {
			w.abortUpload(ctx, w.key, id)
			return "", mapError(err)
		}
		parts = append(parts, part)
	}
	up, err := s.core.CompleteMultipartUpload(ctx, s.bucket, w.key, id, parts, cond)
	if err != nil {
		w.abortUpload(ctx, w.key, id)
		return "", mapError(err)
	}
	return up.ETag, nil
}

func (w *writer) abortUpload(ctx context.Context, key, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err := w.s.core.AbortMultipartUpload(ctx, w.s.bucket, key, id); err != nil {
		w.s.log.Warn("s3: aborting an upload failed", "bucket", w.s.bucket, "key", key, "err", err)
	}
}
