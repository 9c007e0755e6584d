package validate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// repo is the repository root, seen from this package's folder.
const repo = "../.."

// kubeDir holds the Kubernetes manifests.
var kubeDir = filepath.Join(repo, "deploy", "kubernetes")

// exampleSecrets is the file documenting the Secrets the manifests
// reference; it is not part of the kustomization (no secret values in git).
const exampleSecrets = "secret.example.yaml"

// kinds maps "apiVersion kind" to a new value of its k8s.io/api type: the
// only kinds the manifests may hold. A kind missing here fails the check,
// so a new kind is decoded strictly before anything uses it.
var kinds = map[string]func() any{
	"v1 Namespace":                           func() any { return new(corev1.Namespace) },
	"v1 ServiceAccount":                      func() any { return new(corev1.ServiceAccount) },
	"v1 ConfigMap":                           func() any { return new(corev1.ConfigMap) },
	"v1 Secret":                              func() any { return new(corev1.Secret) },
	"v1 Service":                             func() any { return new(corev1.Service) },
	"apps/v1 Deployment":                     func() any { return new(appsv1.Deployment) },
	"autoscaling/v2 HorizontalPodAutoscaler": func() any { return new(autoscalingv2.HorizontalPodAutoscaler) },
	"policy/v1 PodDisruptionBudget":          func() any { return new(policyv1.PodDisruptionBudget) },
	"networking.k8s.io/v1 NetworkPolicy":     func() any { return new(networkingv1.NetworkPolicy) },
}

// object is one decoded Kubernetes object.
type object struct {
	src  string // file and document number
	kind string // "apiVersion kind"
	obj  any    // a pointer to the k8s.io/api type
}

// named is what every k8s.io/api object type has through its ObjectMeta.
type named interface {
	GetName() string
	GetNamespace() string
}

func (o object) name() string      { return o.obj.(named).GetName() }
func (o object) namespace() string { return o.obj.(named).GetNamespace() }

// decodeManifests decodes every YAML document of data strictly into the
// k8s.io/api type its apiVersion and kind name. A document holding only
// comments is skipped; anything else must be a known kind whose every
// field the type knows, each once.
func decodeManifests(name string, data []byte) ([]object, error) {
	var objs []object
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 1; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		src := fmt.Sprintf("%s#%d", name, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src, err)
		}
		var probe map[string]any
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			return nil, fmt.Errorf("%s: %w", src, err)
		}
		if probe == nil {
			continue
		}
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s: %w", src, err)
		}
		kind := tm.APIVersion + " " + tm.Kind
		newObj, ok := kinds[kind]
		if !ok {
			return nil, fmt.Errorf("%s: unknown kind %q (apiVersion %q): add its k8s.io/api type to kinds", src, tm.Kind, tm.APIVersion)
		}
		obj := newObj()
		if err := strictYAML(doc, obj); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", src, tm.Kind, err)
		}
		o := object{src: src, kind: kind, obj: obj}
		if o.name() == "" {
			return nil, fmt.Errorf("%s: %s without metadata.name", src, tm.Kind)
		}
		objs = append(objs, o)
	}
}

// readManifests decodes the YAML file name of deploy/kubernetes with
// decodeManifests.
func readManifests(name string) ([]object, error) {
	data, err := os.ReadFile(filepath.Join(kubeDir, name))
	if err != nil {
		return nil, err
	}
	return decodeManifests(name, data)
}

// strictYAML decodes one YAML document into v as the API server's strict
// field validation does: a key twice, or a field v's type does not have,
// fails. Field names match case-sensitively (sigs.k8s.io/json), unlike
// encoding/json, which would take readOnlyRootFileSystem for
// readOnlyRootFilesystem.
func strictYAML(doc []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	return strictJSON(j, v)
}

// strictJSON decodes JSON into v case-sensitively, failing on unknown and
// duplicate fields.
func strictJSON(data []byte, v any) error {
	strict, err := json.UnmarshalStrict(data, v, json.DisallowDuplicateFields, json.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// manifestFiles lists the YAML files of dir by base name.
func manifestFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			files = append(files, e.Name())
		}
	}
	return files, nil
}

// readKustomization decodes dir's kustomization.yaml strictly.
func readKustomization(dir string) (*types.Kustomization, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k types.Kustomization
	if err := strictYAML(data, &k); err != nil {
		return nil, fmt.Errorf("kustomization.yaml: %w", err)
	}
	if k.Kind != types.KustomizationKind || k.APIVersion != types.KustomizationVersion {
		return nil, fmt.Errorf("kustomization.yaml: want %s %s, have %q %q",
			types.KustomizationVersion, types.KustomizationKind, k.APIVersion, k.Kind)
	}
	return &k, nil
}

