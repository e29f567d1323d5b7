//go:build unix

package plugin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPlanLaunch(t *testing.T) {
	bin := t.TempDir()
	for _, name := range []string{"node", "python3", "tool"} {
		writeFile(t, bin, name, "#!/bin/sh\n")
		if err := os.Chmod(filepath.Join(bin, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, bin, "notexec", "")
	dir := t.TempDir()
	writeFile(t, dir, "bin/run", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(dir, "bin/run"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		command  string
		wantPath string // "" means /bin/sh -c
		wantArgv []string
		note     bool
	}{
		{"node X.js", filepath.Join(bin, "node"), []string{"node", "X.js"}, false},
		{"node  --flag  X.js", filepath.Join(bin, "node"), []string{"node", "--flag", "X.js"}, false},
		{"python main.py", filepath.Join(bin, "python3"), []string{"python3", "main.py"}, true},
		{"python", filepath.Join(bin, "python3"), []string{"python3"}, true},
		{"pythonista x", "", nil, false},
		{"python main.py > log", "", []string{shellPath, "-c", "python3 main.py > log"}, true},
		{"bin/run a", filepath.Join(dir, "bin/run"), []string{"bin/run", "a"}, false},
		{"./bin/run", filepath.Join(dir, "bin/run"), []string{"./bin/run"}, false},
		{"tool {}", filepath.Join(bin, "tool"), []string{"tool", "{}"}, false},
		{"tool {a,b}", "", nil, false},
		{"tool {1..3}", "", nil, false},
		{"tool 'q'", "", nil, false},
		{"tool $HOME", "", nil, false},
		{"tool a|b", "", nil, false},
		{"tool a && b", "", nil, false},
		{"tool *.txt", "", nil, false},
		{"tool ~/x", "", nil, false},
		{"A=1 tool", "", nil, false},
		{"tool\targ", "", nil, false},
		{"tool a;b", "", nil, false},
		{"cd sub", "", nil, false},
		{"exec tool", "", nil, false},
		{"notexec", "", nil, false},
		{"missing-program", "", nil, false},
		{"bin\\paperreader-cli.exe", "", nil, false},
		{"tool 用户 a-b_c.d:e,f+g@h%i^j", filepath.Join(bin, "tool"), []string{"tool", "用户", "a-b_c.d:e,f+g@h%i^j"}, false},
	}
	for _, c := range cases {
		t.Run(c.command, func(t *testing.T) {
			l, note := planLaunch(c.command, dir, bin+string(os.PathListSeparator)+"relative/dir")
			if (note != "") != c.note {
				t.Errorf("note %q, want one: %v", note, c.note)
			}
			if c.wantPath == "" {
				if !l.shell || l.path != shellPath || len(l.argv) != 3 {
					t.Fatalf("want /bin/sh -c, got %+v", l)
				}
				if c.wantArgv != nil && !slices.Equal(l.argv, c.wantArgv) {
					t.Errorf("argv %q, want %q", l.argv, c.wantArgv)
				}
				return
			}
			if l.shell || l.path != c.wantPath || !slices.Equal(l.argv, c.wantArgv) {
				t.Errorf("got %+v, want %s %q", l, c.wantPath, c.wantArgv)
			}
		})
	}
}

func TestPlanLaunchKeepsPythonWhenPresent(t *testing.T) {
	bin := t.TempDir()
	for _, name := range []string{"python", "python3"} {
		writeFile(t, bin, name, "#!/bin/sh\n")
		if err := os.Chmod(filepath.Join(bin, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l, note := planLaunch("python x.py", t.TempDir(), bin)
	if note != "" || l.argv[0] != "python" || l.path != filepath.Join(bin, "python") {
		t.Fatalf("%+v %q", l, note)
	}
}

// TestPythonFallsBackToPython3 runs a "python" plugin with a PATH that has
// only python3, both spawned directly and through sh.
func TestPythonFallsBackToPython3(t *testing.T) {
	real, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("python3 is needed for this test: %v", err)
	}
	bin := t.TempDir()
	if err := os.Symlink(strings.TrimSpace(string(real)), filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	environ := func() []string { return []string{"PATH=" + bin, "HOME=" + t.TempDir()} }
	for _, command := range []string{"python echo.py", "python echo.py 2>&1"} {
		t.Run(command, func(t *testing.T) {
			root := pluginRoot(t, "PyEcho")
			writeFile(t, filepath.Join(root, "PyEcho"), manifestFile,
				`{"name":"PyEcho","pluginType":"synchronous","entryPoint":{"command":"`+command+`"}}`)
			set := scan(t, newHost(t, Options{Environ: environ}), root)
			if len(set.Notices) != 1 || !strings.Contains(set.Notices[0].Reason, "python3") {
				t.Errorf("notices %+v, want one about python3", set.Notices)
			}
			res, err := call(context.Background(), findTool(t, set, "PyEcho"), map[string]string{"k": "v"})
			if err != nil {
				t.Fatal(err)
			}
			if got := asJSON(t, res); got != `{"major":3,"args":{"k":"v"}}` {
				t.Fatalf("result %s", got)
			}
		})
	}
}
