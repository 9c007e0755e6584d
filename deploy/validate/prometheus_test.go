package validate

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
)

// prometheus.yml is checked here rather than by promtool: Prometheus' own
// configuration package pulls in the service discovery and remote-write
// code of every cloud it supports (about 70 more modules, and a cold build
// of this package goes from under a minute to over two), and Debian's
// prometheus package, the other source of promtool, installs and starts a
// daemon. So the file is decoded strictly into the part of Prometheus'
// configuration it uses (a field this struct lacks fails, which is also
// how Prometheus reads it: go.yaml.in/yaml/v2's UnmarshalStrict) and
// checked the way Prometheus' loader checks those fields. The rule files
// go through Prometheus' own parser (model/rulefmt), which is light.

var promDir = filepath.Join(repo, "deploy", "prometheus")

type promConfig struct {
	Global struct {
		ScrapeInterval     string            `yaml:"scrape_interval"`
		ScrapeTimeout      string            `yaml:"scrape_timeout"`
		EvaluationInterval string            `yaml:"evaluation_interval"`
		ExternalLabels     map[string]string `yaml:"external_labels"`
	} `yaml:"global"`
	RuleFiles     []string       `yaml:"rule_files"`
	ScrapeConfigs []scrapeConfig `yaml:"scrape_configs"`
}

type scrapeConfig struct {
	JobName             string `yaml:"job_name"`
	ScrapeInterval      string `yaml:"scrape_interval"`
	ScrapeTimeout       string `yaml:"scrape_timeout"`
	MetricsPath         string `yaml:"metrics_path"`
	Scheme              string `yaml:"scheme"`
	KubernetesSDConfigs []struct {
		Role       string `yaml:"role"`
		Namespaces *struct {
			Names        []string `yaml:"names"`
			OwnNamespace bool     `yaml:"own_namespace"`
		} `yaml:"namespaces"`
	} `yaml:"kubernetes_sd_configs"`
	StaticConfigs []struct {
		Targets []string          `yaml:"targets"`
		Labels  map[string]string `yaml:"labels"`
	} `yaml:"static_configs"`
	RelabelConfigs       []relabelConfig `yaml:"relabel_configs"`
	MetricRelabelConfigs []relabelConfig `yaml:"metric_relabel_configs"`
	Authorization        *struct {
		Type            string `yaml:"type"`
		Credentials     string `yaml:"credentials"`
		CredentialsFile string `yaml:"credentials_file"`
	} `yaml:"authorization"`
}

// checkAuthorization checks a job's authorization block as Prometheus'
// config.HTTPClientConfig does, and that the credential is a file, never
// a value in prometheus.yml.
func (sc scrapeConfig) checkAuthorization() error {
	a := sc.Authorization
	switch {
	case a == nil:
		return nil
	case a.Type != "" && !strings.EqualFold(a.Type, "Bearer"):
		return fmt.Errorf("authorization type %q: the admin listener takes Bearer", a.Type)
	case a.Credentials != "":
		return errors.New("authorization credentials inline: a secret belongs in a file (credentials_file)")
	case a.CredentialsFile == "":
		return errors.New("authorization without credentials_file")
	}
	return nil
}

type relabelConfig struct {
	SourceLabels []string `yaml:"source_labels"`
	Separator    *string  `yaml:"separator"`
	Regex        *string  `yaml:"regex"`
	Modulus      uint64   `yaml:"modulus"`
	TargetLabel  string   `yaml:"target_label"`
	Replacement  *string  `yaml:"replacement"`
	Action       string   `yaml:"action"`
}

// Prometheus' relabel defaults.
func (r relabelConfig) action() string {
	if r.Action == "" {
		return "replace"
	}
	return r.Action
}

func (r relabelConfig) regex() string {
	if r.Regex == nil {
		return "(.*)"
	}
	return *r.Regex
}

func (r relabelConfig) separator() string {
	if r.Separator == nil {
		return ";"
	}
	return *r.Separator
}

