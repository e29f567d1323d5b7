package systemd

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the shipped units from the templates")

// The units shipped in this directory are the templates rendered with the
// default paths: they are the golden files.
func TestShippedUnitsMatchTheTemplates(t *testing.T) {
	tests := []struct {
		file   string
		render func(Unit) ([]byte, error)
		unit   Unit
	}{
		{"vcpnode.service", System, DefaultSystem()},
		{"vcpnode-package.service", System, DefaultPackage()},
		{"vcpnode-user.service", User, DefaultUser()},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := tt.render(tt.unit)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(tt.file, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatalf("%v (run go test ./service/systemd -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is not what its template renders; run go test ./service/systemd -update\n--- rendered:\n%s", tt.file, got)
			}
		})
	}
}

func TestSystemUnitDirectives(t *testing.T) {
	u := Unit{Binary: "/opt/vcp node/bin/vcpnode", Config: "/etc/vcpnode/100%.toml", KeyFile: "/etc/vcpnode/key"}
	got, err := System(u)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"Type=notify",
		"User=vcpnode",
		`ExecStart="/opt/vcp node/bin/vcpnode" run --config /etc/vcpnode/100%%.toml`,
		`ExecReload="/opt/vcp node/bin/vcpnode" reload --config /etc/vcpnode/100%%.toml`,
		"LoadCredential=vcp_key:/etc/vcpnode/key",
		"Restart=on-failure",
		"KillMode=mixed",
		"TimeoutStopSec=30s",
		"RuntimeDirectory=vcpnode",
		// Searchable by all: a [control] group other than vcpnode must
		// reach the socket, whose own mode keeps everyone else out.
		"RuntimeDirectoryMode=0755",
		"StateDirectory=vcpnode",
		"ConfigurationDirectory=vcpnode",
		"NoNewPrivileges=yes",
		"ProtectSystem=strict",
		"ProtectHome=read-only",
		"PrivateTmp=yes",
		"PrivateDevices=yes",
		"RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK",
		"LockPersonality=yes",
		"WantedBy=multi-user.target",
	} {
		if !hasLine(got, line) {
			t.Errorf("system unit lacks the line %q", line)
		}
	}
	if bytes.Contains(got, []byte("\nMemoryDenyWriteExecute=")) {
		t.Error("MemoryDenyWriteExecute breaks Node.js and Python plugins")
	}

	u.KeyFile = ""
	got, err = System(u)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(got, []byte("LoadCredential")) {
		t.Errorf("without a key file the unit should not load a credential:\n%s", got)
	}
}

func TestUserUnitIgnoresTheKeyFile(t *testing.T) {
	got, err := User(Unit{Binary: "/home/a/bin/vcpnode", Config: "/home/a/.config/vcpnode/config.toml", KeyFile: "/home/a/key"})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"Type=notify", "ExecStart=/home/a/bin/vcpnode run --config /home/a/.config/vcpnode/config.toml", "WantedBy=default.target"} {
		if !hasLine(got, line) {
			t.Errorf("user unit lacks the line %q", line)
		}
	}
	if bytes.Contains(got, []byte("LoadCredential")) || bytes.Contains(got, []byte("User=")) {
		t.Errorf("user unit names a credential or a user:\n%s", got)
	}
}

func TestExecArg(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/usr/local/bin/vcpnode", "/usr/local/bin/vcpnode"},
		{"%h/.local/bin/vcpnode", "%h/.local/bin/vcpnode"},
		{"/a/%h/b", "/a/%%h/b"},
		{"/a b/c", `"/a b/c"`},
		{`/a"b`, `"/a\"b"`},
		{`/a\b`, `"/a\\b"`},
		{"/a$HOME", "/a$$HOME"},
		{"/a;b", `"/a;b"`},
	}
	for _, tt := range tests {
		if got := execArg(tt.in); got != tt.want {
			t.Errorf("execArg(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestRenderRefusesBadPaths(t *testing.T) {
	good := DefaultSystem()
	tests := []struct {
		name string
		edit func(*Unit)
	}{
		{"relative binary", func(u *Unit) { u.Binary = "bin/vcpnode" }},
		{"empty config", func(u *Unit) { u.Config = "" }},
		{"newline in key file", func(u *Unit) { u.KeyFile = "/etc/key\nExecStartPre=/bin/sh" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := good
			tt.edit(&u)
			if _, err := System(u); !errors.Is(err, ErrBadPath) {
				t.Errorf("System() error = %v, want ErrBadPath", err)
			}
		})
	}
}

func TestSysusersCreatesTheServiceUser(t *testing.T) {
	if !hasLine(Sysusers(), `u vcpnode - "vcpnode daemon" /var/lib/vcpnode`) {
		t.Errorf("sysusers entry:\n%s", Sysusers())
	}
}

// systemd-sysusers reads the entry as install runs it, into a scratch root.
func TestSysusersEntryCreatesTheUser(t *testing.T) {
	tool, err := exec.LookPath("systemd-sysusers")
	if err != nil {
		t.Skip("systemd-sysusers is not installed (Debian: apt-get install systemd); the sysusers.d entry was not tried")
	}
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(root, "vcpnode.conf")
	if err := os.WriteFile(conf, Sysusers(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tool, "--root="+root, conf).CombinedOutput(); err != nil {
		t.Fatalf("systemd-sysusers: %v\n%s", err, out)
	}
	passwd, err := os.ReadFile(filepath.Join(root, "etc", "passwd"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(passwd), "vcpnode:x:") || !strings.Contains(string(passwd), ":/var/lib/vcpnode:") {
		t.Errorf("passwd after systemd-sysusers:\n%s", passwd)
	}
}

// systemd-analyze verify loads the units the way systemd would. It exits 0
// on unknown keys and bad values, so any output fails the test.
func TestSystemdAnalyzeVerify(t *testing.T) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian: apt-get install systemd); the units were not verified")
	}
	bin, err := os.Executable() // verify insists that ExecStart= exists
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tests := []struct {
		name   string
		render func(Unit) ([]byte, error)
		args   []string
	}{
		{"system", System, []string{"verify"}},
		{"user", User, []string{"--user", "verify"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unit, err := tt.render(Unit{Binary: bin, Config: filepath.Join(dir, "config.toml"), KeyFile: filepath.Join(dir, "key")})
			if err != nil {
				t.Fatal(err)
			}
			unitDir := filepath.Join(dir, tt.name)
			if err := os.Mkdir(unitDir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(unitDir, UnitName)
			if err := os.WriteFile(path, unit, 0o644); err != nil {
				t.Fatal(err)
			}
			runtime := filepath.Join(unitDir, "run")
			if err := os.Mkdir(runtime, 0o700); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(tool, append(tt.args, "--man=no", path)...)
			// The user manager needs a runtime directory of its own.
			cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "SYSTEMD_LOG_COLOR=0")
			out, err := cmd.CombinedOutput()
			if err != nil || len(bytes.TrimSpace(out)) > 0 {
				t.Errorf("systemd-analyze %s: %v\n%s", strings.Join(tt.args, " "), err, out)
			}
		})
	}
}

func hasLine(b []byte, line string) bool {
	for l := range strings.SplitSeq(string(b), "\n") {
		if l == line {
			return true
		}
	}
	return false
}
