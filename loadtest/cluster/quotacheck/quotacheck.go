// Package quotacheck is the cluster check's quota part (docs/quotas.md):
// three more mcpblob nodes on the cluster's SeaweedFS, one S3 gateway
// each, with --quota-bytes, take concurrent uploads of one principal
// spread over the three, well past its quota. The usage must end at or
// under the quota, equal to the sizes the nodes list, with nothing left
// reserved; every upload stored (201) or refused 403 quota_exceeded.
//
// Its nodes are its own (the cluster's stay without quotas, so the load
// figures do not pay for the count) and store in a bucket of their own.
package quotacheck

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
)

// Limit is the principal's bytes quota; Uploads of Size (plus a few
// bytes each) race for it.
const (
	Limit   = 4 << 20
	Uploads = 48
	Size    = 256 << 10
)

// Setup is what the check takes from the cluster.
type Setup struct {
	Bin       string   // the mcpblob binary
	Endpoints []string // one S3 endpoint URL per node
	Env       []string // the nodes' environment (S3 credentials)
	TokenKeys string   // the cluster's token keys file
	Work      string   // a folder for the check's files
}

// Result is one line of the cluster report.
type Result struct {
	Name, Detail string
	OK           bool
}

// Run starts the nodes, races the uploads and checks the usage.
func Run(ctx context.Context, s Setup) []Result {
	key := "mcpb_" + rand.Text()
	nodes, err := start(s, key)
	defer func() {
		for _, n := range nodes {
			n.Stop()
		}
	}()
	if err != nil {
		return []Result{{Name: "three nodes with quotas start", Detail: err.Error()}}
	}
	hc := &http.Client{Timeout: 60 * time.Second}
	c := client{hc: hc, auth: "Bearer " + key}
	outcomes := c.race(ctx, nodes)
	usage, uerr := c.usage(nodes[1])
	listed, n, lerr := c.listed(nodes[2])
	race := Result{Name: fmt.Sprintf("%d uploads of one principal racing over three nodes at a %d-byte quota", Uploads, Limit),
		Detail: fmt.Sprintf("outcomes %v (0: no answer); usage %+v; listed %d bytes in %d objects", outcomes, usage, listed, n)}
	race.OK = uerr == nil && lerr == nil && outcomes[201]+outcomes[403] == Uploads && outcomes[403] > 0 &&
		usage.Bytes <= Limit && usage.Bytes == listed && usage.Objects == n && usage.InFlightBytes == 0
	if uerr != nil || lerr != nil {
		race.Detail += fmt.Sprintf("; errors: %v %v", uerr, lerr)
	}
	return []Result{race}
}

// start writes the key file and starts one node per endpoint.
func start(s Setup, key string) ([]*proc.Proc, error) {
	digest := sha256.Sum256([]byte(key))
	keys := filepath.Join(s.Work, "quota-api-keys")
	if err := os.WriteFile(keys, []byte(hex.EncodeToString(digest[:])+" quota-check\n"), 0o600); err != nil {
		return nil, err
	}
	var nodes []*proc.Proc
	for i, ep := range s.Endpoints {
		addr, err := proc.FreeAddr()
		if err != nil {
			return nodes, err
		}
		p, err := proc.Start(fmt.Sprintf("quota%d", i+1), "http://"+addr+"/readyz", s.Bin,
			[]string{"serve", "--listen", addr, "--s3-endpoint", ep, "--s3-bucket", "quota-check",
				"--token-keys", s.TokenKeys, "--auth-keys", keys, "--quota-bytes", fmt.Sprint(Limit)}, s.Env...)
		if err != nil {
			return nodes, err
		}
		nodes = append(nodes, p)
	}
	return nodes, nil
}

type client struct {
	hc   *http.Client
	auth string
}

// base is the address a node serves on (its readiness URL's host).
func base(p *proc.Proc) string {
	for i, a := range p.Cmd.Args {
		if a == "--listen" && i+1 < len(p.Cmd.Args) {
			return "http://" + p.Cmd.Args[i+1]
		}
	}
	return ""
}

func (c client) do(method, url string, body []byte, size int64) (int, []byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.ContentLength = size
	req.Header.Set("Authorization", c.auth)
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// race sends the uploads at once, round robin over the nodes, half with
// a Content-Length and half chunked, and counts the statuses (a 403 that
// is not quota_exceeded counts as 0).
func (c client) race(ctx context.Context, nodes []*proc.Proc) map[int]int {
	var mu sync.Mutex
	out := map[int]int{}
	var wg sync.WaitGroup
	for i := range Uploads {
		wg.Go(func() {
			if ctx.Err() != nil {
				return
			}
			size := int64(Size + i)
			body := make([]byte, size)
			if i%2 == 1 {
				size = -1
			}
			status, b, _ := c.do("PUT", fmt.Sprintf("%s/v1/blobs/race-%d", base(nodes[i%len(nodes)]), i), body, size)
			if status == 403 && !bytes.Contains(b, []byte(`"quota_exceeded"`)) {
				status = 0
			}
			mu.Lock()
			out[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// Usage is GET /v1/usage's answer.
type Usage struct{ Bytes, Objects, InFlightBytes, InFlightObjects int64 }

func (c client) usage(node *proc.Proc) (Usage, error) {
	var u Usage
	status, b, err := c.do("GET", base(node)+"/v1/usage", nil, 0)
	if err == nil && status != 200 {
		err = fmt.Errorf("GET /v1/usage: %d %s", status, b)
	}
	if err == nil {
		err = json.Unmarshal(b, &u)
	}
	return u, err
}

// listed sums the sizes the node lists (one page: fewer than 1,000).
func (c client) listed(node *proc.Proc) (bytes, objects int64, err error) {
	status, b, err := c.do("GET", base(node)+"/v1/blobs?limit=1000", nil, 0)
	if err == nil && status != 200 {
		err = fmt.Errorf("GET /v1/blobs: %d %s", status, b)
	}
	var page struct{ Items []struct{ Size int64 } }
	if err == nil {
		err = json.Unmarshal(b, &page)
	}
	for _, it := range page.Items {
		bytes += it.Size
		objects++
	}
	return bytes, objects, err
}
