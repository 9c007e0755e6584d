package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/internal/cursor"
)

// Options configure a Store. Endpoint and Bucket are required; the zero
// value of every other field is the documented default.
type Options struct {
	// Endpoint is the S3 API address: "host:port", or a URL
	// "http://host:port" / "https://host:port" whose scheme sets Secure.
	Endpoint string
	// Bucket holds the objects.
	Bucket string
	// Region is the bucket's region, default "us-east-1". It is always set
	// on the client, so presigning never needs a request.
	Region string
	// AccessKey and SecretKey are static credentials. When both are empty,
	// minio-go's credential chain is used: env AWS_ACCESS_KEY_ID /
	// AWS_SECRET_ACCESS_KEY, env MINIO_ROOT_USER / MINIO_ROOT_PASSWORD (or
	// MINIO_ACCESS_KEY / MINIO_SECRET_KEY), ~/.aws/credentials,
	// ~/.mc/config.json, then IAM (EC2, ECS, IRSA).
	AccessKey string
	SecretKey string
	// Secure selects HTTPS for a bare host:port Endpoint.
	Secure bool
	// PublicEndpoint is the address presigned URLs point at, in the same
	// forms as Endpoint; default Endpoint. Use it when clients reach the
	// store at another address than this process does.
	PublicEndpoint string
	// PartSize is the size of upload parts, and of the buffers each Writer
	// fills and sends (three per upload: two parts in flight and the next
	// being filled). Default 8 MiB; at least 5 MiB and at most 5 GiB.
	// Uploads too large for S3's 10,000 parts of this size take larger
	// parts (see the package documentation).
	PartSize uint64
	// SignPayloads signs every part of a multipart upload with its SHA-256,
	// which the service checks: each byte is then SHA-256'd twice here
	// (the part's and the object's) and once more by the service. By
	// default parts go as UNSIGNED-PAYLOAD with a CRC32C checksum
	// (x-amz-checksum-crc32c) that the service verifies, so bytes damaged in
	// transit are still refused; see the package documentation.
	SignPayloads bool
	// StagedCommit streams an object larger than a part to a staging key
	// and copies it server side to its key at Commit, with its SHA-256 in
	// its metadata like a small object's; the service then writes every
	// byte twice. Use it when other programs read the bucket and need
	// x-amz-meta-sha256 on every object. By default the parts go straight
	// to the key and the SHA-256 to a record the object's metadata names
	// (see the package documentation).
	StagedCommit bool
	// CreateBucket creates the bucket at Open when it does not exist.
	CreateBucket bool
	// StaleAfter is the age after which Open (and RemoveStale, on a store
	// that stays open) removes staged objects,
	// incomplete multipart uploads (none of whose parts is younger: a
	// staged write in use stays) and SHA-256 records left by crashed
	// writers (records, also when their object is gone). Default 24h; a
	// negative value disables the clean-up.
	StaleAfter time.Duration
	// PageSize is the List page size used when the caller passes a limit
	// <= 0. Default 1000.
	PageSize int
	// Transport carries the S3 requests (a custom TLS configuration, say);
	// nil uses minio-go's default.
	Transport http.RoundTripper
	// Logger receives clean-up messages; nil discards them.
	Logger *slog.Logger
}

const (
	defaultRegion     = "us-east-1"
	defaultPartSize   = 8 << 20
	minPartSize       = 5 << 20 // S3's minimum for all parts but the last
	maxPartSize       = 5 << 30
	defaultStaleAfter = 24 * time.Hour
	defaultPageSize   = 1000
	// copyPartSize is the size of the server-side copy parts that move a
	// staged object to its key (S3 allows up to 5 GiB; 10000 parts of 512 MiB
	// reach S3's 5 TiB object limit).
	copyPartSize = 512 << 20
	// stagingPrefix holds staged uploads; keys cannot reach it.
	stagingPrefix = storage.ReservedDir + "/tmp/"
	// metaSHA256 and metaFilename are the user metadata names, in the
	// canonical form minio-go reports them.
	metaSHA256   = "Sha256"
	metaFilename = "Filename"
	// metaExpires is Info.Expires in Unix milliseconds, absent for none.
	metaExpires   = "Expires-Ms"
	maxPresignTTL = 7 * 24 * time.Hour
)

