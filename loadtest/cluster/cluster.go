package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mcpblob/mcpblob/core/token"
	"github.com/mcpblob/mcpblob/loadtest/cluster/quotacheck"
	"github.com/mcpblob/mcpblob/loadtest/rig/proc"
)

// nodeCount is fixed by deploy/nginx.conf, which names three nodes.
const nodeCount = 3

// Every node runs with these (cmd/mcpblob --shutdown-delay, --grace-period):
// on SIGTERM /readyz answers 503 for shutdownDelay, then the listener closes
// and requests in flight get gracePeriod to finish.
const (
	shutdownDelay = 2 * time.Second
	gracePeriod   = 20 * time.Second
)

// node is one mcpblob process.
type node struct {
	name string // mcpblob1…
	addr string // 127.0.0.1:port
	bin  string
	args []string
	env  []string
	proc *proc.Proc
	// killedPID is the pid SIGKILLed under load (the node is restarted later).
	killedPID int
	oldLogs   string // logs of the node's earlier processes
}

func (n *node) url() string { return "http://" + n.addr }

// start starts (or restarts) the node and waits until /readyz answers.
func (n *node) start() error {
	if n.proc != nil {
		n.oldLogs += n.proc.Logs()
	}
	p, err := proc.Start(n.name, n.url()+"/readyz", n.bin, n.args, n.env...)
	if err != nil {
		return err
	}
	n.proc = p
	return nil
}

// cluster is everything the check started.
type cluster struct {
	work      string
	weed      *store // SeaweedFS: master, volume servers, filer, a gateway per node
	nginx     *proc.Proc
	nginxBin  string
	lb        string // http://127.0.0.1:port of nginx
	accessLog string // nginx's access log, format "mcpblob" of deploy/nginx.conf
	nodes     []*node
	apiKey    string // bearer key every request carries (nodes run with --auth-keys)
	http      *http.Client
}

