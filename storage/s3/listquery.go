package s3

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/minio/minio-go/v7"
)

// listQuery is one ListObjectsV2 request: after a continuation token when
// it has one, else after StartAfter.
type listQuery struct {
	prefix, startAfter, token string
	maxKeys                   int
}

// listRequestTTL is the lifetime of the signature of a listing request.
const listRequestTTL = 5 * time.Minute

// maxListResponse bounds the XML of one listing of up to 1,000 objects
// with their metadata and tags.
const maxListResponse = 64 << 20

// listDrain bounds what is read of a listing response after its XML, so
// that the transport keeps the connection: it closes one whose body is
// closed before its end (a chunked body's last chunk, say).
const listDrain = 4 << 10

// listObjectsV2 sends one ListObjectsV2 request with metadata=true (MinIO
// then lists each object's metadata and tags). minio-go offers no call
// that takes both a continuation token and that parameter with a context
// (Core.ListObjectsV2 takes a token but no metadata, ListObjectsIter
// metadata but no token), so the request is signed by the client and sent
// through the Store's transport.
func (s *Store) listObjectsV2(ctx context.Context, q listQuery) (minio.ListBucketV2Result, error) {
	params := url.Values{
		"list-type":     {"2"},
		"metadata":      {"true"},
		"encoding-type": {"url"},
		"prefix":        {q.prefix},
		"max-keys":      {strconv.Itoa(q.maxKeys)},
	}
	if q.token != "" {
		params.Set("continuation-token", q.token)
	} else if q.startAfter != "" {
		params.Set("start-after", q.startAfter)
	}
	u, err := s.client.Presign(ctx, http.MethodGet, s.bucket, "", listRequestTTL, params)
	if err != nil {
		return minio.ListBucketV2Result{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return minio.ListBucketV2Result{}, err
	}
	resp, err := s.lister.Do(req)
	if err != nil {
		return minio.ListBucketV2Result{}, err
	}
	defer func() {
		io.CopyN(io.Discard, resp.Body, listDrain)
		resp.Body.Close()
	}()
	body := io.LimitReader(resp.Body, maxListResponse)
	if resp.StatusCode != http.StatusOK {
		return minio.ListBucketV2Result{}, listError(resp.StatusCode, body)
	}
	var result minio.ListBucketV2Result
	if err := xml.NewDecoder(body).Decode(&result); err != nil {
		return result, fmt.Errorf("listing response: %w", err)
	}
	return result, decodeListedKeys(&result)
}

// listError reads the S3 error document of a failed listing.
func listError(status int, body io.Reader) error {
	resp := minio.ErrorResponse{StatusCode: status}
	if err := xml.NewDecoder(body).Decode(&resp); err != nil || resp.Code == "" {
		resp.Code = http.StatusText(status)
	}
	return resp
}

// decodeListedKeys undoes encoding-type=url, which keeps any key valid in
// the XML, and rounds times as minio-go's listings do.
func decodeListedKeys(result *minio.ListBucketV2Result) error {
	for i := range result.Contents {
		obj := &result.Contents[i]
		if result.EncodingType == "url" {
			key, err := url.QueryUnescape(obj.Key)
			if err != nil {
				return fmt.Errorf("listed key %q: %w", obj.Key, err)
			}
			obj.Key = key
		}
		obj.LastModified = obj.LastModified.Truncate(time.Millisecond)
	}
	return nil
}
