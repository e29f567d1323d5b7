package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// OverridesFile is the file in the state directory that keeps the switches
// set in the web console (expose, approval and timeout per tool). They are applied
// over the config file's [tools.NAME] tables at start and at every reload,
// and `config show` names the file as their source.
const OverridesFile = "tool-overrides.json"

// ToolOverride is one tool's switches; nil/empty means "as the config says".
type ToolOverride struct {
	Expose   *bool  `json:"expose,omitempty"`
	Approval string `json:"approval,omitempty"`
	// Timeout replaces [tools.NAME] timeout; zero keeps the config's.
	Timeout Duration `json:"timeout,omitempty"`
}

// TimeoutDefault is the timeout a ToolOverrideRequest (and `vcpnode tools
// timeout`) sets to go back to the config file's value.
const TimeoutDefault = "default"

// ParseToolTimeout reads a timeout override as the console and the CLI
// send it: a duration ("45s", "2m") checked like [tools.NAME] timeout, or
// TimeoutDefault, which is zero (the config's value).
func ParseToolTimeout(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if s == TimeoutDefault {
		return 0, nil
	}
	var d Duration
	if err := d.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("timeout: %w, or %q for the config's value", err, TimeoutDefault)
	}
	if msg := ToolTimeoutProblem(d.D()); msg != "" {
		return 0, fmt.Errorf("timeout %s", msg)
	}
	return d, nil
}

// Overrides are the console's switches, by tool name.
type Overrides struct {
	Tools map[string]ToolOverride `json:"tools"`
}

// OverridesPath is where the overrides of a node with this config live.
func (c Config) OverridesPath(getenv func(string) string, euid int) (string, error) {
	dir, err := c.Plugins.StateDirectory(getenv, euid)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, OverridesFile), nil
}

// LoadOverrides reads path; a missing file is no overrides.
func LoadOverrides(path string) (Overrides, error) {
	o := Overrides{Tools: map[string]ToolOverride{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return o, nil
	}
	if err != nil {
		return o, fmt.Errorf("tool overrides: %w", err)
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return Overrides{Tools: map[string]ToolOverride{}}, fmt.Errorf("tool overrides %s: %w", path, err)
	}
	if o.Tools == nil {
		o.Tools = map[string]ToolOverride{}
	}
	for name, t := range o.Tools {
		if msg := t.problem(); msg != "" {
			return Overrides{Tools: map[string]ToolOverride{}}, fmt.Errorf("tool overrides %s: %s: %s", path, name, msg)
		}
	}
	return o, nil
}

func (t ToolOverride) problem() string {
	if t.Timeout != 0 {
		if msg := ToolTimeoutProblem(t.Timeout.D()); msg != "" {
			return "timeout " + msg
		}
	}
	if t.Approval == "" {
		return ""
	}
	if slices.Contains(ApprovalModes, t.Approval) {
		return ""
	}
	return fmt.Sprintf("approval %q is not auto, ask or deny", t.Approval)
}

// Set changes one tool's switches (a zero ToolOverride removes them) and
// checks the value.
func (o *Overrides) Set(name string, t ToolOverride) error {
	if name == "" {
		return errors.New("no tool named")
	}
	if msg := t.problem(); msg != "" {
		return errors.New(msg)
	}
	if o.Tools == nil {
		o.Tools = map[string]ToolOverride{}
	}
	if t == (ToolOverride{}) {
		delete(o.Tools, name)
	} else {
		o.Tools[name] = t
	}
	return nil
}

// Save writes o to path atomically (0600), making the directory if needed.
func (o Overrides) Save(path string) error {
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteStateFile(path, append(data, '\n')); err != nil {
		return fmt.Errorf("tool overrides: %w", err)
	}
	return nil
}

// Apply returns c with the overrides set in its [tools.NAME] tables (c's
// own map is not changed).
func (o Overrides) Apply(c Config) Config {
	if len(o.Tools) == 0 {
		return c
	}
	tools := make(map[string]ToolConfig, len(c.Tools)+len(o.Tools))
	for k, v := range c.Tools {
		tools[k] = v
	}
	for name, ov := range o.Tools {
		t := tools[name]
		if ov.Expose != nil {
			e := *ov.Expose
			t.Expose = &e
		}
		if ov.Approval != "" {
			t.Approval = ov.Approval
		}
		if ov.Timeout != 0 {
			t.Timeout = ov.Timeout
		}
		tools[name] = t
	}
	c.Tools = tools
	return c
}

// Describe lists the overrides as TOML lines, for `config show`.
func (o Overrides) Describe() []string {
	names := make([]string, 0, len(o.Tools))
	for n := range o.Tools {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		t := o.Tools[n]
		var parts []string
		if t.Expose != nil {
			parts = append(parts, fmt.Sprintf("expose = %t", *t.Expose))
		}
		if t.Approval != "" {
			parts = append(parts, fmt.Sprintf("approval = %q", t.Approval))
		}
		if t.Timeout != 0 {
			parts = append(parts, fmt.Sprintf("timeout = %q", t.Timeout))
		}
		out = append(out, "["+keyPath("tools", n)+"] "+strings.Join(parts, ", "))
	}
	return out
}
