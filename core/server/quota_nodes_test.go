package server

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpblob/mcpblob/core/auth"
	"github.com/mcpblob/mcpblob/storage"
	"github.com/mcpblob/mcpblob/storage/quota"
	"github.com/mcpblob/mcpblob/storage/s3"
	"github.com/mcpblob/mcpblob/storage/storagetest/s3test"
)

// TestQuotaThreeNodes: three servers on one S3 bucket, each with its own
// store client, take concurrent uploads of one principal (declared and
// chunked PUTs spread over the nodes) well past its quota. The usage
// ends at or under the quota and equal to the sizes stored; every
// upload was stored or refused 403 quota_exceeded.
func TestQuotaThreeNodes(t *testing.T) {
	parallel(t)
	srv := s3test.Shared(t)
	bucket := "qn" + strings.ToLower(rand.Text()[:12])
	const limit = 2 << 20
	var nodes []*bpClient
	var raw storage.Backend
	for i := range 3 {
		b, err := s3.Open(t.Context(), s3.Options{Endpoint: "http://" + srv.Endpoint, AccessKey: srv.AccessKey,
			SecretKey: srv.SecretKey, Bucket: bucket, CreateBucket: i == 0})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		raw = b
		nodes = append(nodes, newBPClient(t, Options{Backend: b, Auth: Auth{Keys: []string{auth.KeyLine(quotaSecret, "alice", nil)}},
			Quota: Quota{Default: auth.Quota{Bytes: limit}}}))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[int]int{}
	for i := range 36 {
		wg.Go(func() {
			status := quotaPut(t, nodes[i%3], fmt.Sprint("k", i), 150<<10+i*997, i%2 == 0)
			mu.Lock()
			outcomes[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	truth, err := quota.Scan(t.Context(), raw)
	if err != nil {
		t.Fatal(err)
	}
	r := nodes[1].do("GET", "/v1/usage", nil, aliceKey)
	stored := truth["alice"]
	want := fmt.Sprintf(`"bytes":%d,"inFlightBytes":0,"inFlightObjects":0,`, stored.Bytes)
	if stored.Bytes > limit || !strings.Contains(string(r.body), want) || outcomes[201]+outcomes[403] != 36 || outcomes[0] > 0 || outcomes[403] == 0 {
		t.Fatalf("stored %+v of a %d-byte quota; outcomes %v; GET /v1/usage %s", stored, limit, outcomes, r.body)
	}
	t.Logf("stored %d bytes in %d objects of a %d-byte quota; outcomes %v", stored.Bytes, stored.Objects, limit, outcomes)
}

// quotaPut PUTs size bytes under key as alice, declared or chunked, and
// returns the status (a 403 must be quota_exceeded).
func quotaPut(t *testing.T, c *bpClient, key string, size int, declared bool) int {
	req, _ := http.NewRequest("PUT", c.base+"/v1/blobs/"+key, bytes.NewReader(make([]byte, size)))
	if !declared {
		req.ContentLength = -1
	}
	req.Header.Set("Authorization", aliceKey["Authorization"])
	resp, body, err := trySendRefused(req)
	if err != nil {
		t.Errorf("PUT %s: %v", key, err)
		return 0
	}
	if resp.StatusCode == 403 && !bytes.Contains(body, []byte(`"quota_exceeded"`)) || resp.StatusCode != 403 && resp.StatusCode != 201 {
		t.Errorf("PUT %s: %d %s", key, resp.StatusCode, body)
	}
	return resp.StatusCode
}
