package validate

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	composetypes "github.com/compose-spec/compose-go/v2/types"
)

// The SeaweedFS wiring of compose.yaml (checkStore): what the loader
// cannot see, since every name in it is a plain string to Compose.

// defaultS3Port is the port `weed s3` listens on without -port.
const defaultS3Port = "8333"

// weedRole is what a SeaweedFS service runs ("master", "volume", "filer",
// "s3"), from the first word of its command; "" for other services.
func weedRole(s composetypes.ServiceConfig) string {
	if len(s.Command) == 0 || !strings.Contains(s.Image, "seaweedfs") {
		return ""
	}
	return s.Command[0]
}

// weedFlag returns the value of -name=value (or --name=value) in cmd.
func weedFlag(cmd []string, name string) (string, bool) {
	for _, a := range cmd {
		for _, p := range []string{"-" + name + "=", "--" + name + "="} {
			if v, ok := strings.CutPrefix(a, p); ok {
				return v, true
			}
		}
	}
	return "", false
}

// env returns variable k of service s ("" when unset).
func env(s composetypes.ServiceConfig, k string) string {
	if v := s.Environment[k]; v != nil {
		return *v
	}
	return ""
}

// networks are the networks service s is on ("default" when it names none).
func networks(s composetypes.ServiceConfig) []string {
	if len(s.Networks) == 0 {
		return []string{"default"}
	}
	var ns []string
	for n := range s.Networks {
		ns = append(ns, n)
	}
	return ns
}

func shareNetwork(a, b composetypes.ServiceConfig) bool {
	return slices.ContainsFunc(networks(a), func(n string) bool { return slices.Contains(networks(b), n) })
}

// peer resolves a SeaweedFS peer flag (-master=host:port, -filer=host:port)
// of s to the service it names, which must run role.
func peer(p *composetypes.Project, s composetypes.ServiceConfig, flag, role string) error {
	v, ok := weedFlag(s.Command, flag)
	if !ok {
		return fmt.Errorf("service %s: no -%s", s.Name, flag)
	}
	host, _, _ := strings.Cut(v, ":")
	target, ok := p.Services[host]
	switch {
	case !ok:
		return fmt.Errorf("service %s: -%s=%s names no service", s.Name, flag, v)
	case weedRole(target) != role:
		return fmt.Errorf("service %s: -%s=%s names service %s, which runs %q, not %q", s.Name, flag, v, host, weedRole(target), role)
	case !shareNetwork(s, target):
		return fmt.Errorf("service %s: -%s=%s, but the two share no network", s.Name, flag, v)
	}
	return nil
}

// checkStore checks the SeaweedFS wiring of compose.yaml:
//   - every mcpblob node's MCPBLOB_S3_ENDPOINT is a service running `weed
//     s3` on that port, on a network the node is on, whose credentials
//     (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) are the node's;
//   - the nodes start only after a ready step completed (service_completed_
//     successfully) that waits on the same endpoint, bucket and keys, after
//     the gateway is healthy, running the script it mounts;
//   - the gateway's -filer is a filer, the filer's and every volume
//     server's -master the master; every SeaweedFS service binds with
//     -ip.bind, and its -ip, when set, is its own service name (the address
//     its peers are told);
//   - the master's -defaultReplication keeps at least two copies on one
//     rack and the volume servers are enough to hold them;
//   - no node shares a network with the master, a volume server or the
//     filer, which take requests without credentials;
//   - the SeaweedFS image has a pinned release tag;
//   - every bind-mounted file exists, and every service waited for as
//     healthy has a health check.
func checkStore(p *composetypes.Project) error {
	var errs []error
	for _, s := range p.Services {
		if s.Environment["MCPBLOB_S3_ENDPOINT"] != nil {
			errs = append(errs, checkNode(p, s))
		}
		switch role := weedRole(s); role {
		case "master", "volume", "filer", "s3":
			errs = append(errs, checkWeedService(p, s, role))
		}
		errs = append(errs, checkBindSources(s), checkHealthDeps(p, s))
	}
	errs = append(errs, checkReplication(p))
	return uniqueErrors(errs)
}