// Store is an S3 bucket holding objects. It is safe for concurrent use.
type Store struct {
	client *minio.Client
	core   *minio.Core
	// lister sends the listing requests minio-go cannot (listquery.go).
	lister   *http.Client
	public   *minio.Client // presigns against PublicEndpoint
	bucket   string
	partSize int64
	pageSize int
	log      *slog.Logger
	// stagedCommit: see Options.StagedCommit.
	stagedCommit bool
	// signParts: see Options.SignPayloads. Otherwise parts carry a CRC32C.
	signParts bool
	// parts recycles part buffers between Writers.
	parts *partBuffers
	// inFlight is how many parts a Writer uploads at once while it fills
	// the next (partsInFlight; tests and benchmarks change it).
	inFlight int
	// partsPerStep: see partSizeFor (tests lower it).
	partsPerStep int
	// staleAfter is Options.StaleAfter; staleAt when RemoveStale last
	// ran (RemoveStale runs at most every staleAfter/24).
	staleAfter time.Duration
	staleMu    sync.Mutex
	staleAt    time.Time
}

var (
	_ storage.Backend   = (*Store)(nil)
	_ storage.Presigner = (*Store)(nil)
)

// Open connects to the endpoint, checks that the bucket exists (creating it
// when opts.CreateBucket is set), and removes stale staged uploads.
func Open(ctx context.Context, opts Options) (*Store, error) {
	s, err := open(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("s3: open bucket %q at %s: %w", opts.Bucket, opts.Endpoint, err)
	}
	return s, nil
}

func open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Bucket == "" {
		return nil, errors.New("no bucket given")
	}
	if opts.Region == "" {
		opts.Region = defaultRegion
	}
	switch {
	case opts.PartSize == 0:
		opts.PartSize = defaultPartSize
	case opts.PartSize < minPartSize || opts.PartSize > maxPartSize:
		return nil, fmt.Errorf("part size %d is outside [5 MiB, 5 GiB]", opts.PartSize)
	}
	if opts.StaleAfter == 0 {
		opts.StaleAfter = defaultStaleAfter
	}
	if opts.PageSize <= 0 {
		opts.PageSize = defaultPageSize
	}
	var creds *credentials.Credentials
	if opts.AccessKey != "" || opts.SecretKey != "" {
		creds = credentials.NewStaticV4(opts.AccessKey, opts.SecretKey, "")
	} else {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{},
			&credentials.EnvMinio{},
			&credentials.FileAWSCredentials{},
			&credentials.FileMinioClient{},
			&credentials.IAM{},
		})
	}
	client, transport, err := newClient(opts.Endpoint, &opts, creds)
	if err != nil {
		return nil, err
	}
	public := client
	if opts.PublicEndpoint != "" {
		if public, _, err = newClient(opts.PublicEndpoint, &opts, creds); err != nil {
			return nil, fmt.Errorf("public endpoint: %w", err)
		}
	}
	s := &Store{
		client:   client,
		core:     &minio.Core{Client: client},
		lister:   &http.Client{Transport: transport},
		public:   public,
		bucket:   opts.Bucket,
		partSize: int64(opts.PartSize),
		pageSize: opts.PageSize,
		log:      opts.Logger,

		stagedCommit: opts.StagedCommit,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.signParts = opts.SignPayloads
	s.parts = newPartBuffers(int(s.partSize), maxIdleParts)
	s.inFlight = partsInFlight
	s.partsPerStep = partsPerStep
	if err := s.ensureBucket(ctx, opts.Region, opts.CreateBucket); err != nil {
		return nil, err
	}
	if s.staleAfter = opts.StaleAfter; s.staleAfter > 0 {
		s.staleAt = time.Now()
		s.removeStale(ctx, opts.StaleAfter)
	}
	return s, nil
}

// newClient returns a minio-go client for an endpoint given as host:port or
// as an http(s) URL without a path, and the transport it sends requests on:
// opts.Transport, or minio-go's default made here so that the listing
// requests (listquery.go) share the client's connections.
func newClient(endpoint string, opts *Options, creds *credentials.Credentials) (*minio.Client, http.RoundTripper, error) {
	host, secure := endpoint, opts.Secure
	if strings.Contains(endpoint, "://") {
		u, err := url.Parse(endpoint)
		if err != nil {
			return nil, nil, err
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
			return nil, nil, fmt.Errorf("endpoint %q: want host:port or http(s)://host:port", endpoint)
		}
		host, secure = u.Host, u.Scheme == "https"
	}
	if host == "" {
		return nil, nil, errors.New("no endpoint given")
	}
	transport := opts.Transport
	if transport == nil {
		t, err := minio.DefaultTransport(secure)
		if err != nil {
			return nil, nil, err
		}
		transport = t
	}
	client, err := minio.New(host, &minio.Options{Creds: creds, Secure: secure, Region: opts.Region, Transport: transport})
	return client, transport, err
}

