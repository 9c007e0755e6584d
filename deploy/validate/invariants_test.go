package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/types"
)

// serverContainer is the name of mcpblob's container in the Deployment.
const serverContainer = "mcpblob"

// bundle is the rendered kustomization with what it is checked against.
type bundle struct {
	kust       *types.Kustomization
	files      []string                  // YAML files in deploy/kubernetes
	objs       []object                  // kustomize build's output
	external   map[string]*corev1.Secret // secret.example.yaml: Secrets created outside the kustomization
	entrypoint []string                  // deploy/Dockerfile's ENTRYPOINT
	settings   map[string]bool           // MCPBLOB_* variables cmd/mcpblob/config.go reads
	secretEnv  map[string]bool           // the ones it reads from the environment only: secrets

	deploy     *appsv1.Deployment
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	services   []*corev1.Service
	hpas       []*autoscalingv2.HorizontalPodAutoscaler
	pdbs       []*policyv1.PodDisruptionBudget
	netpols    []*networkingv1.NetworkPolicy
}

// loadBundle renders deploy/kubernetes and reads what the invariants
// compare it with. It fails the test when the manifests lack the one
// Deployment with the mcpblob container every invariant starts from.
func loadBundle(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{external: map[string]*corev1.Secret{}, configMaps: map[string]*corev1.ConfigMap{},
		secrets: map[string]*corev1.Secret{}}
	var err error
	if b.kust, err = readKustomization(kubeDir); err != nil {
		t.Fatal(err)
	}
	if b.files, err = manifestFiles(kubeDir); err != nil {
		t.Fatal(err)
	}
	if b.objs, err = render(kubeDir); err != nil {
		t.Fatal(err)
	}
	ext, err := readManifests(exampleSecrets)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ext {
		s, ok := o.obj.(*corev1.Secret)
		if !ok {
			t.Fatalf("%s: %s in the example Secrets file", o.src, o.kind)
		}
		b.external[s.Name] = s
	}
	if b.entrypoint, err = dockerEntrypoint(filepath.Join(repo, "deploy", "Dockerfile")); err != nil {
		t.Fatal(err)
	}
	if b.settings, b.secretEnv, err = mcpblobSettings(filepath.Join(repo, "cmd", "mcpblob", "config.go")); err != nil {
		t.Fatal(err)
	}
	for _, o := range b.objs {
		switch v := o.obj.(type) {
		case *appsv1.Deployment:
			if b.deploy != nil {
				t.Fatalf("two Deployments: %q and %q", b.deploy.Name, v.Name)
			}
			b.deploy = v
		case *corev1.ConfigMap:
			b.configMaps[v.Name] = v
		case *corev1.Secret:
			b.secrets[v.Name] = v
		case *corev1.Service:
			b.services = append(b.services, v)
		case *autoscalingv2.HorizontalPodAutoscaler:
			b.hpas = append(b.hpas, v)
		case *policyv1.PodDisruptionBudget:
			b.pdbs = append(b.pdbs, v)
		case *networkingv1.NetworkPolicy:
			b.netpols = append(b.netpols, v)
		}
	}
	if b.deploy == nil {
		t.Fatal("the kustomization renders no Deployment")
	}
	if b.server() == nil {
		t.Fatalf("Deployment %q has no container %q", b.deploy.Name, serverContainer)
	}
	return b
}

// server is mcpblob's container.
func (b *bundle) server() *corev1.Container {
	cs := b.deploy.Spec.Template.Spec.Containers
	for i := range cs {
		if cs[i].Name == serverContainer {
			return &cs[i]
		}
	}
	return nil
}

// dockerEntrypoint reads the exec-form ENTRYPOINT of a Dockerfile (the
// last one: the final stage's).
func dockerEntrypoint(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ep []string
	for line := range strings.Lines(string(data)) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "ENTRYPOINT ")
		if !ok {
			continue
		}
		ep = nil
		if err := json.Unmarshal([]byte(rest), &ep); err != nil {
			return nil, fmt.Errorf("%s: ENTRYPOINT is not in exec form: %w", path, err)
		}
	}
	if len(ep) == 0 {
		return nil, fmt.Errorf("%s: no ENTRYPOINT", path)
	}
	return ep, nil
}

// envName maps a flag to its variable, as cmd/mcpblob does:
// shutdown-delay → MCPBLOB_SHUTDOWN_DELAY.
func envName(flag string) string {
	return "MCPBLOB_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// mcpblobSettings reads the variables mcpblob serve understands from the
// source of its configuration: one per flag defined there
// (fs.XxxVar(&field, "name", ...)), and those it reads with
// getenv("MCPBLOB_...") only, which are the secrets.
func mcpblobSettings(path string) (all, envOnly map[string]bool, err error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, err
	}
	all, envOnly = map[string]bool{}, map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		str := func(i int) string {
			if i >= len(call.Args) {
				return ""
			}
			lit, ok := call.Args[i].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return ""
			}
			s, _ := strconv.Unquote(lit.Value)
			return s
		}
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			if strings.HasSuffix(fn.Sel.Name, "Var") && len(call.Args) == 4 && str(1) != "" {
				all[envName(str(1))] = true
			}
		case *ast.Ident:
			if v := str(0); fn.Name == "getenv" && strings.HasPrefix(v, "MCPBLOB_") {
				all[v], envOnly[v] = true, true
			}
		}
		return true
	})
	if len(all) == 0 || len(envOnly) == 0 {
		return nil, nil, fmt.Errorf("%s: found no flags or no environment-only variables: has its shape changed?", path)
	}
	return all, envOnly, nil
}