func (r relabelConfig) replacement() string {
	if r.Replacement == nil {
		return "$1"
	}
	return *r.Replacement
}

var (
	relabelActions = []string{"replace", "keep", "drop", "keepequal", "dropequal", "hashmod", "labelmap", "labeldrop",
		"labelkeep", "lowercase", "uppercase"}
	kubernetesRoles = []string{"pod", "service", "endpoints", "endpointslice", "node", "ingress"}
)

// loadPromConfig decodes prometheus.yml strictly and checks it as
// Prometheus would, then parses each rule file with Prometheus' parser.
func loadPromConfig(dir string) (*promConfig, []rulefmt.RuleGroup, error) {
	data, err := os.ReadFile(filepath.Join(dir, "prometheus.yml"))
	if err != nil {
		return nil, nil, err
	}
	var c promConfig
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, nil, fmt.Errorf("prometheus.yml: %w", err)
	}
	var errs []error
	dur := func(what, v, dflt string) time.Duration {
		if v == "" {
			v = dflt
		}
		d, err := model.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", what, v, err))
		}
		return time.Duration(d)
	}
	interval := dur("global scrape_interval", c.Global.ScrapeInterval, "1m")
	timeout := dur("global scrape_timeout", c.Global.ScrapeTimeout, "10s")
	dur("global evaluation_interval", c.Global.EvaluationInterval, "1m")
	if timeout > interval {
		errs = append(errs, fmt.Errorf("global scrape_timeout %v is longer than scrape_interval %v", timeout, interval))
	}
	for k := range c.Global.ExternalLabels {
		if !model.LegacyValidation.IsValidLabelName(k) {
			errs = append(errs, fmt.Errorf("external label %q is not a valid label name", k))
		}
	}
	jobs := map[string]bool{}
	for i, sc := range c.ScrapeConfigs {
		where := fmt.Sprintf("scrape_configs[%d] %q", i, sc.JobName)
		if sc.JobName == "" || jobs[sc.JobName] {
			errs = append(errs, fmt.Errorf("%s: job_name empty or used twice", where))
		}
		jobs[sc.JobName] = true
		in := dur(where+" scrape_interval", sc.ScrapeInterval, interval.String())
		out := dur(where+" scrape_timeout", sc.ScrapeTimeout, min(timeout, in).String())
		if out > in {
			errs = append(errs, fmt.Errorf("%s: scrape_timeout %v is longer than scrape_interval %v", where, out, in))
		}
		if sc.MetricsPath != "" && !strings.HasPrefix(sc.MetricsPath, "/") {
			errs = append(errs, fmt.Errorf("%s: metrics_path %q does not start with /", where, sc.MetricsPath))
		}
		if sc.Scheme != "" && sc.Scheme != "http" && sc.Scheme != "https" {
			errs = append(errs, fmt.Errorf("%s: scheme %q", where, sc.Scheme))
		}
		if len(sc.KubernetesSDConfigs) == 0 && len(sc.StaticConfigs) == 0 {
			errs = append(errs, fmt.Errorf("%s: no targets (kubernetes_sd_configs or static_configs)", where))
		}
		if err := sc.checkAuthorization(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
		for _, k := range sc.KubernetesSDConfigs {
			if !slices.Contains(kubernetesRoles, k.Role) {
				errs = append(errs, fmt.Errorf("%s: kubernetes_sd_configs role %q is not one of %v", where, k.Role, kubernetesRoles))
			}
		}
		for _, s := range sc.StaticConfigs {
			for _, target := range s.Targets {
				if _, _, err := net.SplitHostPort(target); err != nil {
					errs = append(errs, fmt.Errorf("%s: target %q: %w", where, target, err))
				}
			}
			for k := range s.Labels {
				if !model.LegacyValidation.IsValidLabelName(k) {
					errs = append(errs, fmt.Errorf("%s: label %q is not a valid label name", where, k))
				}
			}
		}
		for j, r := range slices.Concat(sc.RelabelConfigs, sc.MetricRelabelConfigs) {
			if err := r.validate(); err != nil {
				errs = append(errs, fmt.Errorf("%s: relabel rule %d: %w", where, j, err))
			}
		}
	}
	var groups []rulefmt.RuleGroup
	for _, f := range c.RuleFiles {
		if filepath.IsAbs(f) || strings.ContainsAny(f, "*?[") {
			errs = append(errs, fmt.Errorf("rule_files %q: want a plain path beside prometheus.yml", f))
			continue
		}
		rgs, rerrs := rulefmt.ParseFile(filepath.Join(dir, f), false, model.LegacyValidation, promQL, slog.New(slog.NewTextHandler(io.Discard, nil)))
		errs = append(errs, rerrs...)
		if rgs != nil {
			groups = append(groups, rgs.Groups...)
		}
	}
	return &c, groups, errors.Join(errs...)
}