func (s *Store) ensureBucket(ctx context.Context, region string, create bool) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil || ok {
		return err
	}
	if !create {
		return errors.New("bucket does not exist (set CreateBucket to create it)")
	}
	err = s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: region})
	if code := minio.ToErrorResponse(err).Code; code == minio.BucketAlreadyOwnedByYou {
		err = nil // created meanwhile, by another node
	}
	return err
}

// RemoveStale removes what crashed writers left (incomplete multipart
// uploads with no part written for StaleAfter, staged objects and records
// as old), as Open does, for a store that stays open: the lifecycle
// sweeper calls it each round it sweeps (storage.StaleRemover). It runs
// at most every StaleAfter/24 (an hour by default; the listings cost
// requests) and reports how many things it removed; with StaleAfter
// negative it never runs.
func (s *Store) RemoveStale(ctx context.Context) int {
	if s.staleAfter <= 0 {
		return 0
	}
	s.staleMu.Lock()
	due := time.Since(s.staleAt) >= s.staleAfter/24
	if due {
		s.staleAt = time.Now()
	}
	s.staleMu.Unlock()
	if !due {
		return 0
	}
	return s.removeStale(ctx, s.staleAfter)
}

// removeStale aborts multipart uploads and deletes staged objects older than
// age: what crashed writers left. Failures are logged, not returned; it
// reports how many things it removed.
func (s *Store) removeStale(ctx context.Context, age time.Duration) int {
	cutoff := time.Now().Add(-age)
	removed := 0
	for obj := range s.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: stagingPrefix, Recursive: true}) {
		if obj.Err != nil {
			s.log.Warn("s3: listing staged uploads failed", "bucket", s.bucket, "err", obj.Err)
			break
		}
		if obj.LastModified.Before(cutoff) {
			if err := s.client.RemoveObject(ctx, s.bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
				s.log.Warn("s3: removing a staged upload failed", "bucket", s.bucket, "key", obj.Key, "err", err)
			} else {
				removed++
			}
		}
	}
	for up := range s.client.ListIncompleteUploads(ctx, s.bucket, "", true) {
		if up.Err != nil {
			s.log.Warn("s3: listing incomplete uploads failed", "bucket", s.bucket, "err", up.Err)
			continue // drain the channel
		}
		if up.Initiated.Before(cutoff) && !s.partWrittenSince(ctx, up.Key, up.UploadID, cutoff) {
			if err := s.core.AbortMultipartUpload(ctx, s.bucket, up.Key, up.UploadID); err != nil {
				s.log.Warn("s3: aborting an incomplete upload failed", "bucket", s.bucket, "key", up.Key, "err", err)
			} else {
				removed++
			}
		}
	}
	removed += s.removeStaleRecords(ctx, cutoff)
	if removed > 0 {
		s.log.Info("s3: removed stale uploads", "bucket", s.bucket, "count", removed, "olderThan", age)
	}
	return removed
}

// partWrittenSince reports whether a part of the upload was written after
// cutoff: a staged write (storage.Stager) still in use lives on, whenever
// it began. A failure to tell counts as yes.
func (s *Store) partWrittenSince(ctx context.Context, key, upload string, cutoff time.Time) bool {
	for marker := 0; ; {
		res, err := s.core.ListObjectParts(ctx, s.bucket, key, upload, marker, 1000)
		if err != nil {
			return true
		}
		for _, p := range res.ObjectParts {
			if p.LastModified.After(cutoff) {
				return true
			}
		}
		if !res.IsTruncated || res.NextPartNumberMarker <= marker {
			return false
		}
		marker = res.NextPartNumberMarker
	}
}

// Close releases nothing: the HTTP connections are shared and idle ones time
// out on their own.
func (s *Store) Close() error { return nil }

