// Package weed starts SeaweedFS (the pinned `weed` binary that `make tools`
// builds into .tools/bin) for the benchmarks and checks of the bench
// module: a single node ([StartServer]: master, volume server, filer and S3
// gateway in one process) or the services of a cluster one by one
// ([StartMaster], [StartVolume], [StartFiler], [StartS3]).
//
// Every service binds 127.0.0.1 only (-ip and -ip.bind) on free ports, its
// gRPC port included; metrics, debug, Iceberg and Lance listeners are off,
// and so is the master's telemetry. Each runs in its own folder (its data,
// and the working directory, so no master.toml or filer.toml of the
// caller's folder applies) and is a [proc.Proc] started and stopped by PID
// (SIGTERM, then SIGKILL after [StopGrace]: a filer often takes more than
// 10 s to act on SIGTERM). The S3 credentials reach a gateway through its
// environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, which SeaweedFS
// makes its admin identity); every other WEED_ and AWS_ variable of the
// caller's environment is dropped.
package weed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
	"github.com/mcpblob/mcpblob/loadtest/rig/sysinfo"
)

// Module is SeaweedFS's Go module, whose version [Version] reports.
const Module = "github.com/seaweedfs/seaweedfs"

// StopGrace is how long Stop waits after SIGTERM before SIGKILL.
const StopGrace = 2 * time.Second

// loopback is the only address a service binds.
const loopback = "127.0.0.1"

// Addr is one service's listeners: host:port of its HTTP and gRPC ports.
type Addr struct{ HTTP, GRPC string }

// Server is the address form SeaweedFS's flags take to name both ports of
// a peer (-master, -filer): host:httpPort.grpcPort.
func (a Addr) Server() string {
	_, port, _ := net.SplitHostPort(a.GRPC)
	return a.HTTP + "." + port
}

// Service is one running SeaweedFS process.
type Service struct {
	*proc.Proc
	Addr    Addr
	Dir     string   // its folder: data and working directory
	sockets []string // Unix sockets SeaweedFS puts in /tmp itself
}

// Stop stops the process (SIGTERM, then SIGKILL after StopGrace) and
// writes what it logged to weed.log in its folder.
func (s *Service) Stop() {
	if s != nil {
		s.StopWithin(StopGrace)
		os.WriteFile(filepath.Join(s.Dir, "weed.log"), []byte(s.Logs()), 0o644)
		for _, sock := range s.sockets {
			os.Remove(sock)
		}
	}
}

// Version is the SeaweedFS module version bin was built from.
func Version(bin string) string { return sysinfo.ModuleVersion(bin, Module) }

// S3Options are a gateway's credentials.
type S3Options struct {
	AccessKey, SecretKey string
}

// StartServer starts a single node (`weed server -s3`) in dir with its
// volumes in dir/data, and returns it once its S3 gateway and filer
// answer and its master lists the volume server. Addr.HTTP is the S3 API.
func StartServer(bin, dir string, creds S3Options) (*Service, error) {
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	return retry(func() (*Service, error) {
		p, err := freePorts(8)
		if err != nil {
			return nil, err
		}
		master, volume, filer, s3 := Addr{p[0], p[1]}, Addr{p[2], p[3]}, Addr{p[4], p[5]}, Addr{p[6], p[7]}
		args := []string{"server", "-dir=" + filepath.Join(dir, "data"),
			"-metricsPort=0", "-debug=false",
			"-master.port=" + port(master.HTTP), "-master.port.grpc=" + port(master.GRPC),
			"-master.telemetry=false", "-master.volumeSizeLimitMB=64",
			"-volume.port=" + port(volume.HTTP), "-volume.port.grpc=" + port(volume.GRPC),
			"-volume.max=1000", "-volume.preStopSeconds=0",
			"-filer.port=" + port(filer.HTTP), "-filer.port.grpc=" + port(filer.GRPC),
			"-filer.localSocket=" + filepath.Join(dir, "filer.sock"),
			"-s3", "-s3.port=" + port(s3.HTTP), "-s3.port.grpc=" + port(s3.GRPC),
			"-s3.port.iceberg=0", "-s3.port.lance=0",
			"-s3.localSocket=" + filepath.Join(dir, "s3.sock")}
		s, err := start("weed", dir, bin, args, s3, "http://"+s3.HTTP+"/healthz", creds.env()...)
		if err != nil {
			return nil, err
		}
		// `weed server` serves each gRPC service on a Unix socket too,
		// named by its port, and leaves them behind.
		for name, a := range map[string]Addr{"master": master, "volume": volume, "filer": filer, "s3": s3} {
			s.sockets = append(s.sockets, "/tmp/seaweedfs-"+name+"-grpc-"+port(a.GRPC)+".sock")
		}
		if err := waitFor(s, func() bool {
			return answers("http://"+filer.HTTP+"/healthz", "") && answers("http://"+master.HTTP+"/dir/status", `"`+volume.HTTP+`"`)
		}); err != nil {
			s.Stop()
			return nil, err
		}
		return s, nil
	})
}