// commandLine is what the container runs: its command (else the image's
// entrypoint), then its args.
func (b *bundle) commandLine(c *corev1.Container) []string {
	cmd := c.Command
	if len(cmd) == 0 {
		cmd = b.entrypoint
	}
	return append(slices.Clone(cmd), c.Args...)
}

// setting returns the value mcpblob sees for flag in container c and where
// it comes from: a flag on the command line wins over the environment.
// ok is false when nothing sets it.
func (b *bundle) setting(c *corev1.Container, flag string) (val, from string, ok bool) {
	args := b.commandLine(c)
	for i, a := range args {
		for _, p := range []string{"--" + flag, "-" + flag} {
			switch {
			case a == p && i+1 < len(args):
				val, from, ok = args[i+1], "the command line", true
			case strings.HasPrefix(a, p+"="):
				val, from, ok = strings.TrimPrefix(a, p+"="), "the command line", true
			}
		}
	}
	if ok {
		return val, from, ok
	}
	return b.env(c, envName(flag))
}

// env returns variable name's value in container c: env entries win over
// envFrom, a later entry over an earlier one. A valueFrom entry has an
// empty value and from "env valueFrom".
func (b *bundle) env(c *corev1.Container, name string) (val, from string, ok bool) {
	for _, e := range c.Env {
		if e.Name != name {
			continue
		}
		if e.ValueFrom != nil {
			val, from, ok = "", "env valueFrom", true
		} else {
			val, from, ok = e.Value, "the Deployment's env", true
		}
	}
	if ok {
		return val, from, ok
	}
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef == nil || !strings.HasPrefix(name, ef.Prefix) {
			continue
		}
		if cm := b.configMaps[ef.ConfigMapRef.Name]; cm != nil {
			if v, has := cm.Data[strings.TrimPrefix(name, ef.Prefix)]; has {
				val, from, ok = v, "ConfigMap "+cm.Name, true
			}
		}
	}
	return val, from, ok
}

// duration returns flag's value as a duration; it must be set explicitly.
func (b *bundle) duration(c *corev1.Container, flag string) (time.Duration, error) {
	v, from, ok := b.setting(c, flag)
	if !ok {
		return 0, fmt.Errorf("--%s (%s) is not set: set it explicitly", flag, envName(flag))
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("--%s %q from %s: %w", flag, v, from, err)
	}
	return d, nil
}

// listenPort is the port of flag's address (host:port) in container c.
func (b *bundle) listenPort(c *corev1.Container, flag string) (int32, error) {
	v, from, ok := b.setting(c, flag)
	if !ok {
		return 0, fmt.Errorf("--%s is set nowhere (Dockerfile entrypoint, command, args or environment)", flag)
	}
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return 0, fmt.Errorf("--%s %q from %s: %w", flag, v, from, err)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("--%s %q from %s: want a fixed port", flag, v, from)
	}
	return int32(n), nil
}

// containerPort finds the port p (a name or a number) among c's ports.
func containerPort(c *corev1.Container, p intstr.IntOrString) (corev1.ContainerPort, bool) {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp, true
		}
	}
	return corev1.ContainerPort{}, false
}

// selects reports whether sel selects the pods of the Deployment.
func (b *bundle) selects(sel *metav1.LabelSelector) (bool, error) {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return false, errors.New("empty selector (it selects every pod)")
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, err
	}
	return s.Matches(labels.Set(b.deploy.Spec.Template.Labels)), nil
}

// invariant is one cross-file check.
type invariant struct {
	name  string
	check func(*bundle) error
}

// invariants are the cross-file checks; each can fail, as
// TestInvariantsReject shows.
var invariants = []invariant{
	{"probes", (*bundle).checkProbes},
	{"admin port", (*bundle).checkAdminPort},
	{"shutdown timing", (*bundle).checkShutdown},
	{"references", (*bundle).checkReferences},
	{"kustomization lists every file", (*bundle).checkListed},
	{"secrets stay out", (*bundle).checkSecretsOut},
	{"deployment selector", (*bundle).checkDeploymentSelector},
	{"services", (*bundle).checkServices},
	{"autoscaling", (*bundle).checkAutoscaling},
	{"disruption budget", (*bundle).checkDisruptionBudget},
	{"network policy", (*bundle).checkNetworkPolicy},
	{"service links", (*bundle).checkServiceLinks},
	{"memory", (*bundle).checkMemory},
	{"key files", (*bundle).checkKeyFiles},
	{"hardening", (*bundle).checkHardening},
	{"settings exist", (*bundle).checkSettings},
	{"image", (*bundle).checkImage},
}

func TestInvariants(t *testing.T) {
	b := loadBundle(t)
	for _, inv := range invariants {
		t.Run(inv.name, func(t *testing.T) {
			if err := inv.check(b); err != nil {
				t.Error(err)
			}
		})
	}
}

