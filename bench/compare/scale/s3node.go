package scale

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/loadtest/rig/weed"
)

// StartS3Node starts a single SeaweedFS node in dir with fresh
// credentials and returns it, with a minio-go client of the harness's
// own, once it takes writes in bucket (weed.Writable creates it).
func StartS3Node(ctx context.Context, bin, dir, bucket string) (*weed.Service, weed.S3Options, *minio.Client, error) {
	creds := weed.S3Options{AccessKey: "mcpblob-bench", SecretKey: rand.Text()}
	if _, err := os.Stat(bin); err != nil {
		return nil, creds, nil, fmt.Errorf("SeaweedFS missing (%s): run `make tools`", bin)
	}
	w, err := weed.StartServer(bin, dir, creds)
	if err != nil {
		return nil, creds, nil, err
	}
	client, err := weed.Client(w.Addr.HTTP, creds)
	if err == nil {
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		err = weed.Writable(wctx, client, bucket)
		cancel()
	}
	if err != nil {
		w.Stop()
		return nil, creds, nil, err
	}
	return w, creds, client, nil
}