// MasterOptions configure a cluster's master.
type MasterOptions struct {
	// Replication is the default replica placement of new volumes
	// (-defaultReplication), e.g. "001": two copies on two servers of a rack.
	Replication string
	// VolumeSizeLimitMB bounds each volume (small: many volumes to spread).
	VolumeSizeLimitMB int
}

// StartMaster starts a master with its metadata in dir and returns it once
// it is its own raft leader (/readyz answers 200).
func StartMaster(bin, dir string, o MasterOptions) (*Service, error) {
	return retry(func() (*Service, error) {
		p, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		a := Addr{p[0], p[1]}
		args := []string{"master", "-port=" + port(a.HTTP), "-port.grpc=" + port(a.GRPC),
			"-mdir=" + dir, "-telemetry=false", "-metricsPort=0"}
		if o.Replication != "" {
			args = append(args, "-defaultReplication="+o.Replication)
		}
		if o.VolumeSizeLimitMB > 0 {
			args = append(args, "-volumeSizeLimitMB="+strconv.Itoa(o.VolumeSizeLimitMB))
		}
		return start("weed master", dir, bin, args, a, "http://"+a.HTTP+"/readyz")
	})
}

// StartVolume starts a volume server on dir for master and returns it once
// the master lists it. Its HTTP port is fixed when addr is set (a restart
// keeps the server's identity, as a replaced disk in the same machine).
func StartVolume(bin, dir string, master *Service, addr *Addr) (*Service, error) {
	return retry(func() (*Service, error) {
		a := Addr{}
		if addr != nil {
			a = *addr
		} else {
			p, err := freePorts(2)
			if err != nil {
				return nil, err
			}
			a = Addr{p[0], p[1]}
		}
		args := []string{"volume", "-port=" + port(a.HTTP), "-port.grpc=" + port(a.GRPC),
			"-dir=" + dir, "-master=" + master.Addr.Server(), "-max=100",
			"-preStopSeconds=0", "-metricsPort=0"}
		s, err := start("weed volume", dir, bin, args, a, "http://"+a.HTTP+"/healthz")
		if err != nil {
			return nil, err
		}
		if err := waitFor(s, func() bool { return answers("http://"+master.Addr.HTTP+"/dir/status", `"`+a.HTTP+`"`) }); err != nil {
			s.Stop()
			return nil, err
		}
		return s, nil
	})
}

// StartFiler starts a filer for master, its metadata store (leveldb) in
// dir, and returns it once /healthz answers 200.
func StartFiler(bin, dir string, master *Service) (*Service, error) {
	return retry(func() (*Service, error) {
		p, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		a := Addr{p[0], p[1]}
		args := []string{"filer", "-port=" + port(a.HTTP), "-port.grpc=" + port(a.GRPC),
			"-master=" + master.Addr.Server(), "-defaultStoreDir=" + dir,
			"-localSocket=" + filepath.Join(dir, "filer.sock"), "-metricsPort=0"}
		return start("weed filer", dir, bin, args, a, "http://"+a.HTTP+"/healthz")
	})
}

// StartS3 starts an S3 gateway on filer with the credentials of o and
// returns it once it listens (Addr.HTTP is the S3 API).
func StartS3(bin, dir string, filer *Service, o S3Options) (*Service, error) {
	return retry(func() (*Service, error) {
		p, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		a := Addr{p[0], p[1]}
		args := []string{"s3", "-port=" + port(a.HTTP), "-port.grpc=" + port(a.GRPC),
			"-port.iceberg=0", "-port.lance=0", "-filer=" + filer.Addr.Server(),
			"-localSocket=" + filepath.Join(dir, "s3.sock"), "-metricsPort=0"}
		return start("weed s3", dir, bin, args, a, "http://"+a.HTTP+"/healthz", o.env()...)
	})
}

