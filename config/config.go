// Package config is vcpnode's TOML configuration: the structs and their
// defaults, every check (all problems at once, with positions), where the
// key comes from (environment, systemd credential, file), the hub URL, the
// control socket's location and redaction of the key. It is a leaf: it
// imports no tool, placeholder or node package, so whatever needs a setting
// or redaction links none of them. The rules of the tool subsystems'
// settings come in as Checks (package toolconfig).
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// EnvKey is the environment variable that overrides hub.key and hub.key_file.
const EnvKey = "VCPNODE_KEY"

// Config is the node's TOML configuration. Start from Default; the
// file is decoded over it, so a key the file leaves out keeps its default.
type Config struct {
	Hub   HubConfig             `toml:"hub"`
	Node  NodeConfig            `toml:"node"`
	Files FilesConfig           `toml:"files"`
	Log   LogConfig             `toml:"log"`
	Tools map[string]ToolConfig `toml:"tools"`

	Plugins PluginsConfig `toml:"plugins"` // plugins.go
	Control ControlConfig `toml:"control"` // control.go
	Audit   AuditConfig   `toml:"audit"`   // control.go
	Metrics MetricsConfig `toml:"metrics"` // control.go
	Console ConsoleConfig `toml:"console"` // console.go

	Placeholders PlaceholdersConfig `toml:"placeholders"` // placeholders.go

	MCP      MCPConfig      `toml:"mcp"`      // mcp.go
	Observer ObserverConfig `toml:"observer"` // observer.go
	Sandbox  SandboxConfig  `toml:"sandbox"`  // sandbox.go
	Bridge   BridgeConfig   `toml:"bridge"`   // bridge.go
}

// HubConfig is the [hub] table: where the main server is and how to talk to it.
type HubConfig struct {
	// URL is the main server's base URL (http, https, ws or wss); see HubURL.
	URL string `toml:"url"`
	// Key is the VCP key inline; prefer KeyFile or $VCPNODE_KEY. Never print it.
	Key     string `toml:"key"`
	KeyFile string `toml:"key_file"`
	// Name is the serverName shown to the server; empty means the hostname.
	Name             string   `toml:"name"`
	PingInterval     Duration `toml:"ping_interval"`
	PongTimeout      Duration `toml:"pong_timeout"`
	HandshakeTimeout Duration `toml:"handshake_timeout"`
	// PublicIP is reported in report_ip; empty reports none.
	PublicIP string `toml:"public_ip"`
	// Auth is how the key reaches the server: HubAuths (auth.go).
	Auth string `toml:"auth"`
}

// NodeConfig is the [node] table: the mode, limits and the exposure lists.
type NodeConfig struct {
	// Mode is "distributed", "observer" or "both" (mode.go); empty follows
	// [observer] enabled. Read it through Config.Mode.
	Mode string `toml:"mode"`
	// Register sends the tools to the server as soon as a connection is
	// made; false holds them until `vcpnode register`. Read at start.
	Register       bool `toml:"register"`
	MaxConcurrent  int  `toml:"max_concurrent"`
	Queue          int  `toml:"queue"`
	MaxResultBytes int  `toml:"max_result_bytes"`
	// Oversize is what a result above MaxResultBytes becomes: "truncate"
	// (its head and a note) or "error".
	Oversize string `toml:"oversize"`
	// RepeatLimit is how many calls of one tool with the same arguments
	// RepeatWindow allows before the next is answered with an error; 0
	// turns the loop guard off.
	RepeatLimit   int      `toml:"repeat_limit"`
	RepeatWindow  Duration `toml:"repeat_window"`
	ShutdownGrace Duration `toml:"shutdown_grace"`
	// MemoryLimit is the Go runtime's soft memory limit in bytes
	// (debug.SetMemoryLimit); 0 leaves the runtime's own (GOMEMLIMIT or none).
	MemoryLimit int64 `toml:"memory_limit"`
	// ExposedTools, when non-empty, is the only tools exposed.
	ExposedTools []string `toml:"exposed_tools"`
	HiddenTools  []string `toml:"hidden_tools"`
	// ToolNames is the template of the names the server sees: {tool} is
	// the tool's own name, {node} the node's (hub.name); "{tool}" keeps
	// them. [tools.NAME] name sets one tool's (names.go).
	ToolNames string `toml:"tool_names"`
	// Labels describe the node to the server, in register_tools
	// capabilities.labels (labels.go). Nothing secret belongs here.
	Labels map[string]string `toml:"labels"`
}