// checkProbes: readiness on /readyz and liveness on /healthz, each on a
// declared container port that is the port mcpblob listens on (--listen,
// from the Dockerfile's entrypoint unless overridden).
func (b *bundle) checkProbes() error {
	c := b.server()
	public, err := b.listenPort(c, "listen")
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range []struct {
		field string
		probe *corev1.Probe
		path  string
	}{{"readinessProbe", c.ReadinessProbe, "/readyz"}, {"livenessProbe", c.LivenessProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			errs = append(errs, fmt.Errorf("%s: want an httpGet probe of %s", p.field, p.path))
			continue
		}
		if p.probe.HTTPGet.Path != p.path {
			errs = append(errs, fmt.Errorf("%s: path %q, want %q", p.field, p.probe.HTTPGet.Path, p.path))
		}
		cp, ok := containerPort(c, p.probe.HTTPGet.Port)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: port %s is not a declared container port", p.field, p.probe.HTTPGet.Port.String()))
		case cp.ContainerPort != public:
			errs = append(errs, fmt.Errorf("%s: port %s is %d, but mcpblob serves %s on --listen's port %d",
				p.field, p.probe.HTTPGet.Port.String(), cp.ContainerPort, p.path, public))
		}
	}
	return errors.Join(errs...)
}

// checkAdminPort: --admin-listen is set, on the container port named
// "admin", which is not the public port; bound beyond loopback, it
// requires a bearer: MCPBLOB_ADMIN_TOKEN from a Secret that must exist.
func (b *bundle) checkAdminPort() error {
	c := b.server()
	admin, err := b.listenPort(c, "admin-listen")
	if err != nil {
		return err
	}
	if err := b.checkAdminToken(c); err != nil {
		return err
	}
	public, err := b.listenPort(c, "listen")
	if err != nil {
		return err
	}
	cp, ok := containerPort(c, intstr.FromString("admin"))
	switch {
	case !ok:
		return errors.New(`no container port named "admin"`)
	case cp.ContainerPort != admin:
		return fmt.Errorf("container port admin is %d, --admin-listen's port is %d", cp.ContainerPort, admin)
	case admin == public:
		return fmt.Errorf("--admin-listen and --listen share port %d: pprof would be public", admin)
	}
	return nil
}

// checkAdminToken: an --admin-listen on a non-loopback address comes with
// MCPBLOB_ADMIN_TOKEN from a required secretKeyRef (an optional one would
// start a node without it when the Secret is missing).
func (b *bundle) checkAdminToken(c *corev1.Container) error {
	v, _, _ := b.setting(c, "admin-listen")
	host, _, _ := net.SplitHostPort(v)
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	for _, e := range c.Env {
		if e.Name == "MCPBLOB_ADMIN_TOKEN" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && !ptrTrue(e.ValueFrom.SecretKeyRef.Optional) {
			return nil
		}
	}
	return fmt.Errorf("--admin-listen %q binds beyond loopback without MCPBLOB_ADMIN_TOKEN from a required secretKeyRef: /debug/pprof/ would be open to the pod network", v)
}

// checkShutdown: the preStop sleep equals --shutdown-delay, and
// terminationGracePeriodSeconds exceeds sleep + delay + --grace-period (the
// kubelet counts the preStop hook against the grace period).
func (b *bundle) checkShutdown() error {
	c := b.server()
	delay, err := b.duration(c, "shutdown-delay")
	if err != nil {
		return err
	}
	grace, err := b.duration(c, "grace-period")
	if err != nil {
		return err
	}
	if delay < time.Second || delay%time.Second != 0 {
		return fmt.Errorf("--shutdown-delay %v: want whole seconds, at least one (the preStop sleep matches it)", delay)
	}
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		return fmt.Errorf("want a preStop sleep of %v (the image has no shell for an exec hook)", delay)
	}
	sleep := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	if sleep != delay {
		return fmt.Errorf("preStop sleeps %v, --shutdown-delay is %v", sleep, delay)
	}
	tgps := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if p := b.deploy.Spec.Template.Spec.TerminationGracePeriodSeconds; p != nil {
		tgps = *p
	}
	need := sleep + delay + grace
	if time.Duration(tgps)*time.Second <= need {
		return fmt.Errorf("terminationGracePeriodSeconds %d does not exceed preStop %v + shutdown delay %v + grace period %v = %v",
			tgps, sleep, delay, grace, need)
	}
	return nil
}

// reference is one use of a ConfigMap or Secret by the pod template.
type reference struct {
	kind, name, key string // key "" for the whole object
	optional        bool
	where           string
}

// references lists every ConfigMap and Secret the pod template uses.
func (b *bundle) references() []reference {
	var refs []reference
	spec := b.deploy.Spec.Template.Spec
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		for _, e := range c.Env {
			switch vf := e.ValueFrom; {
			case vf != nil && vf.SecretKeyRef != nil:
				refs = append(refs, reference{"Secret", vf.SecretKeyRef.Name, vf.SecretKeyRef.Key, ptrTrue(vf.SecretKeyRef.Optional), "env " + e.Name})
			case vf != nil && vf.ConfigMapKeyRef != nil:
				refs = append(refs, reference{"ConfigMap", vf.ConfigMapKeyRef.Name, vf.ConfigMapKeyRef.Key, ptrTrue(vf.ConfigMapKeyRef.Optional), "env " + e.Name})
			}
		}
		for _, ef := range c.EnvFrom {
			if ef.ConfigMapRef != nil {
				refs = append(refs, reference{"ConfigMap", ef.ConfigMapRef.Name, "", ptrTrue(ef.ConfigMapRef.Optional), "envFrom"})
			}
			if ef.SecretRef != nil {
				refs = append(refs, reference{"Secret", ef.SecretRef.Name, "", ptrTrue(ef.SecretRef.Optional), "envFrom"})
			}
		}
	}
	for _, v := range spec.Volumes {
		where := "volume " + v.Name
		if s := v.Secret; s != nil {
			refs = append(refs, reference{"Secret", s.SecretName, "", ptrTrue(s.Optional), where})
			for _, it := range s.Items {
				refs = append(refs, reference{"Secret", s.SecretName, it.Key, ptrTrue(s.Optional), where})
			}
		}
		if cm := v.ConfigMap; cm != nil {
			refs = append(refs, reference{"ConfigMap", cm.Name, "", ptrTrue(cm.Optional), where})
			for _, it := range cm.Items {
				refs = append(refs, reference{"ConfigMap", cm.Name, it.Key, ptrTrue(cm.Optional), where})
			}
		}
	}
	return refs
}

