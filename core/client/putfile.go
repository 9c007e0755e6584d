package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// DefaultChunkSize is PutFile's PATCH size: the most a cut connection or a
// killed process costs, and the memory a PutFile holds.
const DefaultChunkSize = 8 << 20

// statusChecksumMismatch is tus's answer to a PATCH whose bytes do not
// match its Upload-Checksum.
const statusChecksumMismatch = 460

// PutFileOptions are the optional parameters of PutFile.
type PutFileOptions struct {
	ContentType string // default application/octet-stream
	Filename    string // kept as the blob's original filename
	// ChunkSize is the size of each PATCH (default DefaultChunkSize). A
	// regular file smaller than one chunk, or a file of unknown size (a
	// pipe), goes as one PUT /v1/blobs instead.
	ChunkSize int64
	// StateDir is where the upload's URL is recorded so that a later
	// PutFile of the same file to the same server and key (another process
	// after a kill) continues it; "" records nothing.
	StateDir string
	// Whole sends the file as one PUT /v1/blobs whatever its size: faster
	// where nothing breaks (no chunk is made durable on its own), but an
	// interruption starts again from byte 0.
	Whole bool
	// TTL is the blob's lifetime (ttlSeconds, whole seconds); 0: none.
	TTL time.Duration
	// Retries bounds the attempts after a connection error, a 429 or a
	// 5xx without progress in between (default 5); RetryWait is the first
	// pause, doubled at each attempt up to 15 s (default 500 ms). A
	// Retry-After answer sets the pause.
	Retries   int
	RetryWait time.Duration
	Progress  Progress
	// Notice, when set, is told when an upload resumes or starts over.
	Notice func(msg string)
}

func (o PutFileOptions) withDefaults() PutFileOptions {
	if o.ChunkSize <= 0 {
		o.ChunkSize = DefaultChunkSize
	}
	if o.Retries <= 0 {
		o.Retries = 5
	}
	if o.RetryWait <= 0 {
		o.RetryWait = 500 * time.Millisecond
	}
	if o.Notice == nil {
		o.Notice = func(string) {}
	}
	return o
}