// Stat returns the Info of key (one HEAD request).
func (s *Store) Stat(ctx context.Context, key string) (storage.Info, error) {
	info, err := s.stat(ctx, key)
	if err != nil {
		return storage.Info{}, fmt.Errorf("s3: stat %q: %w", key, err)
	}
	return info, nil
}

func (s *Store) stat(ctx context.Context, key string) (storage.Info, error) {
	if err := checkKey(ctx, key); err != nil {
		return storage.Info{}, err
	}
	var info storage.Info
	err := retryReplaced(func() error {
		oi, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
		if err != nil {
			return mapError(err)
		}
		info, err = s.fullInfo(ctx, key, oi)
		return err
	})
	if err != nil {
		return storage.Info{}, err
	}
	return info, nil
}

// Open returns the body of one GET of key (ranged when rng is set); an
// object whose SHA-256 is in a record costs one more request, a HEAD of
// the record.
func (s *Store) Open(ctx context.Context, key string, rng *storage.Range) (io.ReadCloser, storage.Info, error) {
	rc, info, err := s.open(ctx, key, rng)
	if err != nil {
		return nil, storage.Info{}, fmt.Errorf("s3: open %q: %w", key, err)
	}
	return rc, info, nil
}

func (s *Store) open(ctx context.Context, key string, rng *storage.Range) (io.ReadCloser, storage.Info, error) {
	if err := checkKey(ctx, key); err != nil {
		return nil, storage.Info{}, err
	}
	var opts minio.GetObjectOptions
	if rng != nil {
		if rng.Offset < 0 || rng.Length == 0 {
			// Nothing to GET; Clip decides between an error and no bytes.
			return s.openEmpty(ctx, key, rng)
		}
		var err error
		switch {
		case rng.Length > 0 && rng.Length <= math.MaxInt64-rng.Offset:
			err = opts.SetRange(rng.Offset, rng.Offset+rng.Length-1)
		case rng.Offset > 0:
			err = opts.SetRange(rng.Offset, 0) // to the end
		}
		if err != nil {
			return nil, storage.Info{}, err
		}
	}
	var (
		body io.ReadCloser
		info storage.Info
		hdr  http.Header
	)
	err := retryReplaced(func() error {
		var oi minio.ObjectInfo
		var err error
		body, oi, hdr, err = s.core.GetObject(ctx, s.bucket, key, opts)
		if err != nil {
			return mapError(err)
		}
		if info, err = s.fullInfo(ctx, key, oi); err != nil {
			body.Close()
		}
		return err
	})
	if errors.Is(err, storage.ErrInvalidRange) {
		// S3 answers 416 for every range of an empty object too.
		return s.openEmpty(ctx, key, rng)
	}
	if err != nil {
		return nil, storage.Info{}, err
	}
	if cr := hdr.Get("Content-Range"); cr != "" {
		// "bytes first-last/total"
		total, err := strconv.ParseInt(cr[strings.LastIndexByte(cr, '/')+1:], 10, 64)
		if err != nil {
			body.Close()
			return nil, storage.Info{}, fmt.Errorf("bad Content-Range %q", cr)
		}
		info.Size = total
	}
	return body, info, nil
}

// openEmpty answers a range that selects no bytes: no bytes and the Info, or
// ErrInvalidRange.
func (s *Store) openEmpty(ctx context.Context, key string, rng *storage.Range) (io.ReadCloser, storage.Info, error) {
	info, err := s.stat(ctx, key)
	if err != nil {
		return nil, storage.Info{}, err
	}
	if _, _, err := rng.Clip(info.Size); err != nil {
		return nil, storage.Info{}, err
	}
	return http.NoBody, info, nil
}

// Delete removes key, and its SHA-256 record if it has one. S3 deletes
// missing keys silently, so Delete checks existence first.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.delete(ctx, key); err != nil {
		return fmt.Errorf("s3: delete %q: %w", key, err)
	}
	return nil
}

func (s *Store) delete(ctx context.Context, key string) error {
	if err := checkKey(ctx, key); err != nil {
		return err
	}
	upload, err := s.uploadOf(ctx, key)
	if err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return mapError(err)
	}
	if upload != "" {
		s.removeRecord(ctx, upload)
	}
	return nil
}

// List returns up to limit objects whose keys start with prefix, in key
// order, after the cursor.
func (s *Store) List(ctx context.Context, prefix, cur string, limit int) (storage.Page, error) {
	page, err := s.list(ctx, prefix, cur, limit)
	if err != nil {
		return storage.Page{}, fmt.Errorf("s3: list %q: %w", prefix, err)
	}
	return page, nil
}