func ptrTrue(p *bool) bool { return p != nil && *p }

// checkReferences: every ConfigMap the pods use is defined in the
// kustomization, with the keys they name; every Secret is either defined
// there or documented in secret.example.yaml (created by the operator),
// with the keys named; and every documented Secret is used.
func (b *bundle) checkReferences() error {
	var errs []error
	used := map[string]bool{}
	for _, r := range b.references() {
		var keys map[string]bool
		switch r.kind {
		case "ConfigMap":
			cm := b.configMaps[r.name]
			if cm == nil {
				errs = append(errs, fmt.Errorf("%s: ConfigMap %q is not defined in the kustomization", r.where, r.name))
				continue
			}
			keys = keySet(cm.Data, cm.BinaryData)
		case "Secret":
			s := b.secrets[r.name]
			if s == nil {
				s = b.external[r.name]
			}
			if s == nil {
				errs = append(errs, fmt.Errorf("%s: Secret %q is neither in the kustomization nor documented in %s", r.where, r.name, exampleSecrets))
				continue
			}
			used[r.name] = true
			keys = keySet(s.StringData, s.Data)
		}
		if r.key != "" && !keys[r.key] {
			errs = append(errs, fmt.Errorf("%s: %s %q has no key %q", r.where, r.kind, r.name, r.key))
		}
	}
	for name := range b.external {
		if !used[name] {
			errs = append(errs, fmt.Errorf("%s documents Secret %q, which nothing references", exampleSecrets, name))
		}
	}
	return errors.Join(errs...)
}

func keySet[A, B any](a map[string]A, b map[string]B) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

// checkListed: kustomization.yaml lists every YAML file of
// deploy/kubernetes but itself and the example Secrets, and nothing else.
func (b *bundle) checkListed() error {
	var errs []error
	for _, f := range b.files {
		listed := slices.Contains(b.kust.Resources, f)
		switch {
		case f == "kustomization.yaml":
		case f == exampleSecrets && listed:
			errs = append(errs, fmt.Errorf("kustomization.yaml lists %s: its placeholder values would be applied", f))
		case f != exampleSecrets && !listed:
			errs = append(errs, fmt.Errorf("%s is not in kustomization.yaml's resources", f))
		}
	}
	for _, r := range b.kust.Resources {
		if !slices.Contains(b.files, r) {
			errs = append(errs, fmt.Errorf("kustomization.yaml lists %q, which is not a YAML file of deploy/kubernetes", r))
		}
	}
	return errors.Join(errs...)
}

// cloudSecrets are the secret variables of minio-go's credential chain
// (storage/s3 uses its EnvAWS and EnvMinio providers, which read each of
// these; the MINIO_ names are minio-go's, whatever the S3 service).
var cloudSecrets = []string{"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN",
	"MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD", "MINIO_ACCESS_KEY", "MINIO_SECRET_KEY"}

// checkSecretsOut: the variables mcpblob reads only from the environment
// (its secrets) and the cloud credential variables are never plain values
// in a ConfigMap or the Deployment, only secretKeyRefs.
func (b *bundle) checkSecretsOut() error {
	secret := func(name string) bool { return b.secretEnv[name] || slices.Contains(cloudSecrets, name) }
	var errs []error
	for _, cm := range b.configMaps {
		for k := range keySet(cm.Data, cm.BinaryData) {
			if secret(k) {
				errs = append(errs, fmt.Errorf("ConfigMap %q holds %s: a secret belongs in a Secret", cm.Name, k))
			}
		}
	}
	spec := b.deploy.Spec.Template.Spec
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		for _, e := range c.Env {
			if secret(e.Name) && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
				errs = append(errs, fmt.Errorf("container %s: %s is not a secretKeyRef", c.Name, e.Name))
			}
		}
	}
	return errors.Join(errs...)
}

// checkDeploymentSelector: the Deployment's selector selects its template.
func (b *bundle) checkDeploymentSelector() error {
	ok, err := b.selects(b.deploy.Spec.Selector)
	if err != nil {
		return fmt.Errorf("Deployment selector: %w", err)
	}
	if !ok {
		return errors.New("the Deployment's selector does not select its own pod template")
	}
	return nil
}