// validate checks a relabel rule as Prometheus' relabel.Config does.
func (r relabelConfig) validate() error {
	a := r.action()
	if !slices.Contains(relabelActions, a) {
		return fmt.Errorf("unknown action %q", a)
	}
	if _, err := regexp.Compile("^(?s:" + r.regex() + ")$"); err != nil {
		return fmt.Errorf("regex %q: %w", r.regex(), err)
	}
	for _, l := range r.SourceLabels {
		if !model.LegacyValidation.IsValidLabelName(l) {
			return fmt.Errorf("source label %q is not a valid label name", l)
		}
	}
	switch a {
	case "replace", "hashmod", "lowercase", "uppercase", "keepequal", "dropequal":
		if r.TargetLabel == "" {
			return fmt.Errorf("action %s needs target_label", a)
		}
	case "keep", "drop":
		if len(r.SourceLabels) == 0 {
			return fmt.Errorf("action %s needs source_labels", a)
		}
	}
	if a == "hashmod" && r.Modulus == 0 {
		return errors.New("action hashmod needs a modulus")
	}
	if r.TargetLabel != "" && a != "replace" && !model.LegacyValidation.IsValidLabelName(r.TargetLabel) {
		return fmt.Errorf("target_label %q is not a valid label name", r.TargetLabel)
	}
	return nil
}

// relabel applies rules to a target's labels as Prometheus does for the
// actions the scrape configs here use; it reports whether the target is
// kept.
func relabel(ls map[string]string, rules []relabelConfig) (bool, error) {
	for _, r := range rules {
		vals := make([]string, len(r.SourceLabels))
		for i, l := range r.SourceLabels {
			vals[i] = ls[l]
		}
		v := strings.Join(vals, r.separator())
		re := regexp.MustCompile("^(?s:" + r.regex() + ")$")
		switch r.action() {
		case "keep":
			if !re.MatchString(v) {
				return false, nil
			}
		case "drop":
			if re.MatchString(v) {
				return false, nil
			}
		case "replace":
			if m := re.FindStringSubmatchIndex(v); m != nil {
				out := string(re.ExpandString(nil, r.replacement(), v, m))
				if out == "" {
					delete(ls, r.TargetLabel)
				} else {
					ls[r.TargetLabel] = out
				}
			}
		default:
			return false, fmt.Errorf("the check does not model relabel action %q", r.action())
		}
	}
	return true, nil
}

