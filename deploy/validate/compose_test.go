package validate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/dotenv"
	"github.com/compose-spec/compose-go/v2/loader"
	composetypes "github.com/compose-spec/compose-go/v2/types"
)

var deployDir = filepath.Join(repo, "deploy")

// loadCompose loads a compose file from dir as `docker compose` would,
// with the variables of deploy/example.env (the file operators copy to
// .env): schema validation (an unknown or misspelt key fails),
// interpolation (a required variable example.env lacks fails) and the
// consistency checks (references to undefined services, secrets, volumes)
// are all on, and every profile is active.
func loadCompose(dir, file string) (*composetypes.Project, error) {
	env, err := dotenv.Read(filepath.Join(deployDir, "example.env"))
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	details := composetypes.ConfigDetails{
		WorkingDir:  abs,
		ConfigFiles: []composetypes.ConfigFile{{Filename: filepath.Join(abs, file)}},
		Environment: env,
	}
	return loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SkipValidation, o.SkipConsistencyCheck, o.SkipInterpolation = false, false, false
		o.Profiles = []string{"*"}
	})
}

func TestCompose(t *testing.T) {
	p, err := loadCompose(deployDir, "compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	settings, _, err := mcpblobSettings(filepath.Join(repo, "cmd", "mcpblob", "config.go"))
	if err != nil {
		t.Fatal(err)
	}
	nodes := 0
	for name, s := range p.Services {
		if s.Environment["MCPBLOB_S3_ENDPOINT"] == nil {
			continue
		}
		nodes++
		// Every MCPBLOB_* variable is one mcpblob reads.
		for k := range s.Environment {
			if strings.HasPrefix(k, "MCPBLOB_") && !settings[k] {
				t.Errorf("service %s sets %s, which mcpblob does not read (cmd/mcpblob/config.go)", name, k)
			}
		}
		// docker stop waits stop_grace_period before SIGKILL: it must cover
		// the shutdown delay and the grace period.
		var need time.Duration
		for _, k := range []string{"MCPBLOB_SHUTDOWN_DELAY", "MCPBLOB_GRACE_PERIOD"} {
			v := s.Environment[k]
			if v == nil {
				t.Errorf("service %s: %s is not set", name, k)
				continue
			}
			d, err := time.ParseDuration(*v)
			if err != nil {
				t.Errorf("service %s: %s: %v", name, k, err)
			}
			need += d
		}
		if s.StopGracePeriod == nil || time.Duration(*s.StopGracePeriod) <= need {
			t.Errorf("service %s: stop_grace_period %v does not exceed shutdown delay + grace period %v", name, s.StopGracePeriod, need)
		}
	}
	if nodes != 3 {
		t.Errorf("%d mcpblob nodes in compose.yaml, want the 3 that nginx.conf and haproxy.cfg name", nodes)
	}
	if err := checkStore(p); err != nil {
		t.Error(err)
	}
}

// TestComposeRejects feeds the loader broken copies of compose.yaml.
func TestComposeRejects(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join(deployDir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"misspelt service key", "  restart: unless-stopped\n  environment:", "  restrat: unless-stopped\n  environment:", "restrat"},
		{"misspelt top-level key", "\nsecrets:\n", "\nsecret:\n", "secret"},
		{"undefined secret", "secrets: [token-keys, api-keys]", "secrets: [token-keys, api-key]", "api-key"},
		{"required variable missing", "${S3_ACCESS_KEY:?set S3_ACCESS_KEY in deploy/.env}\n    MCPBLOB_S3_SECRET_KEY",
			"${S3_USER:?set S3_USER in deploy/.env}\n    MCPBLOB_S3_SECRET_KEY", "S3_USER"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			broken := replaceOnce(t, string(orig), c.old, c.new)
			if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte(broken), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadCompose(dir, "compose.yaml")
			wantRejected(t, err, c.want)
		})
	}
}