// checkServices: every Service selects the pods and targets declared
// container ports; one serves the public port, another the admin port, and
// none both.
func (b *bundle) checkServices() error {
	c := b.server()
	var errs []error
	var public, admin bool
	for _, s := range b.services {
		ok, err := b.selects(&metav1.LabelSelector{MatchLabels: s.Spec.Selector})
		if err != nil || !ok {
			errs = append(errs, fmt.Errorf("Service %q: selector %v does not select the Deployment's pods %v", s.Name, s.Spec.Selector, b.deploy.Spec.Template.Labels))
		}
		var names []string
		for _, p := range s.Spec.Ports {
			target := p.TargetPort
			if target.Type == intstr.Int && target.IntVal == 0 {
				target = intstr.FromInt32(p.Port)
			}
			cp, ok := containerPort(c, target)
			if !ok {
				errs = append(errs, fmt.Errorf("Service %q port %q: target %s is not a declared container port", s.Name, p.Name, target.String()))
				continue
			}
			names = append(names, cp.Name)
		}
		public = public || slices.Contains(names, "http")
		admin = admin || slices.Contains(names, "admin")
		if slices.Contains(names, "http") && slices.Contains(names, "admin") {
			errs = append(errs, fmt.Errorf("Service %q exposes the public and the admin port together", s.Name))
		}
	}
	if !public || !admin {
		errs = append(errs, fmt.Errorf("want a Service on container port http and another on admin (have http %v, admin %v)", public, admin))
	}
	return errors.Join(errs...)
}

// checkAutoscaling: one HPA scales the Deployment, from at least 2
// replicas; the Deployment leaves spec.replicas to it; every container has
// a request for each resource the HPA measures utilisation of.
func (b *bundle) checkAutoscaling() error {
	if len(b.hpas) != 1 {
		return fmt.Errorf("want one HorizontalPodAutoscaler, have %d", len(b.hpas))
	}
	h := b.hpas[0]
	ref := h.Spec.ScaleTargetRef
	var errs []error
	if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != b.deploy.Name {
		errs = append(errs, fmt.Errorf("HPA %q targets %s %s %q, not apps/v1 Deployment %q", h.Name, ref.APIVersion, ref.Kind, ref.Name, b.deploy.Name))
	}
	minReplicas := int32(1)
	if h.Spec.MinReplicas != nil {
		minReplicas = *h.Spec.MinReplicas
	}
	if minReplicas < 2 || h.Spec.MaxReplicas < minReplicas {
		errs = append(errs, fmt.Errorf("HPA %q: replicas %d to %d: want at least 2, so one node's loss is survived", h.Name, minReplicas, h.Spec.MaxReplicas))
	}
	if b.deploy.Spec.Replicas != nil {
		errs = append(errs, fmt.Errorf("Deployment %q sets spec.replicas while HPA %q scales it: every apply would reset the count", b.deploy.Name, h.Name))
	}
	for _, m := range h.Spec.Metrics {
		if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil || m.Resource.Target.Type != autoscalingv2.UtilizationMetricType {
			continue
		}
		for _, c := range b.deploy.Spec.Template.Spec.Containers {
			if _, ok := c.Resources.Requests[m.Resource.Name]; !ok {
				errs = append(errs, fmt.Errorf("HPA %q measures %s utilisation, container %s requests no %s", h.Name, m.Resource.Name, c.Name, m.Resource.Name))
			}
		}
	}
	return errors.Join(errs...)
}

// checkDisruptionBudget: one PDB selects the pods and lets a drain take at
// least one and at most all but one of the HPA's minimum.
func (b *bundle) checkDisruptionBudget() error {
	if len(b.pdbs) != 1 {
		return fmt.Errorf("want one PodDisruptionBudget, have %d", len(b.pdbs))
	}
	p := b.pdbs[0]
	ok, err := b.selects(p.Spec.Selector)
	if err != nil {
		return fmt.Errorf("PDB %q: %w", p.Name, err)
	}
	if !ok {
		return fmt.Errorf("PDB %q does not select the Deployment's pods %v", p.Name, b.deploy.Spec.Template.Labels)
	}
	minReplicas := int32(1)
	if len(b.hpas) == 1 && b.hpas[0].Spec.MinReplicas != nil {
		minReplicas = *b.hpas[0].Spec.MinReplicas
	}
	switch {
	case p.Spec.MaxUnavailable != nil && p.Spec.MaxUnavailable.Type == intstr.Int:
		if v := p.Spec.MaxUnavailable.IntVal; v < 1 || v >= minReplicas {
			return fmt.Errorf("PDB %q: maxUnavailable %d, want 1 to %d (the minimum replicas less one)", p.Name, v, minReplicas-1)
		}
	case p.Spec.MinAvailable != nil && p.Spec.MinAvailable.Type == intstr.Int:
		if v := p.Spec.MinAvailable.IntVal; v < 1 || v >= minReplicas {
			return fmt.Errorf("PDB %q: minAvailable %d would block every drain at %d replicas", p.Name, v, minReplicas)
		}
	case p.Spec.MaxUnavailable == nil && p.Spec.MinAvailable == nil:
		return fmt.Errorf("PDB %q sets neither maxUnavailable nor minAvailable", p.Name)
	}
	return nil
}

