package config

import (
	"errors"
	"strings"
	"testing"
)

func TestControlConfigProblems(t *testing.T) {
	long := "/" + strings.Repeat("s", MaxSocketPathBytes)
	tests := []struct {
		name string
		doc  string
		want []string // problems, "" entries aside; none means valid
	}{
		{"defaults", "", nil},
		{"everything set", `[control]
socket = "/run/user/1000/vcpnode.sock"
group = "vcpnode"
[audit]
file = "/var/log/vcpnode/audit.jsonl"
[metrics]
listen = "127.0.0.1:9464"
[tools.Shell]
approval = "ask"
approval_timeout = "5m"
timeout = "10m"
[tools.Rm]
approval = "deny"
[tools.Echo]
approval = "auto"`, nil},
		{"relative paths", `[control]
socket = "vcpnode.sock"
[audit]
file = "audit.jsonl"`, []string{
			`t.toml:2:1: control.socket: "vcpnode.sock" is not an absolute path`,
			`t.toml:4:1: audit.file: "audit.jsonl" is not an absolute path`,
		}},
		{"bad group", "[control]\ngroup = \"dev ops\"", []string{`t.toml:2:1: control.group: "dev ops" is not a group name or number`}},
		{"numeric group", "[control]\ngroup = \"1001\"", nil},
		{"socket path too long", "[control]\nsocket = \"" + long + "\"", []string{
			"control.socket: is 108 bytes long; Unix socket paths are limited to 107",
		}},
		{"remote metrics", "[metrics]\nlisten = \"0.0.0.0:9464\"", []string{
			`t.toml:2:1: metrics.listen: "0.0.0.0:9464" would serve metrics beyond this machine; use 127.0.0.1 or [::1], or set metrics.allow_remote = true`,
		}},
		{"remote metrics allowed", "[metrics]\nlisten = \"0.0.0.0:9464\"\nallow_remote = true", nil},
		{"bad approval", "[tools.X]\napproval = \"maybe\"\napproval_timeout = \"10ms\"", []string{
			`t.toml:2:1: tools.X.approval: "maybe" is not one of auto, ask, deny`,
			`t.toml:3:1: tools.X.approval_timeout: must be at least 1s, like "2m" (got 10ms)`,
		}},
		{"approval outlives the call", "[tools.X]\napproval = \"ask\"\ntimeout = \"1m\"\napproval_timeout = \"1m\"", []string{
			`t.toml:4:1: tools.X.approval_timeout: approval_timeout 1m is not below timeout 1m: the call would time out before it could be approved; lower approval_timeout or raise [tools.X] timeout`,
		}},
		{"default approval outlives the call", "[tools.X]\napproval = \"ask\"\ntimeout = \"90s\"", []string{
			`t.toml:2:1: tools.X.approval: approval_timeout (default) 2m is not below timeout 1m30s`,
		}},
		{"tool timeout unknown here", "[tools.X]\napproval = \"ask\"", nil},
		{"command approval", "[tools.Files.commands.delete]\napproval = \"deny\"\n[tools.Files.commands.\"read file\"]\napproval = \"auto\"", nil},
		{"bad command approval", "[tools.Files.commands.delete]\napproval = \"never\"\n[tools.Files.commands.read]\n", []string{
			`t.toml:2:1: tools.Files.commands.delete.approval: "never" is not one of auto, ask, deny`,
			`tools.Files.commands.read.approval: is missing: a commands table sets approval = auto, ask, deny`,
		}},
		{"command ask outlives the call", "[tools.X]\ntimeout = \"1m\"\n[tools.X.commands.run]\napproval = \"ask\"", []string{
			`tools.X.approval: approval_timeout (default) 2m is not below timeout 1m`,
		}},
		{"unknown command key", "[tools.Files.commands.delete]\napprove = \"deny\"", []string{
			`t.toml:2:1: tools.Files.commands.delete.approve: unknown key (did you mean "approval"?)`,
			`tools.Files.commands.delete.approval: is missing`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), "t.toml")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Parse = %v, want a *Error", err)
			}
			if len(ce.Problems) != len(tt.want) {
				t.Errorf("%d problems, want %d:\n%v", len(ce.Problems), len(tt.want), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("problems lack %q:\n%v", w, err)
				}
			}
		})
	}
}
