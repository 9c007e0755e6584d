package s3

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/storage"
)

var _ storage.Recorder = (*Store)(nil)

// GetRecord GETs the record's object in one request (minio-go's lazy
// Object would send a second, If-Match, GET that fails once a writer
// replaced the record meanwhile); its version is the object's ETag.
func (s *Store) GetRecord(ctx context.Context, name string) ([]byte, string, error) {
	if err := recordCheck(ctx, name, nil); err != nil {
		return nil, "", fmt.Errorf("s3: get record: %w", err)
	}
	body, oi, _, err := s.core.GetObject(ctx, s.bucket, storage.RecordsDir+"/"+name, minio.GetObjectOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("s3: get record %s: %w", name, mapError(err))
	}
	defer body.Close()
	if oi.Size > storage.MaxRecordSize {
		return nil, "", fmt.Errorf("s3: get record %s: %w: %d bytes", name, storage.ErrTooLarge, oi.Size)
	}
	data := make([]byte, max(oi.Size, 0))
	_, err = io.ReadFull(body, data)
	if err != nil {
		return nil, "", fmt.Errorf("s3: get record %s: %w", name, mapError(err))
	}
	return data, strings.Trim(oi.ETag, `"`), nil
}

// PutRecord PUTs the record's object with If-Match: <version>, or with
// If-None-Match: * when ifMatch is "", which AWS S3 and SeaweedFS honour
// atomically (storagetest's records race checks it). The ETag of a single
// PUT is its bytes' MD5: callers make each write's bytes differ.
func (s *Store) PutRecord(ctx context.Context, name string, data []byte, ifMatch string) (string, error) {
	if err := recordCheck(ctx, name, data); err != nil {
		return "", fmt.Errorf("s3: put record: %w", err)
	}
	var opts minio.PutObjectOptions
	if ifMatch == "" {
		opts.SetMatchETagExcept("*")
	} else {
		opts.SetMatchETag(ifMatch)
	}
	opts.DisableMultipart = true
	key := storage.RecordsDir + "/" + name
	up, err := s.core.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), "", "", opts)
	if err = recordError(err); err != nil {
		return "", fmt.Errorf("s3: put record %s: %w", name, err)
	}
	return strings.Trim(up.ETag, `"`), nil
}

// recordError maps S3's 412 (and a missing object under If-Match, which
// some services answer 404) to storage.ErrPreconditionFailed.
func recordError(err error) error {
	if err == nil {
		return nil
	}
	switch mapped := mapError(err); mapped {
	case storage.ErrExists, storage.ErrNotFound:
		return storage.ErrPreconditionFailed
	default:
		return mapped
	}
}

// DeleteRecord deletes the record's object.
func (s *Store) DeleteRecord(ctx context.Context, name string) error {
	if err := recordCheck(ctx, name, nil); err != nil {
		return fmt.Errorf("s3: delete record: %w", err)
	}
	err := s.client.RemoveObject(ctx, s.bucket, storage.RecordsDir+"/"+name, minio.RemoveObjectOptions{})
	if err != nil {
		return fmt.Errorf("s3: delete record %s: %w", name, mapError(err))
	}
	return nil
}

func recordCheck(ctx context.Context, name string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return storage.CheckRecord(name, data)
}

// ListRecords lists the objects below dir's prefix.
func (s *Store) ListRecords(ctx context.Context, dir string, fn func(string) bool) error {
	if err := recordCheck(ctx, dir, nil); err != nil {
		return fmt.Errorf("s3: list records: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the listing when fn stops it
	opts := minio.ListObjectsOptions{Prefix: storage.RecordsDir + "/" + dir + "/", Recursive: true}
	for obj := range s.client.ListObjectsIter(ctx, s.bucket, opts) {
		if obj.Err != nil {
			return fmt.Errorf("s3: list records: %w", mapError(obj.Err))
		}
		if !fn(strings.TrimPrefix(obj.Key, storage.RecordsDir+"/")) {
			break
		}
	}
	return nil
}