// checkNetworkPolicy: a policy selecting the pods restricts both
// directions; every ingress rule names declared container ports; the
// public port is admitted; the admin port only from namespace or pod
// selectors, never from everywhere or an address block; DNS goes out.
func (b *bundle) checkNetworkPolicy() error {
	c := b.server()
	var errs []error
	var selected, public, dns bool
	for _, np := range b.netpols {
		if ok, err := b.selects(&np.Spec.PodSelector); err != nil || !ok {
			continue
		}
		selected = true
		if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
			errs = append(errs, fmt.Errorf("NetworkPolicy %q: policyTypes %v, want Ingress and Egress", np.Name, np.Spec.PolicyTypes))
		}
		for i, rule := range np.Spec.Ingress {
			if len(rule.Ports) == 0 {
				errs = append(errs, fmt.Errorf("NetworkPolicy %q ingress %d admits every port (the admin port too): name the ports", np.Name, i))
			}
			for _, p := range rule.Ports {
				if p.Port == nil {
					errs = append(errs, fmt.Errorf("NetworkPolicy %q ingress %d: a port entry without a port admits them all", np.Name, i))
					continue
				}
				cp, ok := containerPort(c, *p.Port)
				if !ok {
					errs = append(errs, fmt.Errorf("NetworkPolicy %q ingress %d: port %s is not a declared container port", np.Name, i, p.Port.String()))
					continue
				}
				switch cp.Name {
				case "http":
					public = true
				case "admin":
					if len(rule.From) == 0 {
						errs = append(errs, fmt.Errorf("NetworkPolicy %q ingress %d admits the admin port from everywhere", np.Name, i))
					}
					for _, peer := range rule.From {
						if peer.IPBlock != nil || (peer.NamespaceSelector == nil && peer.PodSelector == nil) {
							errs = append(errs, fmt.Errorf("NetworkPolicy %q ingress %d admits the admin port from an address block", np.Name, i))
						}
					}
				}
			}
		}
		for _, rule := range np.Spec.Egress {
			for _, p := range rule.Ports {
				if p.Port != nil && p.Port.IntVal == 53 && p.Protocol != nil && *p.Protocol == corev1.ProtocolUDP {
					dns = true
				}
			}
		}
	}
	if !selected {
		return errors.New("no NetworkPolicy selects the Deployment's pods")
	}
	if !public {
		errs = append(errs, errors.New("no NetworkPolicy rule admits the public port"))
	}
	if !dns {
		errs = append(errs, errors.New("no NetworkPolicy egress rule lets DNS (UDP 53) out"))
	}
	return errors.Join(errs...)
}

// checkServiceLinks: the kubelet puts <SERVICE>_PORT, <SERVICE>_SERVICE_HOST
// ... variables in every pod for every Service of the namespace; for a
// Service named mcpblob* they fall under the MCPBLOB_ prefix mcpblob reads
// its settings from, so the pods must turn them off.
func (b *bundle) checkServiceLinks() error {
	for _, s := range b.services {
		env := strings.ToUpper(strings.ReplaceAll(s.Name, "-", "_"))
		if strings.HasPrefix(env, "MCPBLOB") {
			if p := b.deploy.Spec.Template.Spec.EnableServiceLinks; p == nil || *p {
				return fmt.Errorf("Service %q would put %s_* variables in the pods: set enableServiceLinks: false", s.Name, env)
			}
		}
	}
	return nil
}

// checkMemory: a memory limit, and GOMEMLIMIT below it.
func (b *bundle) checkMemory() error {
	c := b.server()
	limit := c.Resources.Limits.Memory()
	if limit.IsZero() {
		return errors.New("no memory limit")
	}
	v, from, ok := b.env(c, "GOMEMLIMIT")
	if !ok {
		return fmt.Errorf("GOMEMLIMIT is not set (the memory limit is %s)", limit)
	}
	n, err := parseGoMemLimit(v)
	if err != nil {
		return fmt.Errorf("GOMEMLIMIT %q from %s: %w", v, from, err)
	}
	if n >= limit.Value() {
		return fmt.Errorf("GOMEMLIMIT %s (%d bytes) is not below the memory limit %s (%d bytes)", v, n, limit, limit.Value())
	}
	return nil
}

// parseGoMemLimit reads GOMEMLIMIT's syntax: bytes, optionally with a
// B, KiB, MiB, GiB or TiB suffix.
func parseGoMemLimit(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = v, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("want a positive byte count with an optional B, KiB, MiB, GiB or TiB suffix")
	}
	return n * mult, nil
}

// checkKeyFiles: --token-keys and --auth-keys name files inside read-only
// mounts of Secret volumes, whose Secrets hold those keys.
func (b *bundle) checkKeyFiles() error {
	c := b.server()
	vols := map[string]corev1.Volume{}
	for _, v := range b.deploy.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
	}
	var errs []error
	for _, flag := range []string{"token-keys", "auth-keys"} {
		path, from, ok := b.setting(c, flag)
		if !ok || path == "" {
			errs = append(errs, fmt.Errorf("--%s is not set (every node needs the same file)", flag))
			continue
		}
		var mount *corev1.VolumeMount
		var rel string
		for i, m := range c.VolumeMounts {
			if r, ok := strings.CutPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/"); ok {
				mount, rel = &c.VolumeMounts[i], r
			}
		}
		if mount == nil {
			errs = append(errs, fmt.Errorf("--%s %s (from %s) is under no volume mount", flag, path, from))
			continue
		}
		vol, ok := vols[mount.Name]
		if !ok || vol.Secret == nil {
			errs = append(errs, fmt.Errorf("--%s %s: volume %q is not a Secret volume", flag, path, mount.Name))
			continue
		}
		if !mount.ReadOnly {
			errs = append(errs, fmt.Errorf("--%s: mount %s is not read-only", flag, mount.MountPath))
		}
		key := rel
		if len(vol.Secret.Items) > 0 {
			key = ""
			for _, it := range vol.Secret.Items {
				if it.Path == rel {
					key = it.Key
				}
			}
		}
		s := b.external[vol.Secret.SecretName]
		if s == nil {
			s = b.secrets[vol.Secret.SecretName]
		}
		if key == "" || s == nil || !keySet(s.StringData, s.Data)[key] {
			errs = append(errs, fmt.Errorf("--%s %s: Secret %q projects no file %q", flag, path, vol.Secret.SecretName, rel))
		}
	}
	return errors.Join(errs...)
}