// render runs kustomize on dir as `kubectl apply -k` would and decodes
// what it yields strictly.
func render(dir string) ([]object, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), abs)
	if err != nil {
		return nil, fmt.Errorf("kustomize build: %w", err)
	}
	out, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize build: %w", err)
	}
	return decodeManifests("kustomize build", out)
}

// TestManifestsStrict decodes every document of every YAML file in
// deploy/kubernetes (the example Secrets included) strictly.
func TestManifestsStrict(t *testing.T) {
	files, err := manifestFiles(kubeDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no YAML files in %s", kubeDir)
	}
	for _, f := range files {
		if f == "kustomization.yaml" {
			if _, err := readKustomization(kubeDir); err != nil {
				t.Error(err)
			}
			continue
		}
		objs, err := readManifests(f)
		if err != nil {
			t.Error(err)
			continue
		}
		if len(objs) == 0 {
			t.Errorf("%s: no objects", f)
		}
	}
}

// TestManifestsStrictRejects feeds the decoder broken documents: each
// must fail, or the strict decoding above proves nothing.
func TestManifestsStrictRejects(t *testing.T) {
	deployment, err := os.ReadFile(filepath.Join(kubeDir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"misspelt field", "terminationGracePeriodSeconds:", "terminationGracePeriodSecond:", "unknown field"},
		{"misspelt nested field", "readOnlyRootFilesystem:", "readOnlyRootFileSystem:", "unknown field"},
		{"field twice", "      enableServiceLinks: false\n", "      enableServiceLinks: false\n      enableServiceLinks: true\n", "enableServiceLinks"},
		{"wrong type", "containerPort: 8080", "containerPort: http", "containerPort"},
		{"unknown kind", "kind: Deployment", "kind: Deploymnet", "unknown kind"},
		{"unknown version", "apiVersion: apps/v1", "apiVersion: apps/v1beta2", "unknown kind"},
	} {
		t.Run(c.name, func(t *testing.T) {
			broken := replaceOnce(t, string(deployment), c.old, c.new)
			_, err := decodeManifests("deployment.yaml", []byte(broken))
			wantRejected(t, err, c.want)
		})
	}
	t.Run("misspelt kustomization field", func(t *testing.T) {
		dir := copyDir(t, kubeDir)
		k := filepath.Join(dir, "kustomization.yaml")
		data, err := os.ReadFile(k)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(k, []byte(replaceOnce(t, string(data), "resources:", "resource:")), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = readKustomization(dir)
		wantRejected(t, err, "unknown field")
	})
}

// replaceOnce replaces old, which must occur exactly once in s.
func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("%q occurs %d times, want once", old, n)
	}
	return strings.Replace(s, old, new, 1)
}

// wantRejected fails the test unless err contains want, and logs the
// rejection: the end of every negative test here.
func wantRejected(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("want an error containing %q, have %v", want, err)
	}
	t.Logf("rejected: %v", err)
}

// copyDir copies the regular files of dir into a new temporary folder.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestKustomizeBuild renders the kustomization and checks that it yields
// one object per listed document, in its namespace, and no Secret.
func TestKustomizeBuild(t *testing.T) {
	k, err := readKustomization(kubeDir)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := render(kubeDir)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, f := range k.Resources {
		listed, err := readManifests(f)
		if err != nil {
			t.Fatal(err)
		}
		want += len(listed)
	}
	if len(objs) != want {
		t.Errorf("kustomize build yields %d objects, the listed files hold %d", len(objs), want)
	}
	for _, o := range objs {
		switch {
		case o.kind == "v1 Secret":
			t.Errorf("%s: the kustomization renders Secret %q: secret values stay out of git (%s documents them)", o.src, o.name(), exampleSecrets)
		case o.kind == "v1 Namespace":
			if o.name() != k.Namespace {
				t.Errorf("Namespace %q is not the kustomization's namespace %q", o.name(), k.Namespace)
			}
		case o.namespace() != k.Namespace:
			t.Errorf("%s %q is in namespace %q, not %q", o.kind, o.name(), o.namespace(), k.Namespace)
		}
	}
	if !slices.ContainsFunc(objs, func(o object) bool { return o.kind == "v1 Namespace" }) {
		t.Errorf("no Namespace %q among the rendered objects", k.Namespace)
	}
}