// podTargets are the targets Prometheus' pod role makes of the rendered
// Deployment's pods, one per container port, with their meta labels.
func podTargets(b *bundle) map[string]map[string]string {
	sanitize := regexp.MustCompile(`[^a-zA-Z0-9_]`)
	out := map[string]map[string]string{}
	tmpl := b.deploy.Spec.Template
	for _, c := range tmpl.Spec.Containers {
		for _, p := range c.Ports {
			ls := map[string]string{
				"__address__":                                   fmt.Sprintf("10.0.0.7:%d", p.ContainerPort),
				"__meta_kubernetes_namespace":                   b.deploy.Namespace,
				"__meta_kubernetes_pod_name":                    b.deploy.Name + "-7d9f8b6c5-x2x4q",
				"__meta_kubernetes_pod_node_name":               "node-1",
				"__meta_kubernetes_pod_phase":                   string(corev1.PodRunning),
				"__meta_kubernetes_pod_container_name":          c.Name,
				"__meta_kubernetes_pod_container_port_name":     p.Name,
				"__meta_kubernetes_pod_container_port_number":   fmt.Sprint(p.ContainerPort),
				"__meta_kubernetes_pod_container_port_protocol": "TCP",
			}
			for k, v := range tmpl.Labels {
				ls["__meta_kubernetes_pod_label_"+sanitize.ReplaceAllString(k, "_")] = v
				ls["__meta_kubernetes_pod_labelpresent_"+sanitize.ReplaceAllString(k, "_")] = "true"
			}
			out[p.Name] = ls
		}
	}
	return out
}

func TestPrometheusConfig(t *testing.T) {
	c, groups, err := loadPromConfig(promDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) == 0 {
		t.Fatal("no alert rules")
	}
	if err := checkRules(c, groups); err != nil {
		t.Error(err)
	}
}

