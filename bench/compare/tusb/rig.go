package tusb

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mcpblob/mcpblob/bench/compare/scale"
	"github.com/mcpblob/mcpblob/loadtest/rig/mcpc"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
	"github.com/mcpblob/mcpblob/loadtest/rig/weed"
)

// Options are what P11 and P12 take from the harness.
type Options struct {
	Quick bool
	Bins  map[string]string // "mcpblob", "weed", "tusd" → binaries
}

// server is one upload server of a rig, started on a fixed loopback
// address so that P12 can start it again where the client expects it.
type server struct {
	name string
	bin  string
	args []string
	env  []string
	addr string // host:port
	path string // the tus creation endpoint: /v1/tus/ or /files/
	proc *proc.Proc
	idle int64 // RSS when idle after a warm-up upload
	tus  *client
}

func (s *server) base() string { return "http://" + s.addr }

func (s *server) pid() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.PID()
}

// readyURL is what answers 200 once the server takes requests.
func (s *server) readyURL() string {
	if s.path == "/files/" {
		return s.base() + "/metrics"
	}
	return s.base() + "/readyz"
}

// command is the server's command line, ready to start.
func (s *server) command() *exec.Cmd {
	cmd := exec.Command(s.bin, s.args...)
	cmd.Env = append(os.Environ(), s.env...)
	return cmd
}

// start starts the server and waits until it is ready.
func (s *server) start() error {
	p, err := proc.StartCmd(s.name, s.readyURL(), s.command())
	if err != nil {
		return err
	}
	s.proc = p
	return nil
}

// stop stops the server (SIGTERM, then SIGKILL) by its PID.
func (s *server) stop() {
	if s.proc != nil {
		s.proc.Stop()
	}
}

// s3Bucket is a bucket on the rig's SeaweedFS node and its credentials.
type s3Bucket struct {
	endpoint, bucket string
	creds            weed.S3Options
}

// newMcpblob is `mcpblob serve` on a free loopback address over dir (the
// local store), or over b (the S3 store) when b is set.
func newMcpblob(bin, dir string, b *s3Bucket) (*server, error) {
	addr, err := proc.FreeAddr()
	if err != nil {
		return nil, err
	}
	s := &server{name: "mcpblob", bin: bin, addr: addr, path: "/v1/tus/",
		args: []string{"serve", "--listen", addr, "--access-log=false", "--data", dir}}
	if b != nil {
		s.args = append(s.args, "--s3-endpoint", b.endpoint, "--s3-bucket", b.bucket)
		s.env = []string{"MCPBLOB_S3_ACCESS_KEY=" + b.creds.AccessKey, "MCPBLOB_S3_SECRET_KEY=" + b.creds.SecretKey}
	}
	return s, nil
}

// newTusd is tusd with its file store in dir, or its S3 store on b when b
// is set (its part buffers then go to temporary files under dir).
func newTusd(bin, dir string, b *s3Bucket) (*server, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("tusd missing (%s): run `make tools`", bin)
	}
	addr, err := proc.FreeAddr()
	if err != nil {
		return nil, err
	}
	host, port, _ := strings.Cut(addr, ":")
	s := &server{name: "tusd", bin: bin, addr: addr, path: "/files/",
		args: []string{"-host", host, "-port", port, "-base-path", "/files/", "-upload-dir", dir, "-verbose=false", "-show-startup-logs=false"}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if b != nil {
		s.args = append(s.args, "-s3-bucket", b.bucket, "-s3-endpoint", b.endpoint)
		s.env = []string{"AWS_ACCESS_KEY_ID=" + b.creds.AccessKey, "AWS_SECRET_ACCESS_KEY=" + b.creds.SecretKey,
			"AWS_REGION=us-east-1", "TMPDIR=" + dir}
	}
	return s, nil
}

// warm starts s, sends one small tus upload and takes the idle RSS.
func (s *server) warm(ctx context.Context) error {
	if err := s.start(); err != nil {
		return err
	}
	s.tus = &client{hc: mcpc.NewHTTPClient(), base: s.base()}
	raw := make([]byte, 1<<20)
	if err := s.tus.upload(ctx, s.path, raw, 256<<10, map[string]string{"key": "p11/warm-up", "filename": "warm-up.bin"}); err != nil {
		s.stop()
		return fmt.Errorf("%s warm-up upload: %w", s.name, err)
	}
	time.Sleep(100 * time.Millisecond)
	s.idle = sysinfo.RSS(s.pid())
	return nil
}

