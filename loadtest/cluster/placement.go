package main

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"
)

// placement is where SeaweedFS keeps the objects the wipe check reads:
// the volumes of each object's chunks (none when the filer keeps the
// object inline in its metadata).
type placement struct {
	volumes map[string][]int // by mcpblob key
}

// placeObjects finds each key's object in the bucket (mcpblob may keep it
// under a namespace prefix: the S3 key ends with "/"+key) and reads its
// chunks from the filer (?metadata=true).
func placeObjects(ctx context.Context, s *store, keys []string) (*placement, error) {
	found := map[string]string{}
	for obj := range s.clients[0].ListObjectsIter(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			return nil, obj.Err
		}
		for _, k := range keys {
			if obj.Key == k || strings.HasSuffix(obj.Key, "/"+k) {
				found[k] = obj.Key
			}
		}
	}
	pl := &placement{volumes: map[string][]int{}}
	for _, k := range keys {
		s3key, ok := found[k]
		if !ok {
			return nil, fmt.Errorf("%s: not in bucket %s", k, bucket)
		}
		var entry struct {
			Chunks []struct {
				FileID string `json:"file_id"`
				Fid    struct {
					VolumeID int `json:"volume_id"`
				} `json:"fid"`
			} `json:"chunks"`
		}
		u := "http://" + s.filer.Addr.HTTP + "/buckets/" + bucket + "/" + (&url.URL{Path: s3key}).EscapedPath() + "?metadata=true&resolveManifest=true"
		if err := getJSON(ctx, u, &entry); err != nil {
			return nil, fmt.Errorf("%s: filer metadata: %w", k, err)
		}
		var vols []int
		for _, c := range entry.Chunks {
			v := c.Fid.VolumeID
			if v == 0 {
				id, _, _ := strings.Cut(c.FileID, ",")
				v, _ = strconv.Atoi(id)
			}
			if v > 0 && !slices.Contains(vols, v) {
				vols = append(vols, v)
			}
		}
		pl.volumes[k] = vols
	}
	return pl, nil
}

// on counts the objects with a chunk on a volume of ids, and those kept
// inline by the filer.
func (pl *placement) on(ids []int) (held, inline int) {
	for _, vols := range pl.volumes {
		if len(vols) == 0 {
			inline++
			continue
		}
		if slices.ContainsFunc(vols, func(v int) bool { return slices.Contains(ids, v) }) {
			held++
		}
	}
	return held, inline
}