// checkRules: every rule names only what mcpblob exports (and up), and
// every job it matches on is a job of prometheus.yml: a renamed job would
// silence the alert.
func checkRules(c *promConfig, groups []rulefmt.RuleGroup) error {
	var jobs []string
	for _, sc := range c.ScrapeConfigs {
		jobs = append(jobs, sc.JobName)
	}
	var errs []error
	for _, g := range groups {
		for _, r := range g.Rules {
			use, err := checkPromQL(r.Expr, true)
			if err != nil {
				errs = append(errs, fmt.Errorf("rule %s: %w", r.Alert+r.Record, err))
			}
			for _, m := range use.jobs {
				if !slices.ContainsFunc(jobs, m.Matches) {
					errs = append(errs, fmt.Errorf("rule %s: %s matches no job_name of prometheus.yml %v", r.Alert+r.Record, m, jobs))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// TestPrometheusFindsPods runs the Kubernetes scrape job's relabelling on
// the targets the pod role makes of the kustomization's pods: it must
// watch their namespace, keep the admin port and drop the others.
func TestPrometheusFindsPods(t *testing.T) {
	c, _, err := loadPromConfig(promDir)
	if err != nil {
		t.Fatal(err)
	}
	b := loadBundle(t)
	if err := checkScrapesPods(c, b); err != nil {
		t.Fatal(err)
	}
}

func checkScrapesPods(c *promConfig, b *bundle) error {
	var sc *scrapeConfig
	for i := range c.ScrapeConfigs {
		if len(c.ScrapeConfigs[i].KubernetesSDConfigs) > 0 {
			sc = &c.ScrapeConfigs[i]
		}
	}
	if sc == nil {
		return errors.New("no kubernetes_sd_configs scrape job")
	}
	var errs []error
	for _, k := range sc.KubernetesSDConfigs {
		if k.Role != "pod" {
			errs = append(errs, fmt.Errorf("job %s: role %q, want pod", sc.JobName, k.Role))
		}
		if k.Namespaces != nil && len(k.Namespaces.Names) > 0 && !slices.Contains(k.Namespaces.Names, b.deploy.Namespace) {
			errs = append(errs, fmt.Errorf("job %s watches namespaces %v, the pods are in %q", sc.JobName, k.Namespaces.Names, b.deploy.Namespace))
		}
	}
	if _, _, token := b.env(b.server(), "MCPBLOB_ADMIN_TOKEN"); token && sc.Authorization == nil {
		errs = append(errs, fmt.Errorf("job %s sends no authorization, and the pods' admin port requires MCPBLOB_ADMIN_TOKEN", sc.JobName))
	}
	targets := podTargets(b)
	if len(targets) == 0 || targets["admin"] == nil {
		return errors.Join(append(errs, errors.New("the pods declare no admin port"))...)
	}
	for port, ls := range targets {
		kept, err := relabel(ls, sc.RelabelConfigs)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("job %s: %w", sc.JobName, err))
		case port == "admin" && !kept:
			errs = append(errs, fmt.Errorf("job %s drops the pods' admin port", sc.JobName))
		case port != "admin" && kept:
			errs = append(errs, fmt.Errorf("job %s also scrapes the pods' %s port", sc.JobName, port))
		}
	}
	return errors.Join(errs...)
}

// TestPrometheusRejects feeds broken copies of the configuration and rules.
func TestPrometheusRejects(t *testing.T) {
	conf, err := os.ReadFile(filepath.Join(promDir, "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	alerts, err := os.ReadFile(filepath.Join(promDir, "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, file, old, new, want string }{
		{"misspelt field", "prometheus.yml", "scrape_interval: 15s", "scrape_intervall: 15s", "scrape_intervall"},
		{"bad duration", "prometheus.yml", "scrape_interval: 15s", "scrape_interval: 15", "scrape_interval"},
		{"timeout over interval", "prometheus.yml", "scrape_timeout: 10s", "scrape_timeout: 20s", "longer than"},
		{"unknown role", "prometheus.yml", "- role: pod", "- role: pods", "role"},
		{"bad regex", "prometheus.yml", "regex: Succeeded|Failed", "regex: Succeeded|(Failed", "regex"},
		{"unknown action", "prometheus.yml", "action: drop", "action: dorp", "dorp"},
		{"target without port", "prometheus.yml", `"127.0.0.1:9091"`, `"127.0.0.1"`, "missing port"},
		{"inline admin token", "prometheus.yml", "credentials_file: /etc/prometheus/secrets/mcpblob-admin/token", "credentials: s3cret", "inline"},
		{"basic authorization", "prometheus.yml", "type: Bearer", "type: Basic", "takes Bearer"},
		{"misspelt rule field", "alerts.yml", "for: 2m", "fro: 2m", "fro"},
		{"bad rule expression", "alerts.yml", "> 0.01", "> > 0.01", "parse error"},
		{"bad annotation template", "alerts.yml", "{{ $labels.instance }} has not", "{{ $labels.instance } has not", "template"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"prometheus.yml": string(conf), "alerts.yml": string(alerts)}
			files[c.file] = replaceOnce(t, files[c.file], c.old, c.new)
			for name, s := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := loadPromConfig(dir)
			wantRejected(t, err, c.want)
		})
	}
	t.Run("kubernetes job misses the admin port", func(t *testing.T) {
		c, _, err := loadPromConfig(promDir)
		if err != nil {
			t.Fatal(err)
		}
		b := loadBundle(t)
		for i := range c.ScrapeConfigs {
			for j, r := range c.ScrapeConfigs[i].RelabelConfigs {
				if r.Regex != nil && *r.Regex == "mcpblob;admin" {
					c.ScrapeConfigs[i].RelabelConfigs[j].Regex = new("mcpblob;metrics")
				}
			}
		}
		wantRejected(t, checkScrapesPods(c, b), "drops the pods' admin port")
	})
	t.Run("kubernetes job without the admin token", func(t *testing.T) {
		c, _, err := loadPromConfig(promDir)
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.ScrapeConfigs {
			c.ScrapeConfigs[i].Authorization = nil
		}
		wantRejected(t, checkScrapesPods(c, loadBundle(t)), "sends no authorization")
	})
	t.Run("alert on a job that does not exist", func(t *testing.T) {
		c, groups, err := loadPromConfig(promDir)
		if err != nil {
			t.Fatal(err)
		}
		groups[0].Rules[0].Expr = `up{job="mcpblob-nodes"} == 0`
		wantRejected(t, checkRules(c, groups), "matches no job_name")
	})
}