// fresh stops s and starts it again, warmed up: each measured run gets a
// process of its own, so its RSS growth is its own and not what an
// earlier run in the same process left resident.
func (s *server) fresh(ctx context.Context) error {
	s.stop()
	return s.warm(ctx)
}

// storeRig is one store's servers: mcpblob and tusd side by side, and the
// SeaweedFS node under both on S3.
type storeRig struct {
	name    string // "local" or "S3"
	mcpblob *server
	tusd    *server
	weed    *weed.Service // nil on the local store
	s3      *minio.Client // the node's client (floorOp); nil on the local store
}

func (r *storeRig) stop() {
	for _, s := range []*server{r.mcpblob, r.tusd} {
		if s != nil {
			s.stop()
		}
	}
	if r.weed != nil {
		r.weed.Stop()
	}
}

// startLocal starts mcpblob on a local store and tusd on its file store,
// both under dir.
func startLocal(ctx context.Context, opt *Options, dir string) (*storeRig, error) {
	r := &storeRig{name: "local"}
	var err error
	if r.mcpblob, err = newMcpblob(opt.Bins["mcpblob"], filepath.Join(dir, "mcpblob"), nil); err != nil {
		return nil, err
	}
	if r.tusd, err = newTusd(opt.Bins["tusd"], filepath.Join(dir, "tusd"), nil); err != nil {
		return nil, err
	}
	return r, r.warmAll(ctx)
}

// startS3 starts one SeaweedFS node with a bucket for each server, then
// mcpblob and tusd on their S3 stores.
func startS3(ctx context.Context, opt *Options, dir string) (*storeRig, error) {
	r := &storeRig{name: "S3"}
	w, creds, client, err := scale.StartS3Node(ctx, opt.Bins["weed"], filepath.Join(dir, "weed"), "p11-mcpblob")
	if err != nil {
		return nil, err
	}
	r.weed, r.s3 = w, client
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	err = weed.Writable(wctx, client, "p11-tusd")
	if err == nil {
		err = weed.Writable(wctx, client, floorBucket)
	}
	cancel()
	if err != nil {
		r.stop()
		return nil, err
	}
	endpoint := "http://" + w.Addr.HTTP
	if r.mcpblob, err = newMcpblob(opt.Bins["mcpblob"], filepath.Join(dir, "mcpblob"), &s3Bucket{endpoint, "p11-mcpblob", creds}); err != nil {
		r.stop()
		return nil, err
	}
	if r.tusd, err = newTusd(opt.Bins["tusd"], filepath.Join(dir, "tusd"), &s3Bucket{endpoint, "p11-tusd", creds}); err != nil {
		r.stop()
		return nil, err
	}
	return r, r.warmAll(ctx)
}

func (r *storeRig) warmAll(ctx context.Context) error {
	for _, s := range []*server{r.mcpblob, r.tusd} {
		if err := s.warm(ctx); err != nil {
			r.stop()
			return err
		}
	}
	return nil
}

// putBlob is PUT /v1/blobs/{key} of raw to mcpblob.
func putBlob(ctx context.Context, s *server, key string, raw []byte) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, s.base()+"/v1/blobs/"+key, bytes.NewReader(raw))
	req.ContentLength = int64(len(raw))
	req.Header.Set("Content-Type", "application/octet-stream")
	_, err := s.tus.do(req, http.StatusCreated)
	return err
}

// blobSHA256 is the x-mcp-sha256 of mcpblob's blob key (HEAD /v1/blobs).
func blobSHA256(ctx context.Context, s *server, key string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodHead, s.base()+"/v1/blobs/"+key, nil)
	resp, err := s.tus.do(req, http.StatusOK)
	if err != nil {
		return "", fmt.Errorf("HEAD /v1/blobs/%s: %w", key, err)
	}
	return resp.Header.Get("x-mcp-sha256"), nil
}
