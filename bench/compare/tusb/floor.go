package tusb

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/http"

	"github.com/minio/minio-go/v7"
)

// floorBucket is the bucket of the store-floor operation on the S3 rig.
const floorBucket = "p11-floor"

// floorName is the store-floor operation's name in the tables.
const floorName = "SeaweedFS alone, one part at a time"

// floorOp is the S3 store's own pace for a client that waits for each
// chunk: raw uploaded as one multipart upload whose parts are the tus
// chunks, each part sent (by minio-go, from memory, with no server of ours
// between, as mcpblob streams a part: unsigned, its CRC32C in a trailer)
// only once the one before was stored. A tus PATCH is answered
// only once its bytes are durable, and a tus client sends the next PATCH
// only after the answer, so this rate bounds any tus server on the store;
// PUT /v1/blobs keeps two parts in flight and is not bound by it.
func floorOp(rig *storeRig, raw []byte, p plan) op {
	core := minio.Core{Client: rig.s3}
	return op{name: floorName, run: func(ctx context.Context, r int) (func(), error) {
		key := fmt.Sprintf("floor-%d", r)
		cleanup := func() { _ = rig.s3.RemoveObject(ctx, floorBucket, key, minio.RemoveObjectOptions{}) }
		id, err := core.NewMultipartUpload(ctx, floorBucket, key, minio.PutObjectOptions{})
		if err != nil {
			return nil, fmt.Errorf("new multipart upload: %w", err)
		}
		var parts []minio.CompletePart
		for off := int64(0); off < int64(len(raw)); off += p.chunk {
			chunk := raw[off:min(off+p.chunk, int64(len(raw)))]
			part, err := core.PutObjectPart(ctx, floorBucket, key, id, len(parts)+1, bytes.NewReader(chunk), int64(len(chunk)), partOptions(chunk))
			if err != nil {
				_ = core.AbortMultipartUpload(ctx, floorBucket, key, id)
				return nil, fmt.Errorf("part %d: %w", len(parts)+1, err)
			}
			parts = append(parts, minio.CompletePart{PartNumber: part.PartNumber, ETag: part.ETag})
		}
		if _, err := core.CompleteMultipartUpload(ctx, floorBucket, key, id, parts, minio.PutObjectOptions{}); err != nil {
			return cleanup, fmt.Errorf("complete: %w", err)
		}
		return cleanup, nil
	}}
}

// partOptions sends a part as mcpblob's S3 store streams one: unsigned,
// its CRC32C in a trailer (aws-chunked), which the service verifies.
func partOptions(chunk []byte) minio.PutObjectPartOptions {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.Checksum(chunk, crc32.MakeTable(crc32.Castagnoli)))
	trailer := http.Header{"X-Amz-Checksum-Crc32c": {base64.StdEncoding.EncodeToString(sum[:])}}
	return minio.PutObjectPartOptions{DisableContentSha256: true, Trailer: trailer}
}

// floorWhy says how far the store's own one-part-at-a-time pace (the
// floor operation's median) lets a tus upload come to PUT's rate.
func floorWhy(st *storeResult, tus, put float64) string {
	i := st.opIndex(floorName)
	if i < 0 {
		return ""
	}
	floor := medOf(st.samples[i], func(s sample) float64 { return s.mbps })
	if floor <= 0 || put <= 0 {
		return ""
	}
	verdict := "so a tus server reaches 0.9× PUT on this store at %.0f %% of that pace"
	if floor < 0.9*put {
		verdict = "below 0.9× PUT: no tus server that answers a PATCH once its bytes are durable can reach the target on this store (it would need %.0f %% of the store's own pace, over 100 %%)"
	}
	return fmt.Sprintf(" The store itself took one chunk-sized part after another at %.0f MB/s (median; minio-go from memory, each part's CRC32C in a trailer as mcpblob sends it, no server of ours: the pace of a client that waits for each chunk's answer), %.2f× PUT's rate, "+verdict+"; mcpblob's tus reached %.0f %% of it.",
		floor, floor/put, 100*0.9*put/floor, 100*tus/floor)
}

// opIndex is the index of the operation named name in st.ops, -1 if none.
func (st *storeResult) opIndex(name string) int {
	for i, o := range st.ops {
		if o.name == name {
			return i
		}
	}
	return -1
}