func (s *Store) list(ctx context.Context, prefix, cur string, limit int) (storage.Page, error) {
	after, token, err := decodeListCursor(cur)
	if err != nil {
		return storage.Page{}, err
	}
	if err := ctx.Err(); err != nil {
		return storage.Page{}, err
	}
	if !cursor.ValidPrefix(prefix) {
		return storage.Page{}, nil
	}
	if limit <= 0 {
		limit = s.pageSize
	}
	q := listQuery{prefix: prefix, startAfter: after, token: token}
	var items []storage.Info
	for {
		q.maxKeys = min(limit-len(items), 1000)
		result, err := s.listObjectsV2(ctx, q)
		if q.token != "" && ctx.Err() == nil && (err != nil || !resumesAfter(result, q.startAfter)) {
			q.token = "" // rejected, expired or forged: list again after the key
			continue
		}
		if err != nil {
			return storage.Page{}, mapError(err)
		}
		var reserved bool
		if items, reserved, err = s.appendListed(ctx, result.Contents, q.startAfter, items); err != nil {
			return storage.Page{}, err
		}
		switch {
		case reserved:
			q.startAfter, q.token = reservedEnd, ""
		case !result.IsTruncated:
			return storage.Page{Items: items}, nil
		case len(items) == limit:
			next := encodeListCursor(items[limit-1].Key, cursorToken(result.NextContinuationToken))
			return storage.Page{Items: items, NextCursor: next}, nil
		default:
			q.token = result.NextContinuationToken
			if n := len(result.Contents); n > 0 {
				q.startAfter = result.Contents[n-1].Key
			}
		}
	}
}

// resumesAfter reports whether a listing continued with a token starts
// after the key it should continue from. The token is the service's and
// opaque, but it reaches the Store through a client: MinIO answers a token
// naming another place with a listing from there. One that skips ahead
// passes, but only skips objects a cursor naming a later key would skip.
func resumesAfter(result minio.ListBucketV2Result, key string) bool {
	return len(result.Contents) == 0 || result.Contents[0].Key > key
}

// reservedEnd sorts after the Store's own objects under storage.ReservedDir
// (their names are ASCII) and before any valid key after them.
const reservedEnd = storage.ReservedDir + "/\x7f"

// appendListed appends the Info of the listed objects to items. When it
// meets the Store's own objects (SHA-256 records, claims, staged uploads)
// in a listing that started before their end, it stops and reports it, so
// that the caller lists on past them in one request rather than page
// through them.
func (s *Store) appendListed(ctx context.Context, listed []minio.ObjectInfo, startAfter string, items []storage.Info) ([]storage.Info, bool, error) {
	for _, obj := range listed {
		if strings.HasPrefix(obj.Key, storage.ReservedDir+"/") && startAfter < reservedEnd {
			return items, true, nil
		}
		if storage.ValidateKey(obj.Key) != nil {
			continue // keys written by other tools
		}
		info, err := s.listedInfo(ctx, obj)
		if errors.Is(err, storage.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return items, false, err
		}
		items = append(items, info)
	}
	return items, false, nil
}

// listedInfo returns the Info of a listed object, from the metadata and
// tags in the listing when the service sent them (MinIO does), else from a
// HEAD (and the object's SHA-256 record).
func (s *Store) listedInfo(ctx context.Context, obj minio.ObjectInfo) (storage.Info, error) {
	md := obj.UserMetadata
	ct, ok := md["content-type"]
	if !ok {
		return s.stat(ctx, obj.Key)
	}
	sha := md["X-Amz-Meta-"+metaSHA256]
	if upload, recorded := md["X-Amz-Meta-"+metaSHA256Record]; recorded {
		var err error
		if sha, err = s.listedSHA256(ctx, obj, upload); err != nil {
			return storage.Info{}, err
		}
	}
	info := storage.Info{
		Key:       obj.Key,
		Size:      obj.Size,
		MediaType: ct,
		SHA256:    sha,
		Filename:  decodeFilename(md["X-Amz-Meta-"+metaFilename]),
		ETag:      quote(obj.ETag),
		ModTime:   obj.LastModified,
		Expires:   parseExpires(md["X-Amz-Meta-"+metaExpires]),
	}
	if info.MediaType == "" {
		info.MediaType = storage.DefaultMediaType
	}
	return info, nil
}