// FilesConfig is the [files] table for internal_request_file.
type FilesConfig struct {
	// Roots are the directories files may be served from; empty disables serving.
	Roots    []string `toml:"roots"`
	MaxBytes int64    `toml:"max_bytes"`
	// WriteMaxBytes caps the file WriteFile leaves behind (after an append
	// too); the content arrives in one frame, so the frame limit bounds it.
	WriteMaxBytes int64 `toml:"write_max_bytes"`
}

// LogConfig is the [log] table.
type LogConfig struct {
	Level  string `toml:"level"`  // debug | info | warn | error
	Format string `toml:"format"` // auto | console | json
}

// ToolConfig is one [tools.NAME] table; zero values mean "not set".
type ToolConfig struct {
	// Name is the name the server sees, instead of [node] tool_names'.
	Name          string   `toml:"name"`
	Expose        *bool    `toml:"expose"`
	Timeout       Duration `toml:"timeout"`
	MaxConcurrent int      `toml:"max_concurrent"`
	// RepeatLimit replaces [node] repeat_limit for this tool; 0 turns the
	// loop guard off for it.
	RepeatLimit *int `toml:"repeat_limit"`
	// Approval is "auto" (default), "ask" (the owner confirms each remote
	// call) or "deny"; ApprovalTimeout bounds "ask" (default 2m). Checked
	// in control.go.
	Approval        string   `toml:"approval"`
	ApprovalTimeout Duration `toml:"approval_timeout"`
	// MaxMemory caps a direct plugin's Node.js heap, in MiB
	// (--max-old-space-size); 0 is Node's default. Other tools ignore it.
	MaxMemory int `toml:"max_memory"`
	// Sandbox names the permission profile the tool's processes run under
	// ([sandbox]); empty is sandbox.profile. Checked in toolconfig.
	Sandbox string `toml:"sandbox"`
	// Warm keeps interpreters of a stdio plugin started ahead of its calls
	// (true), or never (false); unset follows [plugins] warm. See plugins.go.
	Warm *bool `toml:"warm"`
	// Preload names Python modules each waiting interpreter of a warm
	// plugin imports before its call. Checked in toolconfig.
	Preload []string `toml:"preload,omitempty"`
	// Commands set the approval of single commands of a multi-command
	// tool (a plugin's invocation commands, an MCP server's tools), by
	// command name: [tools.NAME.commands.CMD]. Checked in control.go.
	Commands map[string]ToolCommandConfig `toml:"commands"`
}

// ToolCommandConfig is one [tools.NAME.commands.CMD] table.
type ToolCommandConfig struct {
	// Approval is "auto", "ask" or "deny" for calls of this command; ""
	// leaves it to the tool's. A "deny" anywhere wins.
	Approval string `toml:"approval"`
	// Expose = false leaves the command out of register_tools, the prompt
	// formats and `vcpnode mcp`; a call of it is answered as an unknown
	// command. Unset or true offers it with its tool.
	Expose *bool `toml:"expose"`
}

// Sizes and limits the config is checked against.
const (
	KiB = 1 << 10
	MiB = 1 << 20

	// ServerFrameLimit is the server's WebSocket message limit (ws maxPayload).
	ServerFrameLimit = 100 * MiB
	// DefaultWriteMaxBytes is [files] write_max_bytes when unset: room for
	// any source file a model writes, not for a disk-filling one.
	DefaultWriteMaxBytes = 1 * MiB
)