// PutFile stores the file at path under key, resumably: with tus 1.0.0 at
// /v1/tus/ (docs/uploads.md), in PATCHes of ChunkSize bytes, each with its
// sha256 in Upload-Checksum. A connection error, a 429 or a 5xx is retried
// from the offset the server reports (HEAD), a bounded number of times; a
// 4xx is an *Error with the server's message. With StateDir set, a PutFile
// run again after a failure or a kill continues from the server's offset,
// unless the file changed (its size, mtime or first MiB): then it starts
// over. At the end the blob's sha256 (HEAD /v1/blobs) must be the file's,
// hashed while it uploads; a mismatch is an error and the next run starts
// over. A server without /v1/tus/ gets one PUT.
func (c *Client) PutFile(ctx context.Context, key, path string, opts PutFileOptions) (Blob, error) {
	opts = opts.withDefaults()
	f, err := os.Open(path)
	if err != nil {
		return Blob{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Blob{}, err
	}
	if !opts.Whole && st.Mode().IsRegular() && st.Size() >= opts.ChunkSize {
		b, err := c.putResumable(ctx, key, f, st, opts)
		if !errors.Is(err, errNoTus) {
			return b, err
		}
	}
	size := int64(-1)
	if st.Mode().IsRegular() {
		size = st.Size()
	}
	var body io.Reader = f
	if opts.Progress != nil {
		body = ProgressReader(f, size, opts.Progress)
	}
	return c.Put(ctx, key, body, PutOptions{ContentType: opts.ContentType, Filename: opts.Filename, Size: size, TTL: opts.TTL})
}

func (c *Client) putResumable(ctx context.Context, key string, f *os.File, st os.FileInfo, opts PutFileOptions) (Blob, error) {
	id, err := identify(f, st)
	if err != nil {
		return Blob{}, fmt.Errorf("client: put %q: %w", key, err)
	}
	pruneStates(opts.StateDir, time.Now())
	state := c.stateFile(opts.StateDir, key, f.Name(), id)
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	hashed := hashFile(hctx, f, st.Size())
	upload, offset, err := c.resumeOrCreate(ctx, key, state, opts)
	if err != nil {
		return Blob{}, err
	}
	if err := c.sendChunks(ctx, upload, f, offset, st.Size(), opts, state.touch); err != nil {
		if refusedUpload(err) {
			state.remove() // a run again starts over
		}
		return Blob{}, fmt.Errorf("client: put %q: %w", key, err)
	}
	sum := <-hashed
	if sum.err != nil {
		return Blob{}, fmt.Errorf("client: put %q: hash the file: %w", key, sum.err)
	}
	b, err := c.Stat(ctx, key)
	if err != nil {
		return Blob{}, fmt.Errorf("client: put %q: the upload finished; reading the blob's sha256: %w", key, err)
	}
	state.remove()
	if b.SHA256 != sum.sha256 || b.Size != st.Size() {
		return Blob{}, fmt.Errorf("client: put %q: %w: the server stored %d bytes with sha256 %s, the file has %d bytes with sha256 %s (it changed during the upload, or the blob was replaced meanwhile); run put again to upload it anew",
			key, ErrChecksum, b.Size, b.SHA256, st.Size(), sum.sha256)
	}
	return b, nil
}

// resumeOrCreate continues the upload the state file names, when the file
// is still the one it was started with and the server still has it, and
// creates one otherwise. It returns the upload's URL and offset.
func (c *Client) resumeOrCreate(ctx context.Context, key string, state *putState, opts PutFileOptions) (string, int64, error) {
	if old, ok := state.load(); ok {
		if old.File != state.File {
			opts.Notice("the file changed since the interrupted put: starting over")
			c.tusTerminate(ctx, old.Upload)
		} else {
			offset, length, err := c.tusOffsetRetried(ctx, old.Upload, opts)
			var e *Error
			switch {
			case err == nil && length == state.File.Size:
				opts.Notice(fmt.Sprintf("resuming at byte %d of %d", offset, length))
				return old.Upload, offset, nil
			case err == nil || errors.As(err, &e) && (e.Status == http.StatusNotFound || e.Status == http.StatusGone):
				opts.Notice("the interrupted upload is gone from the server (expired?): starting over")
			default:
				return "", 0, fmt.Errorf("client: put %q: resume: %w", key, err)
			}
		}
	}
	upload, err := c.tusCreate(ctx, key, state.File.Size, opts)
	if err != nil {
		return "", 0, fmt.Errorf("client: put %q: %w", key, err)
	}
	state.Upload = upload
	if err := state.save(); err != nil {
		return "", 0, fmt.Errorf("client: put %q: record the upload for a resume: %w", key, err)
	}
	return upload, 0, nil
}

func (c *Client) tusOffsetRetried(ctx context.Context, upload string, opts PutFileOptions) (offset, length int64, err error) {
	for attempt := 1; ; attempt++ {
		offset, length, err = c.tusOffset(ctx, upload)
		if err == nil || !retryable(err) || attempt > opts.Retries {
			return offset, length, err
		}
		if werr := pause(ctx, opts, attempt, err); werr != nil {
			return 0, 0, werr
		}
	}
}

// sendChunks PATCHes the file from offset to its end, one chunk at a
// time; after a failure worth retrying it asks the server where to go on.
// accepted is called after each chunk the server took.
func (c *Client) sendChunks(ctx context.Context, upload string, f *os.File, offset, size int64, opts PutFileOptions, accepted func()) error {
	buf := make([]byte, min(opts.ChunkSize, size))
	fails, resync := 0, false
	for offset < size || resync {
		var err error
		if resync {
			var at int64
			if at, _, err = c.tusOffset(ctx, upload); err == nil {
				offset, resync = at, false
				continue
			}
		} else {
			n := min(int64(len(buf)), size-offset)
			if _, rerr := f.ReadAt(buf[:n], offset); rerr != nil {
				return fmt.Errorf("read the file at %d: %w", offset, rerr)
			}
			var next int64
			if next, err = c.tusPatch(ctx, upload, offset, buf[:n], opts.Progress, size); err == nil {
				offset, fails = next, 0
				accepted()
				continue
			}
		}
		if !retryable(err) {
			return err
		}
		if fails++; fails > opts.Retries {
			return fmt.Errorf("gave up after %d attempts, at byte %d of %d (run put again to resume): %w", fails, offset, size, err)
		}
		if err := pause(ctx, opts, fails, err); err != nil {
			return err
		}
		resync = true
	}
	return nil
}

// refusedUpload: the server refused the upload or no longer has it (a
// 4xx other than 401, 403 and 429, which say nothing of the upload).
func refusedUpload(err error) bool {
	var e *Error
	if !errors.As(err, &e) || e.Status/100 != 4 {
		return false
	}
	return e.Status != http.StatusUnauthorized && e.Status != http.StatusForbidden && e.Status != http.StatusTooManyRequests
}

// retryable: a connection error, a 429 or a 5xx other than 501 and 507, a
// 409 (another request appended first: the server's offset tells) or a 460
// (the bytes changed on the way).
func retryable(err error) bool {
	var e *Error
	var pe *protocolError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.As(err, &pe):
		return false
	case errors.As(err, &e):
		switch e.Status {
		case http.StatusConflict, statusChecksumMismatch, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	return true
}

// pause waits before attempt n+1: the answer's Retry-After, else
// RetryWait doubled n-1 times, at most 15 s.
func pause(ctx context.Context, opts PutFileOptions, n int, err error) error {
	d := opts.RetryWait << min(n-1, 10)
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		d = time.Duration(e.RetryAfter) * time.Second
	}
	t := time.NewTimer(min(d, 15*time.Second))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
