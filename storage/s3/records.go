package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"path"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/mcpblob/mcpblob/storage"
)

// An object streamed in several parts straight to its key cannot carry its
// SHA-256 in its metadata, which S3 takes when the upload starts. Its
// metadata names the upload's random token instead (metaSHA256Record), and
// just before completing the upload the writer stores the SHA-256 in the
// upload's record: an empty object named after the token under
// recordPrefix, whose metadata also names the key. The record exists before
// the object does, so no reader sees the object without its SHA-256. Once
// the upload is complete, the writer also tags the object with the token
// and the SHA-256: MinIO's listings return tags, so List needs no request
// per object. Tags are only a shortcut: writers racing on a key may tag
// each other's objects, so readers trust them only when their token is the
// one in the object's metadata.
const (
	// metaSHA256Record marks an object whose SHA-256 is in a record; the
	// value is the token of the upload that wrote it.
	metaSHA256Record = "Sha256-Record"
	recordPrefix     = storage.ReservedDir + "/sha256/"
	metaRecordKey    = "Key"
	tagSHA256        = "mcpblob-sha256"
	tagUpload        = "mcpblob-upload"
	// maxReplacedRetries bounds the rereads of an object replaced between
	// the read of its metadata and the read of its record.
	maxReplacedRetries = 5
	// sweepBatch bounds the records one Open checks (one HEAD each).
	sweepBatch = 1000
)

// errReplaced: an object's record is gone because the object was replaced
// or deleted since its metadata was read.
var errReplaced = errors.New("object replaced while its SHA-256 record was read")

// retryReplaced runs read again while it meets an object being replaced.
func retryReplaced(read func() error) error {
	for attempt := 0; ; attempt++ {
		err := read()
		if !errors.Is(err, errReplaced) || attempt == maxReplacedRetries {
			return err
		}
	}
}

// fullInfo returns the Info of a HEAD or GET, reading the object's record
// when its SHA-256 is there.
func (s *Store) fullInfo(ctx context.Context, key string, oi minio.ObjectInfo) (storage.Info, error) {
	info := infoOf(key, oi)
	upload, recorded := oi.UserMetadata[metaSHA256Record]
	if !recorded {
		return info, nil
	}
	sha, err := s.recordedSHA256(ctx, key, upload)
	if err != nil {
		return storage.Info{}, err
	}
	info.SHA256 = sha
	return info, nil
}

// recordedSHA256 reads the SHA-256 that upload recorded for key: errReplaced
// when the record is gone because key changed since. A record lost
// otherwise (deleted by hand) leaves the object without a SHA-256, like
// one written by another tool.
func (s *Store) recordedSHA256(ctx context.Context, key, upload string) (string, error) {
	rec, err := s.client.StatObject(ctx, s.bucket, recordPrefix+upload, minio.StatObjectOptions{})
	if err = mapError(err); err == nil {
		return rec.UserMetadata[metaSHA256], nil
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return "", err
	}
	current, err := s.uploadOf(ctx, key)
	switch {
	case errors.Is(err, storage.ErrNotFound) || err == nil && current != upload:
		return "", errReplaced
	case err != nil:
		return "", err
	}
	s.log.Warn("s3: an object's SHA-256 record is missing", "bucket", s.bucket, "key", key, "record", recordPrefix+upload)
	return "", nil
}

// uploadOf returns the token in key's metadata, "" for an object without a
// record.
func (s *Store) uploadOf(ctx context.Context, key string) (string, error) {
	oi, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return "", mapError(err)
	}
	return oi.UserMetadata[metaSHA256Record], nil
}

// listedSHA256 returns the SHA-256 of a listed object with a record: from
// the listing's tags when they belong to the object's upload, else from
// the record.
func (s *Store) listedSHA256(ctx context.Context, obj minio.ObjectInfo, upload string) (string, error) {
	if obj.UserTags[tagUpload] == upload && obj.UserTags[tagSHA256] != "" {
		return obj.UserTags[tagSHA256], nil
	}
	sha, err := s.recordedSHA256(ctx, obj.Key, upload)
	if errors.Is(err, errReplaced) {
		info, err := s.stat(ctx, obj.Key)
		return info.SHA256, err
	}
	return sha, err
}