// startCluster builds mcpblob and starts SeaweedFS, the nodes (concurrently,
// as an orchestrator would) and nginx. The returned cluster is never nil, so
// its stop also cleans up after a failed start.
func startCluster(ctx context.Context, c config, work string) (*cluster, error) {
	cl := &cluster{work: work, nginxBin: c.nginx}
	bin := filepath.Join(work, "mcpblob")
	logf("building mcpblob")
	if err := proc.GoBuild(c.repo, bin, "./cmd/mcpblob"); err != nil {
		return cl, err
	}

	// SeaweedFS: a master, three volume servers, a filer and one S3
	// gateway per node, all under the work folder.
	user, secret := "mcpblob-cluster", rand.Text()
	var err error
	cl.weed, err = startStore(ctx, c.weed, filepath.Join(work, "weed"), user, secret)
	if err != nil {
		return cl, err
	}

	// Shared secrets: one token key (as docs/operations.md asks of a
	// cluster) and one API key, in files every node reads.
	keys := filepath.Join(work, "token-keys")
	if err := os.WriteFile(keys, []byte(token.FormatKey(token.NewKey("cluster1"))), 0o600); err != nil {
		return cl, err
	}
	cl.apiKey = "mcpb_" + rand.Text()
	digest := sha256.Sum256([]byte(cl.apiKey))
	authKeys := filepath.Join(work, "api-keys")
	if err := os.WriteFile(authKeys, []byte(hex.EncodeToString(digest[:])+" cluster\n"), 0o600); err != nil {
		return cl, err
	}
	cl.http = newHTTPClient(cl.apiKey)

	lbAddr, err := proc.FreeAddr()
	if err != nil {
		return cl, err
	}
	cl.lb = "http://" + lbAddr
	for i := range nodeCount {
		addr, err := proc.FreeAddr()
		if err != nil {
			return cl, err
		}
		cl.nodes = append(cl.nodes, &node{
			name: fmt.Sprintf("mcpblob%d", i+1),
			addr: addr,
			bin:  bin,
			args: []string{"serve", "--listen", addr,
				"--s3-endpoint", "http://" + cl.weed.gateways[i].Addr.HTTP, "--s3-bucket", bucket,
				"--public-url", cl.lb, "--token-keys", keys, "--auth-keys", authKeys,
				"--shutdown-delay", shutdownDelay.String(), "--grace-period", gracePeriod.String()},
			env: []string{"MCPBLOB_S3_ACCESS_KEY=" + user, "MCPBLOB_S3_SECRET_KEY=" + secret},
		})
	}
	var wg sync.WaitGroup
	errs := make([]error, nodeCount)
	for i, n := range cl.nodes {
		wg.Go(func() { errs[i] = n.start() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return cl, err
	}
	if err := cl.startNginx(filepath.Join(c.repo, "deploy", "nginx.conf"), lbAddr); err != nil {
		return cl, err
	}
	return cl, ctx.Err()
}

// startNginx runs deploy/nginx.conf itself on loopback: the node names, the
// listen port and the access log path are rewritten, and the file is
// included from a main context that keeps every path in the work folder.
func (cl *cluster) startNginx(template, addr string) error {
	raw, err := os.ReadFile(template)
	if err != nil {
		return err
	}
	prefix := filepath.Join(cl.work, "nginx")
	if err := os.MkdirAll(filepath.Join(prefix, "logs"), 0o755); err != nil {
		return err
	}
	cl.accessLog = filepath.Join(prefix, "logs", "access.log")
	site, err := rewriteNginx(string(raw), cl.nodes, addr, cl.accessLog)
	if err != nil {
		return fmt.Errorf("%s: %w", template, err)
	}
	sitePath := filepath.Join(prefix, "mcpblob.conf")
	if err := os.WriteFile(sitePath, []byte(site), 0o644); err != nil {
		return err
	}
	main := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
error_log %[1]s/logs/error.log warn;
pid %[1]s/nginx.pid;
events { worker_connections 2048; }
http {
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  include %[2]s;
}
`, prefix, sitePath)
	confPath := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(main), 0o644); err != nil {
		return err
	}
	args := []string{"-p", prefix, "-e", filepath.Join(prefix, "logs", "error.log"), "-c", confPath}
	if out, err := exec.Command(cl.nginxBin, append(args, "-t")...).CombinedOutput(); err != nil {
		return fmt.Errorf("nginx -t: %w\n%s", err, out)
	}
	p, err := proc.Start("nginx", cl.lb+"/healthz", cl.nginxBin, args)
	if err != nil {
		return err
	}
	cl.nginx = p
	return nil
}

var (
	reUpstream  = regexp.MustCompile(`server mcpblob(\d+):8080`)
	reListen    = regexp.MustCompile(`(?m)^(\s*listen)\s+8080;`)
	reAccessLog = regexp.MustCompile(`access_log\s+\S+\s+mcpblob;`)
)

// rewriteNginx points deploy/nginx.conf at the loopback nodes, port and log.
func rewriteNginx(conf string, nodes []*node, listen, accessLog string) (string, error) {
	bad := ""
	conf = reUpstream.ReplaceAllStringFunc(conf, func(m string) string {
		var i int
		fmt.Sscanf(reUpstream.FindStringSubmatch(m)[1], "%d", &i)
		if i < 1 || i > len(nodes) {
			bad = m
			return m
		}
		return "server " + nodes[i-1].addr
	})
	switch {
	case bad != "":
		return "", fmt.Errorf("names a node this check does not run: %q", bad)
	case strings.Contains(conf, "mcpblob1:8080") || !strings.Contains(conf, "server "+nodes[0].addr):
		return "", errors.New("no `server mcpblobN:8080` upstream lines to rewrite")
	case len(reListen.FindAllString(conf, -1)) != 1:
		return "", errors.New("want exactly one `listen 8080;` line")
	case len(reAccessLog.FindAllString(conf, -1)) != 1:
		return "", errors.New("want exactly one `access_log … mcpblob;` line")
	}
	conf = reListen.ReplaceAllString(conf, "${1} "+listen+";")
	conf = reAccessLog.ReplaceAllString(conf, "access_log "+accessLog+" mcpblob;")
	return conf, nil
}

// stop stops nginx, the nodes and SeaweedFS, each by its PID.
func (cl *cluster) stop() {
	cl.nginx.Stop()
	var wg sync.WaitGroup
	for _, n := range cl.nodes {
		wg.Go(n.proc.Stop)
	}
	wg.Wait()
	cl.weed.stop()
}

// errorLines are the node's log lines at level ERROR, over all its processes.
func errorLines(n *node) []string {
	logs := n.oldLogs
	if n.proc != nil {
		logs += n.proc.Logs()
	}
	var out []string
	for line := range strings.Lines(logs) {
		if strings.Contains(line, "level=ERROR") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// nodeByAddr returns the node listening on addr, or nil.
func (cl *cluster) nodeByAddr(addr string) *node {
	for _, n := range cl.nodes {
		if n.addr == addr {
			return n
		}
	}
	return nil
}

// name is the node name for an upstream address in nginx's log.
func (cl *cluster) name(addr string) string {
	if n := cl.nodeByAddr(addr); n != nil {
		return n.name
	}
	return addr
}

// names renders the nodes nginx tried for one request, in order.
func (cl *cluster) names(addrs []string) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = cl.name(a)
	}
	return strings.Join(s, " → ")
}

func (cl *cluster) describe() []string {
	out := cl.weed.describe()
	for i, n := range cl.nodes {
		out = append(out, fmt.Sprintf("%s on %s (pid %d): S3 store through gateway %d (bucket %s), shared token key and API key file, --public-url %s, --shutdown-delay %s, --grace-period %s",
			n.name, n.addr, n.proc.PID(), i+1, bucket, cl.lb, shutdownDelay, gracePeriod))
	}
	out = append(out, fmt.Sprintf("nginx %s on %s: deploy/nginx.conf with the node names, port and log path rewritten", nginxVersion(cl.nginxBin), strings.TrimPrefix(cl.lb, "http://")))
	return out
}

func findNginx(bin string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("nginx not installed (make tools-apt)")
}

func nginxVersion(bin string) string {
	out, err := exec.Command(bin, "-v").CombinedOutput()
	if err != nil {
		return "unknown"
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "nginx version: nginx/")
}

// quotaSetup is what package quotacheck takes: the build, one S3 gateway
// per node, the credentials and the token keys.
func (cl *cluster) quotaSetup() quotacheck.Setup {
	s := quotacheck.Setup{Bin: cl.nodes[0].bin, Env: cl.nodes[0].env, TokenKeys: filepath.Join(cl.work, "token-keys"), Work: cl.work}
	for _, g := range cl.weed.gateways {
		s.Endpoints = append(s.Endpoints, "http://"+g.Addr.HTTP)
	}
	return s
}