// uniqueErrors joins errs, each message once (a fault of a shared service
// is found once per node).
func uniqueErrors(errs []error) error {
	var lines []string
	for _, e := range errs {
		if e != nil {
			lines = append(lines, strings.Split(e.Error(), "\n")...)
		}
	}
	slices.Sort(lines)
	lines = slices.Compact(lines)
	if len(lines) == 0 {
		return nil
	}
	return errors.New(strings.Join(lines, "\n"))
}

// checkNode: the node's gateway, its credentials, its ready step, and no
// network shared with SeaweedFS's unauthenticated services.
func checkNode(p *composetypes.Project, node composetypes.ServiceConfig) error {
	endpoint := env(node, "MCPBLOB_S3_ENDPOINT")
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("service %s: MCPBLOB_S3_ENDPOINT %q is not a URL", node.Name, endpoint)
	}
	gw, ok := p.Services[u.Hostname()]
	if !ok || weedRole(gw) != "s3" {
		return fmt.Errorf("service %s: MCPBLOB_S3_ENDPOINT %s names no service running `weed s3`", node.Name, endpoint)
	}
	var errs []error
	if port, ok := weedFlag(gw.Command, "port"); !ok && u.Port() != defaultS3Port || ok && u.Port() != port {
		errs = append(errs, fmt.Errorf("service %s: MCPBLOB_S3_ENDPOINT %s, but %s listens on -port=%s", node.Name, endpoint, gw.Name, port))
	}
	if !shareNetwork(node, gw) {
		errs = append(errs, fmt.Errorf("service %s shares no network with its S3 gateway %s", node.Name, gw.Name))
	}
	for nodeVar, gwVar := range map[string]string{"MCPBLOB_S3_ACCESS_KEY": "AWS_ACCESS_KEY_ID", "MCPBLOB_S3_SECRET_KEY": "AWS_SECRET_ACCESS_KEY"} {
		if v := env(node, nodeVar); v == "" || v != env(gw, gwVar) {
			errs = append(errs, fmt.Errorf("service %s: %s is not the %s of its gateway %s", node.Name, nodeVar, gwVar, gw.Name))
		}
	}
	for _, other := range p.Services {
		if r := weedRole(other); r != "" && r != "s3" && shareNetwork(node, other) {
			errs = append(errs, fmt.Errorf("service %s shares a network with %s (weed %s), which takes requests without credentials", node.Name, other.Name, r))
		}
	}
	errs = append(errs, checkReadyStep(p, node, gw))
	return errors.Join(errs...)
}

// checkReadyStep: the node waits for a one-shot step on its own endpoint,
// bucket and keys, which waits for the gateway and runs a mounted script.
func checkReadyStep(p *composetypes.Project, node, gw composetypes.ServiceConfig) error {
	var ready *composetypes.ServiceConfig
	for name, dep := range node.DependsOn {
		if dep.Condition == composetypes.ServiceConditionCompletedSuccessfully {
			if s, ok := p.Services[name]; ok && s.Environment["S3_ENDPOINT"] != nil {
				ready = &s
			}
		}
	}
	if ready == nil {
		return fmt.Errorf("service %s does not wait for a ready step (depends_on a service with S3_ENDPOINT, condition %s)",
			node.Name, composetypes.ServiceConditionCompletedSuccessfully)
	}
	var errs []error
	for readyVar, nodeVar := range map[string]string{"S3_ENDPOINT": "MCPBLOB_S3_ENDPOINT", "S3_BUCKET": "MCPBLOB_S3_BUCKET",
		"S3_ACCESS_KEY": "MCPBLOB_S3_ACCESS_KEY", "S3_SECRET_KEY": "MCPBLOB_S3_SECRET_KEY"} {
		if v := env(*ready, readyVar); v == "" || v != env(node, nodeVar) {
			errs = append(errs, fmt.Errorf("service %s: %s is not service %s's %s", ready.Name, readyVar, node.Name, nodeVar))
		}
	}
	if dep, ok := ready.DependsOn[gw.Name]; !ok || dep.Condition != composetypes.ServiceConditionHealthy {
		errs = append(errs, fmt.Errorf("service %s does not wait for %s to be healthy", ready.Name, gw.Name))
	}
	script := ready.Entrypoint[len(ready.Entrypoint)-1:]
	if len(script) == 0 || !slices.ContainsFunc(ready.Volumes, func(v composetypes.ServiceVolumeConfig) bool {
		return v.Type == composetypes.VolumeTypeBind && v.Target == script[0] && v.ReadOnly
	}) {
		errs = append(errs, fmt.Errorf("service %s: its entrypoint %v does not end with a script it mounts read-only", ready.Name, ready.Entrypoint))
	}
	return errors.Join(errs...)
}