// checkHardening: non-root, read-only root file system (with a writable
// /tmp, where mcpblob spools long strings), no privilege escalation, no
// capabilities, no service account token.
func (b *bundle) checkHardening() error {
	spec := b.deploy.Spec.Template.Spec
	c := b.server()
	psc, sc := spec.SecurityContext, c.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	var errs []error
	if !ptrTrue(sc.RunAsNonRoot) && !(sc.RunAsNonRoot == nil && ptrTrue(psc.RunAsNonRoot)) {
		errs = append(errs, errors.New("runAsNonRoot is not true"))
	}
	if !ptrTrue(sc.ReadOnlyRootFilesystem) {
		errs = append(errs, errors.New("readOnlyRootFilesystem is not true"))
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		errs = append(errs, errors.New("allowPrivilegeEscalation is not false"))
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		errs = append(errs, errors.New("capabilities: want drop [ALL] and no add"))
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		errs = append(errs, errors.New("automountServiceAccountToken is not false: mcpblob calls no Kubernetes API"))
	}
	tmp := false
	for _, m := range c.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name == m.Name && m.MountPath == "/tmp" && !m.ReadOnly && v.EmptyDir != nil {
				tmp = true
			}
		}
	}
	if ptrTrue(sc.ReadOnlyRootFilesystem) && !tmp {
		errs = append(errs, errors.New("read-only root file system without a writable emptyDir on /tmp, where mcpblob spools"))
	}
	return errors.Join(errs...)
}

// checkSettings: every MCPBLOB_* variable the ConfigMaps and the
// Deployment set is one mcpblob reads (a misspelt one would be ignored
// without a word).
func (b *bundle) checkSettings() error {
	var errs []error
	for _, cm := range b.configMaps {
		for k := range cm.Data {
			if strings.HasPrefix(k, "MCPBLOB_") && !b.settings[k] {
				errs = append(errs, fmt.Errorf("ConfigMap %q sets %s, which mcpblob does not read (cmd/mcpblob/config.go)", cm.Name, k))
			}
		}
	}
	for _, e := range b.server().Env {
		if strings.HasPrefix(e.Name, "MCPBLOB_") && !b.settings[e.Name] {
			errs = append(errs, fmt.Errorf("the Deployment sets %s, which mcpblob does not read (cmd/mcpblob/config.go)", e.Name))
		}
	}
	return errors.Join(errs...)
}

// checkImage: each images entry of the kustomization took effect on a
// container (its name matched the Deployment's image).
func (b *bundle) checkImage() error {
	var errs []error
	for _, img := range b.kust.Images {
		want := img.Name
		if img.NewName != "" {
			want = img.NewName
		}
		switch {
		case img.Digest != "":
			want += "@" + img.Digest
		case img.NewTag != "":
			want += ":" + img.NewTag
		}
		if !slices.ContainsFunc(b.deploy.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Image == want }) {
			errs = append(errs, fmt.Errorf("kustomization images entry %q matched no container: no image is %q", img.Name, want))
		}
	}
	return errors.Join(errs...)
}