func (o S3Options) env() []string {
	if o.AccessKey == "" {
		return nil
	}
	return []string{"AWS_ACCESS_KEY_ID=" + o.AccessKey, "AWS_SECRET_ACCESS_KEY=" + o.SecretKey}
}

// start runs `weed -logtostderr args…` in dir and waits until readyURL
// answers 200.
func start(name, dir, bin string, args []string, a Addr, readyURL string, env ...string) (*Service, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	bin, err := filepath.Abs(bin) // the command runs in dir
	if err != nil {
		return nil, err
	}
	// -logtostderr: glog would write files to $TMPDIR.
	cmd := exec.Command(bin, append([]string{"-logtostderr"}, append(args, "-ip="+loopback, "-ip.bind="+loopback)...)...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	p, err := proc.StartCmd(name, readyURL, cmd)
	if err != nil {
		return nil, err
	}
	return &Service{Proc: p, Addr: a, Dir: dir}, nil
}

// cleanEnv is this process's environment without the variables that would
// change a SeaweedFS service (WEED_*, AWS_*, SENTRY_*).
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "WEED_") || strings.HasPrefix(name, "AWS_") || strings.HasPrefix(name, "SENTRY_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// retry runs start up to three times while it fails for a port another
// process took between the probe and the bind.
func retry(start func() (*Service, error)) (*Service, error) {
	var errs []error
	for range 3 {
		s, err := start()
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// waitFor polls ready for up to 30 s while s runs.
func waitFor(s *Service, ready func() bool) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if s.Exited() {
			return fmt.Errorf("weed: %s exited:\n%s", s.Name, s.Logs())
		}
		if ready() {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("weed: %s not ready after 30s:\n%s", s.Name, s.Logs())
}

// freePorts returns n loopback host:ports that were free just now,
// distinct because they are held open together while picked.
func freePorts(n int) ([]string, error) {
	var out []string
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", loopback+":0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

func port(hostport string) string {
	_, p, _ := net.SplitHostPort(hostport)
	return p
}

// answers reports whether a GET of url is a 200 whose body holds want.
func answers(url, want string) bool {
	client := http.Client{Timeout: time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return err == nil && resp.StatusCode == http.StatusOK && strings.Contains(string(body), want)
}

// Client is a minio-go client of the S3 gateway at addr (plain HTTP).
func Client(addr string, creds S3Options) (*minio.Client, error) {
	return minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(creds.AccessKey, creds.SecretKey, "")})
}

// Writable creates bucket through c unless it exists, then writes and
// deletes one object with If-None-Match: * (the claims' write), retrying
// every 100 ms until both succeed or ctx ends. SeaweedFS takes a lock of
// the filer for such a write, and answers it only once the filer has
// joined the master's lock ring (some 10 s after it starts) and the master
// has grown the bucket's first volumes: a gateway that answers it is ready
// for mcpblob.
func Writable(ctx context.Context, c *minio.Client, bucket string) error {
	err := retryUntil(ctx, func() error {
		ok, err := c.BucketExists(ctx, bucket)
		if err == nil && !ok {
			err = c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{})
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("weed: create bucket %s: %w", bucket, err)
	}
	key := ".ready-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	err = retryUntil(ctx, func() error {
		opts := minio.PutObjectOptions{}
		opts.SetMatchETagExcept("*")
		_, err := c.PutObject(ctx, bucket, key, strings.NewReader("ready"), 5, opts)
		var resp minio.ErrorResponse
		if errors.As(err, &resp) && resp.StatusCode == http.StatusPreconditionFailed {
			return nil // an earlier attempt got through; its answer did not
		}
		return err
	})
	if err == nil {
		err = c.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{})
	}
	if err != nil {
		return fmt.Errorf("weed: %s: no conditional PUT answered: %w", c.EndpointURL().Host, err)
	}
	return nil
}

// retryUntil calls f every 100 ms until it succeeds or ctx ends.
func retryUntil(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