// releaseTag is an image tag naming a SeaweedFS release (4.53).
var releaseTag = regexp.MustCompile(`:\d+\.\d+$`)

// checkWeedService: a SeaweedFS service binds explicitly, tells its peers
// its own service name, names existing peers, and runs a pinned release.
func checkWeedService(p *composetypes.Project, s composetypes.ServiceConfig, role string) error {
	var errs []error
	if _, ok := weedFlag(s.Command, "ip.bind"); !ok {
		errs = append(errs, fmt.Errorf("service %s: no -ip.bind", s.Name))
	}
	if ip, ok := weedFlag(s.Command, "ip"); ok && ip != s.Name {
		errs = append(errs, fmt.Errorf("service %s: -ip=%s, want its service name (the address its peers are told)", s.Name, ip))
	}
	switch role {
	case "volume", "filer":
		errs = append(errs, peer(p, s, "master", "master"))
	case "s3":
		errs = append(errs, peer(p, s, "filer", "filer"))
	}
	if !releaseTag.MatchString(s.Image) {
		errs = append(errs, fmt.Errorf("service %s: image %q, want a pinned release tag (the one you tested)", s.Name, s.Image))
	}
	return errors.Join(errs...)
}

// checkReplication: the master keeps at least two copies of every volume,
// on one rack (xyz: x other data centres, y other racks, z other servers),
// and there are enough volume servers for them.
func checkReplication(p *composetypes.Project) error {
	volumes := 0
	var master *composetypes.ServiceConfig
	for _, s := range p.Services {
		switch weedRole(s) {
		case "volume":
			volumes++
		case "master":
			master = &s
		}
	}
	if master == nil {
		return errors.New("no SeaweedFS master")
	}
	r, _ := weedFlag(master.Command, "defaultReplication")
	z, err := strconv.Atoi(strings.TrimPrefix(r, "00"))
	if len(r) != 3 || !strings.HasPrefix(r, "00") || err != nil || z < 1 {
		return fmt.Errorf("service %s: -defaultReplication=%q, want 00z with z ≥ 1: two copies or more on the one rack here", master.Name, r)
	}
	if volumes < z+1 {
		return fmt.Errorf("-defaultReplication=%s keeps %d copies on distinct volume servers, but there are %d", r, z+1, volumes)
	}
	return nil
}

// checkBindSources: every file or folder a service bind-mounts exists.
func checkBindSources(s composetypes.ServiceConfig) error {
	var errs []error
	for _, v := range s.Volumes {
		if v.Type != composetypes.VolumeTypeBind {
			continue
		}
		if _, err := os.Stat(v.Source); err != nil {
			errs = append(errs, fmt.Errorf("service %s mounts %s: %w", s.Name, v.Source, err))
		}
	}
	return errors.Join(errs...)
}

// checkHealthDeps: each service s waits for as healthy has a health check
// (without one, Compose waits for ever).
func checkHealthDeps(p *composetypes.Project, s composetypes.ServiceConfig) error {
	var errs []error
	for name, dep := range s.DependsOn {
		if d, ok := p.Services[name]; ok && dep.Condition == composetypes.ServiceConditionHealthy && (d.HealthCheck == nil || d.HealthCheck.Disable) {
			errs = append(errs, fmt.Errorf("service %s waits for %s to be healthy, which has no health check", s.Name, name))
		}
	}
	return errors.Join(errs...)
}

