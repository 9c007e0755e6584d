package validate

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The load balancer configurations are checked by the proxies themselves:
// `nginx -t` and `haproxy -c`. Both resolve the upstream server names as
// they parse, and mcpblob1..3 exist only on the compose network, so the
// check runs on a copy in a temporary folder whose `mcpblobN:8080`
// addresses are rewritten to 127.0.0.1:8080 (as loadtest/cluster does for its
// loopback run). Nothing listens there, and nothing needs to: neither
// check connects to a server or binds a listener. Any warning fails too.

// nodeAddr matches a node address of the compose topology.
var nodeAddr = regexp.MustCompile(`\bmcpblob\d+:8080\b`)

// localNodes rewrites every node address of conf to 127.0.0.1:8080; want
// is how many there must be, so that a change of the files' shape fails
// here instead of leaving a name unresolved.
func localNodes(conf string, want int) (string, error) {
	if n := len(nodeAddr.FindAllString(conf, -1)); n != want {
		return "", fmt.Errorf("%d node addresses mcpblobN:8080 to rewrite, want %d", n, want)
	}
	return nodeAddr.ReplaceAllString(conf, "127.0.0.1:8080"), nil
}

// proxies are the load balancer configurations under deploy/, each with
// its check and the Debian package of its binary.
var proxies = map[string]struct {
	conf, pkg string
	check     func(bin, dir, conf string) error
}{
	"nginx":   {"nginx.conf", "nginx-light", nginxCheck},
	"haproxy": {"haproxy.cfg", "haproxy", haproxyCheck},
}

// proxyTool finds a proxy binary on PATH or in /usr/sbin (Debian's place,
// often not on a user's PATH).
func proxyTool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p := filepath.Join("/usr/sbin", name); fileExists(p) {
		return p
	}
	t.Fatalf("%s not found: `make tools-apt-test` installs it (Debian package %s)", name, proxies[name].pkg)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// nginxCheck runs `nginx -t` on site, an http-context file such as
// deploy/nginx.conf, included from a main context that keeps the pid,
// logs and temporary files in dir.
func nginxCheck(nginx, dir, site string) error {
	site, err := localNodes(site, 9)
	if err != nil {
		return err
	}
	accessLog := regexp.MustCompile(`(?m)^(\s*access_log\s+)\S+`)
	if len(accessLog.FindAllString(site, -1)) != 1 {
		return fmt.Errorf("want one access_log line to move into %s", dir)
	}
	site = accessLog.ReplaceAllString(site, "${1}"+filepath.Join(dir, "access.log"))
	sitePath := filepath.Join(dir, "site.conf")
	if err := os.WriteFile(sitePath, []byte(site), 0o644); err != nil {
		return err
	}
	var main strings.Builder
	fmt.Fprintf(&main, "pid %s;\n", filepath.Join(dir, "nginx.pid"))
	fmt.Fprintf(&main, "error_log %s warn;\n", filepath.Join(dir, "error.log"))
	main.WriteString("events {}\nhttp {\n")
	for _, tmp := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&main, "  %s_temp_path %s;\n", tmp, filepath.Join(dir, tmp))
	}
	fmt.Fprintf(&main, "  include %s;\n}\n", sitePath)
	mainPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(mainPath, []byte(main.String()), 0o644); err != nil {
		return err
	}
	out, err := exec.Command(nginx, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", mainPath, "-t").CombinedOutput()
	if err == nil && strings.Contains(string(out), "[warn]") {
		err = errors.New("printed warnings")
	}
	if err != nil {
		return fmt.Errorf("nginx -t: %w\n%s", err, out)
	}
	return nil
}

// haproxyCheck runs `haproxy -c -dW` (warnings fail) on a copy of conf.
func haproxyCheck(haproxy, dir, conf string) error {
	conf, err := localNodes(conf, 9)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return err
	}
	if out, err := exec.Command(haproxy, "-c", "-dW", "-f", path).CombinedOutput(); err != nil {
		return fmt.Errorf("haproxy -c: %w\n%s", err, out)
	}
	return nil
}

// proxyConfs reads every proxy's configuration, by proxy name.
func proxyConfs(t *testing.T) map[string]string {
	t.Helper()
	confs := map[string]string{}
	for name, p := range proxies {
		data, err := os.ReadFile(filepath.Join(deployDir, p.conf))
		if err != nil {
			t.Fatal(err)
		}
		confs[name] = string(data)
	}
	return confs
}

// TestProxyConfigs runs each proxy's own check on its configuration.
func TestProxyConfigs(t *testing.T) {
	for name, conf := range proxyConfs(t) {
		t.Run(name, func(t *testing.T) {
			if err := proxies[name].check(proxyTool(t, name), t.TempDir(), conf); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestProxyConfigsReject feeds both checks broken copies.
func TestProxyConfigsReject(t *testing.T) {
	confs := proxyConfs(t)
	for _, c := range []struct {
		name, proxy, old, new, want string
	}{
		{"nginx misspelt directive", "nginx", "proxy_buffering off;", "proxy_bufferring off;", "unknown directive"},
		{"nginx undefined upstream", "nginx", "proxy_pass http://mcpblob_link;", "proxy_pass http://mcpblob_links;", "host not found in upstream"},
		{"nginx node not rewritten", "nginx", "server mcpblob3:8080 max_fails=1 fail_timeout=5s;\n    keepalive 64;\n    keepalive_timeout 60s;\n}\n\nupstream mcpblob_session",
			"server mcpblob-3:8080 max_fails=1 fail_timeout=5s;\n    keepalive 64;\n    keepalive_timeout 60s;\n}\n\nupstream mcpblob_session", "node addresses"},
		{"nginx warning", "nginx", "        proxy_pass http://mcpblob;\n    }\n}\n",
			"        proxy_pass http://mcpblob;\n    }\n}\nserver {\n    listen 8080;\n    server_name _;\n}\n", "conflicting server name"},
		{"haproxy misspelt keyword", "haproxy", "option forwardfor", "option forwardfour", "forwardfour"},
		{"haproxy unknown backend", "haproxy", "use_backend mcpblob_link if", "use_backend mcpblob_links if", "mcpblob_links"},
		{"haproxy warning", "haproxy", "    timeout connect 2s\n", "", "zero-warning"},
	} {
		t.Run(c.name, func(t *testing.T) {
			broken := replaceOnce(t, confs[c.proxy], c.old, c.new)
			wantRejected(t, proxies[c.proxy].check(proxyTool(t, c.proxy), t.TempDir(), broken), c.want)
		})
	}
}
