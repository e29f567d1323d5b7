package feed

import (
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/placeholders"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

func TestPlaceholderConfigFromTOML(t *testing.T) {
	doc := `
[hub]
name = "gpu box"

[placeholders]
push_interval = "5s"

[placeholders.values]
DevBoxOwner = "Alice"
"{{Team}}" = "infra"

[[placeholders.command]]
name = "DevBoxGitBranch"
command = "git -C /srv/proj branch --show-current"
every = "1m"
timeout = "5s"

[[placeholders.command]]
name = "Uptime"
command = "uptime"
cron = "*/30 * * * * *"

[[placeholders.command]]
name = "Kernel"
command = "uname -r"

[placeholders.system]
enabled = true
`
	cfg, err := config.Parse([]byte(doc), "test.toml", toolconfig.Check)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Placeholders.PushInterval.D() != 5*time.Second || cfg.Placeholders.MinInterval.D() != 10*time.Second {
		t.Errorf("intervals = %+v", cfg.Placeholders)
	}
	trees := new(proctree.Manager) // only compared
	jobs, err := configJobs(cfg, func() *proctree.Manager { return trees }, nil)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		name      string
		scheduled bool
		timeout   time.Duration
	}
	wants := []want{
		{"value DevBoxOwner", false, 0},
		{"value {{Team}}", false, 0},
		{"command DevBoxGitBranch", true, 5 * time.Second},
		{"command Uptime", true, config.DefaultCommandTimeout},
		{"command Kernel", false, config.DefaultCommandTimeout},
		{"system status", true, config.DefaultCommandTimeout},
	}
	if len(jobs) != len(wants) {
		t.Fatalf("%d jobs, want %d", len(jobs), len(wants))
	}
	for i, w := range wants {
		j := jobs[i]
		if j.Source.Name() != w.name || (j.Schedule != nil) != w.scheduled || j.Timeout != w.timeout || j.Fingerprint == "" {
			t.Errorf("job %d = %s scheduled=%v timeout=%s, want %+v", i, j.Source.Name(), j.Schedule != nil, j.Timeout, w)
		}
	}
	for _, j := range jobs[2:5] {
		if c := j.Source.(*placeholders.Command); c.Trees != trees {
			t.Errorf("%s runs without the node's process trees", c.Name())
		}
	}
	// The system status is named after the node, made a valid name.
	if got := jobs[5].Source.Placeholders(); len(got) != 1 || got[0] != "gpu_boxStatus" {
		t.Errorf("system placeholder = %v", got)
	}
	// A line and column point at problems in the file.
	_, err = config.Parse([]byte("[placeholders.values]\nA = \"1\"\n\"{{A}}\" = \"2\"\n"), "dup.toml", toolconfig.Check)
	if err == nil || !strings.Contains(err.Error(), "dup.toml:3:") || !strings.Contains(err.Error(), "placeholders.values.A") {
		t.Errorf("duplicate key error = %v", err)
	}
}

func TestCommandEnvironHasNoKey(t *testing.T) {
	got := commandEnviron([]string{"PATH=/bin", config.EnvKey + "=" + testKey, "HOME=/root", config.EnvKey + "_OTHER=x"})
	if strings.Join(got, " ") != "PATH=/bin HOME=/root "+config.EnvKey+"_OTHER=x" {
		t.Fatalf("environment = %q", got)
	}
}

func TestCommandPlaceholderCannotReadTheKey(t *testing.T) {
	t.Setenv(config.EnvKey, testKey)
	cfg := config.Default()
	cfg.Placeholders.Command = []config.CommandPlaceholderConfig{{Name: "Env", Command: "printenv " + config.EnvKey + " || echo unset"}}
	resp, _, err := Evaluate(t.Context(), cfg, nil, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Placeholders) != 1 || resp.Placeholders[0].Value != "unset" {
		t.Fatalf("placeholders = %+v", resp.Placeholders)
	}
}

// testKey stands for a hub key: it must never reach a command.
const testKey = "k3y-S3cr3t_vcp.Node~42"