// putRecord stores upload's record: key and its SHA-256.
func (s *Store) putRecord(ctx context.Context, key, upload, sha string) error {
	meta := map[string]string{metaSHA256: sha, metaRecordKey: encodeFilename(key)}
	_, err := s.client.PutObject(ctx, s.bucket, recordPrefix+upload, bytes.NewReader(nil), 0, minio.PutObjectOptions{UserMetadata: meta})
	return mapError(err)
}

// removeRecord deletes upload's record; a failure is logged (Open's sweep
// finds the record later).
func (s *Store) removeRecord(ctx context.Context, upload string) {
	if err := s.client.RemoveObject(ctx, s.bucket, recordPrefix+upload, minio.RemoveObjectOptions{}); err != nil {
		s.log.Warn("s3: removing a SHA-256 record failed", "bucket", s.bucket, "record", recordPrefix+upload, "err", err)
	}
}

// tagSHA256 tags key with upload's token and SHA-256 for listings. A
// failure (a service without object tagging, say) costs List a HEAD of the
// record; it is logged at debug level.
func (s *Store) tagSHA256(ctx context.Context, key, upload, sha string) {
	t, err := tags.NewTags(map[string]string{tagSHA256: sha, tagUpload: upload}, true)
	if err == nil {
		err = s.client.PutObjectTagging(ctx, s.bucket, key, t, minio.PutObjectTaggingOptions{})
	}
	if err != nil {
		s.log.Debug("s3: tagging an object with its SHA-256 failed", "bucket", s.bucket, "key", key, "err", err)
	}
}

// removeStaleRecords removes records older than cutoff whose object is
// gone: left by crashed writers, by writers racing on a key, or by objects
// replaced or deleted by other tools. It checks up to sweepBatch records (a
// HEAD of the key each), from a random place on, so that the Opens of a
// bucket with many large objects share the work. It returns how many
// records it removed; failures are logged.
func (s *Store) removeStaleRecords(ctx context.Context, cutoff time.Time) int {
	start := recordPrefix + rand.Text()
	budget := sweepBatch
	removed, more := s.sweepRecords(ctx, start, "", cutoff, &budget)
	if more {
		wrapped, _ := s.sweepRecords(ctx, "", start, cutoff, &budget)
		removed += wrapped
	}
	return removed
}

// sweepRecords checks the records after after (from the first when
// empty) up to stop (to the last when empty), while budget lasts. more
// reports that the listing ended with budget left, without error.
func (s *Store) sweepRecords(ctx context.Context, after, stop string, cutoff time.Time, budget *int) (removed int, more bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := minio.ListObjectsOptions{Prefix: recordPrefix, StartAfter: after, Recursive: true, WithMetadata: true}
	for obj := range s.client.ListObjectsIter(ctx, s.bucket, opts) {
		switch {
		case obj.Err != nil:
			s.log.Warn("s3: listing SHA-256 records failed", "bucket", s.bucket, "err", obj.Err)
			return removed, false
		case stop != "" && obj.Key > stop || *budget == 0:
			return removed, false
		case !obj.LastModified.Before(cutoff):
			continue
		}
		*budget--
		stale, err := s.recordStale(ctx, obj)
		if err != nil {
			s.log.Warn("s3: checking a SHA-256 record failed", "bucket", s.bucket, "record", obj.Key, "err", err)
			continue
		}
		if stale {
			s.removeRecord(ctx, path.Base(obj.Key))
			removed++
		}
	}
	return removed, *budget > 0
}

// recordStale reports whether a listed record's key holds another object
// than the record's upload, or none.
func (s *Store) recordStale(ctx context.Context, obj minio.ObjectInfo) (bool, error) {
	escaped, listed := obj.UserMetadata["X-Amz-Meta-"+metaRecordKey]
	if !listed {
		rec, err := s.client.StatObject(ctx, s.bucket, obj.Key, minio.StatObjectOptions{})
		if err != nil {
			return false, mapError(err)
		}
		escaped = rec.UserMetadata[metaRecordKey]
	}
	key := decodeFilename(escaped)
	if storage.ValidateKey(key) != nil {
		return true, nil
	}
	upload, err := s.uploadOf(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return true, nil
	}
	return err == nil && upload != path.Base(obj.Key), err
}