// TestInvariantsReject breaks each invariant once on a fresh rendering and
// expects its check to fail.
func TestInvariantsReject(t *testing.T) {
	for _, c := range []struct {
		invariant string
		name      string
		mutate    func(*bundle)
		want      string
	}{
		{"probes", "readiness path", func(b *bundle) { b.server().ReadinessProbe.HTTPGet.Path = "/ready" }, `want "/readyz"`},
		{"probes", "liveness on an undeclared port", func(b *bundle) { b.server().LivenessProbe.HTTPGet.Port = intstr.FromString("web") }, "not a declared container port"},
		{"probes", "probe on the admin port", func(b *bundle) { b.server().ReadinessProbe.HTTPGet.Port = intstr.FromString("admin") }, "--listen's port"},
		{"admin port", "admin port moved", func(b *bundle) { b.server().Ports[1].ContainerPort = 9091 }, "--admin-listen's port"},
		{"admin port", "no admin token", func(b *bundle) {
			b.server().Env = slices.DeleteFunc(b.server().Env, func(e corev1.EnvVar) bool { return e.Name == "MCPBLOB_ADMIN_TOKEN" })
		}, "without MCPBLOB_ADMIN_TOKEN"},
		{"admin port", "optional admin token", func(b *bundle) {
			for _, e := range b.server().Env {
				if e.Name == "MCPBLOB_ADMIN_TOKEN" {
					e.ValueFrom.SecretKeyRef.Optional = new(true)
				}
			}
		}, "without MCPBLOB_ADMIN_TOKEN"},
		{"shutdown timing", "preStop shorter than the delay", func(b *bundle) { b.server().Lifecycle.PreStop.Sleep.Seconds = 3 }, "preStop sleeps"},
		{"shutdown timing", "grace period raised", func(b *bundle) { b.configMaps["mcpblob-config"].Data["MCPBLOB_GRACE_PERIOD"] = "40s" }, "does not exceed"},
		{"shutdown timing", "grace period too short", func(b *bundle) { b.deploy.Spec.Template.Spec.TerminationGracePeriodSeconds = new(int64(40)) }, "does not exceed"},
		{"references", "undefined Secret", func(b *bundle) { b.server().Env[0].ValueFrom.SecretKeyRef.Name = "mcpblob-s4" }, "neither in the kustomization"},
		{"references", "missing key", func(b *bundle) { b.server().Env[1].ValueFrom.SecretKeyRef.Key = "secret" }, `no key "secret"`},
		{"references", "undefined ConfigMap", func(b *bundle) { b.server().EnvFrom[0].ConfigMapRef.Name = "mcpblob-conf" }, "not defined in the kustomization"},
		{"kustomization lists every file", "file not listed", func(b *bundle) { b.files = append(b.files, "ingress.yaml") }, "not in kustomization.yaml"},
		{"kustomization lists every file", "example Secrets listed", func(b *bundle) { b.kust.Resources = append(b.kust.Resources, exampleSecrets) }, "placeholder values"},
		{"secrets stay out", "secret in the ConfigMap", func(b *bundle) { b.configMaps["mcpblob-config"].Data["MCPBLOB_S3_SECRET_KEY"] = "x" }, "belongs in a Secret"},
		{"secrets stay out", "minio-go's root password in the ConfigMap", func(b *bundle) { b.configMaps["mcpblob-config"].Data["MINIO_ROOT_PASSWORD"] = "x" }, "belongs in a Secret"},
		{"secrets stay out", "AWS_SECRET_KEY as a plain value", func(b *bundle) { setEnv(b.server(), "AWS_SECRET_KEY", "x") }, "not a secretKeyRef"},
		{"deployment selector", "selector off", func(b *bundle) { b.deploy.Spec.Selector.MatchLabels["app.kubernetes.io/name"] = "other" }, "does not select"},
		{"services", "selector off", func(b *bundle) { b.services[0].Spec.Selector["app.kubernetes.io/component"] = "srv" }, "does not select"},
		{"services", "admin on the public Service", func(b *bundle) {
			b.services[0].Spec.Ports = append(b.services[0].Spec.Ports, corev1.ServicePort{Name: "admin", Port: 9090, TargetPort: intstr.FromString("admin")})
		}, "together"},
		{"autoscaling", "HPA on another Deployment", func(b *bundle) { b.hpas[0].Spec.ScaleTargetRef.Name = "mcpblob-x" }, "not apps/v1 Deployment"},
		{"autoscaling", "replicas beside the HPA", func(b *bundle) { b.deploy.Spec.Replicas = new(int32(3)) }, "reset the count"},
		{"autoscaling", "no CPU request", func(b *bundle) { delete(b.server().Resources.Requests, corev1.ResourceCPU) }, "requests no cpu"},
		{"disruption budget", "selector off", func(b *bundle) { b.pdbs[0].Spec.Selector.MatchLabels["app.kubernetes.io/component"] = "srv" }, "does not select"},
		{"disruption budget", "blocks drains", func(b *bundle) {
			b.pdbs[0].Spec.MaxUnavailable = nil
			b.pdbs[0].Spec.MinAvailable = new(intstr.FromInt32(3))
		}, "block every drain"},
		{"network policy", "admin from everywhere", func(b *bundle) { b.netpols[0].Spec.Ingress[1].From = nil }, "from everywhere"},
		{"network policy", "every port", func(b *bundle) { b.netpols[0].Spec.Ingress[0].Ports = nil }, "every port"},
		{"network policy", "no DNS", func(b *bundle) { b.netpols[0].Spec.Egress = b.netpols[0].Spec.Egress[1:] }, "DNS"},
		{"service links", "service links on", func(b *bundle) { b.deploy.Spec.Template.Spec.EnableServiceLinks = nil }, "enableServiceLinks: false"},
		{"memory", "GOMEMLIMIT above the limit", func(b *bundle) { setEnv(b.server(), "GOMEMLIMIT", "2GiB") }, "not below"},
		{"key files", "token keys outside the mount", func(b *bundle) { setEnv(b.server(), "MCPBLOB_TOKEN_KEYS", "/etc/mcpblob/keys") }, "under no volume mount"},
		{"key files", "wrong file name", func(b *bundle) { setEnv(b.server(), "MCPBLOB_AUTH_KEYS", "/etc/mcpblob/api-keys/keys") }, "projects no file"},
		{"hardening", "writable root", func(b *bundle) { b.server().SecurityContext.ReadOnlyRootFilesystem = new(false) }, "readOnlyRootFilesystem"},
		{"hardening", "no /tmp", func(b *bundle) { b.server().VolumeMounts = b.server().VolumeMounts[1:] }, "/tmp"},
		{"settings exist", "misspelt variable", func(b *bundle) { b.configMaps["mcpblob-config"].Data["MCPBLOB_SHUTDOWN_DELAYS"] = "5s" }, "does not read"},
		{"image", "images entry misses", func(b *bundle) { b.server().Image = "registry.example.com/mcpblob:v1" }, "matched no container"},
	} {
		t.Run(c.invariant+"/"+c.name, func(t *testing.T) {
			b := loadBundle(t)
			i := slices.IndexFunc(invariants, func(inv invariant) bool { return inv.name == c.invariant })
			if i < 0 {
				t.Fatalf("no invariant %q", c.invariant)
			}
			if err := invariants[i].check(b); err != nil {
				t.Fatalf("fails before the change: %v", err)
			}
			c.mutate(b)
			wantRejected(t, invariants[i].check(b), c.want)
		})
	}
}

// setEnv sets variable name of container c to a plain value.
func setEnv(c *corev1.Container, name, value string) {
	for i := range c.Env {
		if c.Env[i].Name == name {
			c.Env[i] = corev1.EnvVar{Name: name, Value: value}
			return
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
}