// Default is the configuration used for every key a file leaves out.
// It passes Validate; only the key must come from somewhere.
func Default() Config {
	return Config{
		Hub: HubConfig{
			URL:              "ws://127.0.0.1:6005",
			PingInterval:     Duration(20 * time.Second),
			PongTimeout:      Duration(15 * time.Second),
			HandshakeTimeout: Duration(10 * time.Second),
			Auth:             "auto",
		},
		Node: NodeConfig{
			Register:       true,
			MaxConcurrent:  8,
			Queue:          64,
			MaxResultBytes: 32 * MiB,
			Oversize:       "truncate",
			RepeatLimit:    10,
			RepeatWindow:   Duration(time.Minute),
			ShutdownGrace:  Duration(10 * time.Second),
			Labels:         map[string]string{},
			ToolNames:      "{tool}",
		},
		// A 50 MiB file is about 67 MiB in base64: inside the server's
		// 100 MiB frame, with room to spare.
		Files: FilesConfig{MaxBytes: 50 * MiB, WriteMaxBytes: DefaultWriteMaxBytes},
		Log:   LogConfig{Level: "info", Format: "auto"},

		Plugins: defaultPluginsConfig(),
		Control: defaultControlConfig(),
		Metrics: defaultMetricsConfig(),
		Console: defaultConsoleConfig(),

		Placeholders: defaultPlaceholdersConfig(),

		MCP:      defaultMCPConfig(),
		Observer: defaultObserverConfig(),
		Bridge:   defaultBridgeConfig(),
	}
}

// Load reads the TOML file at path over Default and validates it with
// config's own checks and checks (see Check). Problems in the file come
// back together as a *Error.
func Load(path string, checks ...Check) (Config, error) {
	p, err := LoadPartial(path, checks...)
	if err != nil {
		return Config{}, err
	}
	return p.Config, nil
}

// LoadPartial is Load that, when the file has problems, also returns what
// could be read of it (see Partial), with the *Error.
func LoadPartial(path string, checks ...Check) (Partial, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Partial{Config: Default(), Unread: "the file could not be read"}, fmt.Errorf("read config: %w", err)
	}
	return ParsePartial(data, path, checks...)
}

// Parse decodes data over Default in strict mode and validates the
// result. name labels problems (usually the file's path). Every problem
// comes back at once, wrong types included: after a type error the key is
// set aside and the rest decoded again. Only a syntax error stops at the
// first, since the rest of the document cannot be read.
func Parse(data []byte, name string, checks ...Check) (Config, error) {
	p, err := ParsePartial(data, name, checks...)
	if err != nil {
		return Config{}, err
	}
	return p.Config, nil
}

// ParsePartial is Parse that, when data has problems, also returns what
// could be read of it, for a check that goes on past them.
func ParsePartial(data []byte, name string, checks ...Check) (Partial, error) {
	var problems []Problem
	var cfg Config
	var bad []string // keys of the problems with a known setting
	doc := data
	for pass := 0; ; pass++ {
		cfg = Default()
		dec := toml.NewDecoder(bytes.NewReader(doc)).DisallowUnknownFields()
		ps, badKey, fatal := decodeProblems(dec.Decode(&cfg))
		if pass > 0 { // positions in a re-encoded document mean nothing
			for i := range ps {
				ps[i].Line, ps[i].Column = 0, 0
			}
		}
		problems = append(problems, ps...)
		if !fatal {
			break // ps are unknown keys: no setting read from them
		}
		next, ok := withoutKey(doc, badKey)
		if !ok || pass >= maxTypeProblems {
			unread := "the file does not parse"
			if ok {
				unread = fmt.Sprintf("it has more than %d wrong types", maxTypeProblems)
			}
			positions := scanDocument(data).positions
			return Partial{Config: Default(), Unread: unread},
				&Error{File: name, Problems: locate(pointToFirst(problems, positions), positions)}
		}
		bad = append(bad, keyPath(badKey...))
		doc = next
	}
	scan := scanDocument(data)
	valueProblems := append(scan.problems, cfg.problems(checks)...)
	for _, p := range valueProblems {
		bad = append(bad, p.Key)
	}
	problems = append(problems, valueProblems...)
	if len(problems) == 0 {
		return Partial{Config: cfg, positions: scan.positions}, nil
	}
	return Partial{Config: cfg, bad: bad, positions: scan.positions}, &Error{File: name, Problems: locate(problems, scan.positions)}
}

// maxTypeProblems bounds the decode passes of one document.
const maxTypeProblems = 100

// locate fills in the positions problems lack from the document's and
// sorts them.
func locate(problems []Problem, positions positionIndex) []Problem {
	for i := range problems {
		if problems[i].Line == 0 {
			problems[i].Line, problems[i].Column = positions.find(problems[i].Key)
		}
	}
	sortProblems(problems)
	return problems
}