// TestReadyScript parses deploy/s3-ready.sh with the system's POSIX shell
// (sh -n), and a copy with a loop left open, which must fail.
func TestReadyScript(t *testing.T) {
	path := filepath.Join(deployDir, "s3-ready.sh")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sh", "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("sh -n %s: %v\n%s", path, err, out)
	}
	broken := filepath.Join(t.TempDir(), "s3-ready.sh")
	if err := os.WriteFile(broken, []byte(replaceOnce(t, string(orig), "\tsleep 1\ndone\n", "\tsleep 1\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-n", broken).CombinedOutput()
	if err == nil {
		t.Fatal("sh -n accepts the script with its loop left open")
	}
	t.Logf("rejected: %s", out)
}

// TestComposeStoreRejects breaks the SeaweedFS wiring of a copy of
// deploy/ once per case and expects checkStore to fail.
func TestComposeStoreRejects(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join(deployDir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := loadCompose(deployDir, "compose.yaml"); err != nil || checkStore(p) != nil {
		t.Fatalf("compose.yaml fails before any change: %v", errors.Join(err, checkStore(p)))
	}
	const gwSecret = "AWS_SECRET_ACCESS_KEY: ${S3_SECRET_KEY:?set S3_SECRET_KEY in deploy/.env}"
	for _, c := range []struct{ name, old, new, want string }{
		{"endpoint on another port", "MCPBLOB_S3_ENDPOINT: http://s3:8333", "MCPBLOB_S3_ENDPOINT: http://s3:9000", "listens on -port=8333"},
		{"endpoint names no gateway", "MCPBLOB_S3_ENDPOINT: http://s3:8333", "MCPBLOB_S3_ENDPOINT: http://filer:8888", "names no service running `weed s3`"},
		{"gateway keys differ", gwSecret, "AWS_SECRET_ACCESS_KEY: other", "MCPBLOB_S3_SECRET_KEY is not the AWS_SECRET_ACCESS_KEY"},
		{"node on the store network", "  secrets: [token-keys, api-keys]\n", "  secrets: [token-keys, api-keys]\n  networks: [default, store]\n", "without credentials"},
		{"gateway off the nodes' network", `networks: [store, default]`, `networks: [store]`, "shares no network with its S3 gateway"},
		{"nodes do not wait", "      condition: service_completed_successfully", "      condition: service_started", "does not wait for a ready step"},
		{"ready step on another bucket", "      S3_BUCKET: mcpblob", "      S3_BUCKET: blobs", "S3_BUCKET is not service"},
		{"ready step before the gateway", "      s3:\n        condition: service_healthy", "      s3:\n        condition: service_started", "does not wait for s3 to be healthy"},
		{"script not mounted", "./s3-ready.sh:/s3-ready.sh:ro", "./s3-ready.sh:/ready.sh:ro", "does not end with a script it mounts"},
		{"script missing", "./s3-ready.sh:/s3-ready.sh:ro", "./s3-wait.sh:/s3-ready.sh:ro", "s3-wait.sh"},
		{"gateway on no filer", `"-filer=filer:8888"`, `"-filer=master:9333"`, `runs "master", not "filer"`},
		{"volume server misnamed", `"-ip=volume2"`, `"-ip=volume9"`, "want its service name"},
		{"one copy", "-defaultReplication=001", "-defaultReplication=000", "two copies or more"},
		{"too few volume servers", "-defaultReplication=001", "-defaultReplication=003", "but there are 3"},
		{"no health check", "    healthcheck:\n      <<: *seaweedfs-health\n      test: [\"CMD\", \"curl\", \"-fsS\", \"-o\", \"/dev/null\", \"http://127.0.0.1:8888/healthz\"]\n", "", "filer to be healthy, which has no health check"},
		{"image not pinned", "chrislusf/seaweedfs:4.53}\n  restart", "chrislusf/seaweedfs:latest}\n  restart", "pinned release tag"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, deployDir)
			broken := replaceOnce(t, string(orig), c.old, c.new)
			if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte(broken), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := loadCompose(dir, "compose.yaml")
			if err != nil {
				t.Fatalf("the loader refused the change: %v", err)
			}
			wantRejected(t, checkStore(p), c.want)
		})
	}
}