// PresignGet returns a URL that GETs key until ttl passes, with the
// response's Content-Type and Content-Disposition overridden when opts sets
// them. It does not check that the object exists.
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration, opts storage.PresignOptions) (*url.URL, error) {
	if err := checkPresign(ctx, key, ttl); err != nil {
		return nil, fmt.Errorf("s3: presign get %q: %w", key, err)
	}
	params := url.Values{}
	if opts.ContentType != "" {
		params.Set("response-content-type", opts.ContentType)
	}
	if opts.ContentDisposition != "" {
		params.Set("response-content-disposition", opts.ContentDisposition)
	}
	u, err := s.public.PresignedGetObject(ctx, s.bucket, key, ttl, params)
	if err != nil {
		return nil, fmt.Errorf("s3: presign get %q: %w", key, err)
	}
	return u, nil
}

// PresignPut returns a URL that PUTs key until ttl passes. When
// opts.ContentType is set the Content-Type header is signed: the upload must
// send exactly that value. Objects uploaded this way carry no SHA-256.
func (s *Store) PresignPut(ctx context.Context, key string, ttl time.Duration, opts storage.PresignOptions) (*url.URL, error) {
	if err := checkPresign(ctx, key, ttl); err != nil {
		return nil, fmt.Errorf("s3: presign put %q: %w", key, err)
	}
	var headers http.Header
	if opts.ContentType != "" {
		headers = http.Header{"Content-Type": {opts.ContentType}}
	}
	u, err := s.public.PresignHeader(ctx, http.MethodPut, s.bucket, key, ttl, nil, headers)
	if err != nil {
		return nil, fmt.Errorf("s3: presign put %q: %w", key, err)
	}
	return u, nil
}

func checkPresign(ctx context.Context, key string, ttl time.Duration) error {
	if err := checkKey(ctx, key); err != nil {
		return err
	}
	if ttl < time.Second || ttl > maxPresignTTL {
		return fmt.Errorf("lifetime %v is outside [1s, 7 days]", ttl)
	}
	return nil
}

// infoOf converts the ObjectInfo of a HEAD or GET; see fullInfo for
// objects whose SHA-256 is in a record.
func infoOf(key string, oi minio.ObjectInfo) storage.Info {
	info := storage.Info{
		Key:       key,
		Size:      oi.Size,
		MediaType: oi.ContentType,
		SHA256:    oi.UserMetadata[metaSHA256],
		Filename:  decodeFilename(oi.UserMetadata[metaFilename]),
		ETag:      quote(oi.ETag),
		ModTime:   oi.LastModified,
		Expires:   parseExpires(oi.UserMetadata[metaExpires]),
	}
	if info.MediaType == "" {
		info.MediaType = storage.DefaultMediaType
	}
	return info
}

func quote(etag string) string { return `"` + strings.Trim(etag, `"`) + `"` }

// formatExpires and parseExpires convert Info.Expires to and from its
// metadata value, Unix milliseconds; "" (or garbage another tool wrote)
// is no expiry.
func formatExpires(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

func parseExpires(v string) time.Time {
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// encodeFilename makes any UTF-8 filename a valid header value.
func encodeFilename(name string) string { return url.PathEscape(name) }

func decodeFilename(v string) string {
	if name, err := url.PathUnescape(v); err == nil {
		return name
	}
	return v
}

func checkKey(ctx context.Context, key string) error {
	if err := storage.ValidateKey(key); err != nil {
		return err
	}
	return ctx.Err()
}

// mapError translates the S3 errors that have a storage sentinel.
func mapError(err error) error {
	var resp minio.ErrorResponse
	if !errors.As(err, &resp) {
		return err
	}
	switch {
	case resp.Code == minio.NoSuchKey || resp.Code == "NotFound":
		return storage.ErrNotFound
	case resp.Code == minio.PreconditionFailed || resp.StatusCode == http.StatusPreconditionFailed:
		return storage.ErrExists
	case resp.Code == minio.InvalidRange || resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		return storage.ErrInvalidRange
	case resp.Code == "XMinioStorageFull" || resp.StatusCode == http.StatusInsufficientStorage:
		return fmt.Errorf("%w: %w", storage.ErrInsufficientStorage, err)
	}
	return err
}