// withoutKey re-encodes doc without the key at path (in every element of an
// array of tables on the way), so that decoding can go on past a wrong type.
func withoutKey(doc []byte, path []string) ([]byte, bool) {
	if len(path) == 0 {
		return nil, false
	}
	var tree map[string]any
	if err := toml.Unmarshal(doc, &tree); err != nil {
		return nil, false
	}
	if !deleteKey(tree, path) {
		return nil, false
	}
	out, err := toml.Marshal(tree)
	return out, err == nil
}

func deleteKey(v any, path []string) bool {
	switch t := v.(type) {
	case map[string]any:
		child, ok := t[path[0]]
		if !ok {
			return false
		}
		if len(path) == 1 {
			delete(t, path[0])
			return true
		}
		return deleteKey(child, path[1:])
	case []any:
		found := false
		for _, e := range t {
			found = deleteKey(e, path) || found
		}
		return found
	case []map[string]any:
		found := false
		for _, e := range t {
			found = deleteKey(e, path) || found
		}
		return found
	}
	return false
}

// Validate checks every setting, with checks besides config's own (see
// Check), and reports every problem at once, as a
// *Error (without line numbers; Parse adds them), or nil. A
// missing key is not a problem: it may come from the environment; see Key.
func (c Config) Validate(checks ...Check) error {
	if p := c.problems(checks); len(p) > 0 {
		return &Error{Problems: p}
	}
	return nil
}

// ErrNoKey means no key was configured anywhere.
var ErrNoKey = errors.New("no hub key: set hub.key_file (or hub.key) in the config, or " + EnvKey + " in the environment")

// maxKeyFileBytes bounds what Key reads: a key file holds one short line.
const maxKeyFileBytes = 4 * KiB

// Key returns the VCP key: $VCPNODE_KEY if set, else the systemd
// credential vcp_key (credentials.go), else hub.key, else the trimmed
// contents of hub.key_file. The key is checked to be URL-path-safe; no error
// ever contains it.
func (c Config) Key(getenv func(string) string) (string, error) {
	var key, source string
	credKey, credSource, fromCredential, err := credentialKey(getenv)
	if err != nil && strings.TrimSpace(getenv(EnvKey)) == "" {
		return "", err
	}
	switch {
	case strings.TrimSpace(getenv(EnvKey)) != "":
		key, source = strings.TrimSpace(getenv(EnvKey)), EnvKey
	case fromCredential:
		key, source = credKey, credSource
	case c.Hub.Key != "":
		key, source = c.Hub.Key, "hub.key"
	case c.Hub.KeyFile != "":
		data, err := readKeyFile(c.Hub.KeyFile)
		if err != nil {
			return "", err
		}
		key, source = strings.TrimSpace(string(data)), "hub.key_file "+strconv.Quote(c.Hub.KeyFile)
		if key == "" {
			return "", fmt.Errorf("%s is empty: put the VCP key in it", source)
		}
	default:
		return "", ErrNoKey
	}
	if msg := keyProblem(key); msg != "" {
		return "", fmt.Errorf("%s: %w: %s", source, ErrInvalidKey, msg)
	}
	rememberKey(key) // Redact hides it from now on, wherever it appears
	return key, nil
}

func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hub.key_file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("hub.key_file: read %s: %w", path, err)
	}
	if len(data) > maxKeyFileBytes {
		return nil, fmt.Errorf("hub.key_file %q is larger than %d bytes: it should hold only the key", path, maxKeyFileBytes)
	}
	return data, nil
}

// Redacted returns a copy safe to print: the inline key is replaced, and a
// key pasted into the URL is redacted.
func (c Config) Redacted() Config {
	r := c
	if r.Hub.Key != "" {
		r.Hub.Key = "REDACTED"
	}
	r.Hub.URL = Redact(r.Hub.URL)
	r.Node.ExposedTools = slices.Clone(c.Node.ExposedTools)
	r.Node.HiddenTools = slices.Clone(c.Node.HiddenTools)
	r.Files.Roots = slices.Clone(c.Files.Roots)
	r.Tools = maps.Clone(c.Tools)
	r.Plugins.Dirs = slices.Clone(c.Plugins.Dirs)
	r.Plugins.PassEnv = slices.Clone(c.Plugins.PassEnv)
	return r
}

// Duration is a time.Duration written in TOML as a string like "30s" or "1m30s".
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes d in time.Duration's notation.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses a time.ParseDuration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q: write a number with a unit, like \"30s\", \"1m30s\" or \"500ms\"", b)
	}
	*d = Duration(v)
	return nil
}
