package sandbox

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestExplainNamesPathAndFix: what a run's output says was refused is
// checked against its grants; a refusal names the path and prints the
// configuration that grants it, anything else is the error unchanged.
func TestExplainNamesPathAndFix(t *testing.T) {
	home, tree := t.TempDir(), t.TempDir()
	plugin := filepath.Join(tree, "Plugin/Weather")
	put(t, filepath.Join(plugin, "weather.js"), "")
	put(t, filepath.Join(tree, "node_modules/dayjs/index.js"), "")
	put(t, filepath.Join(tree, "vcpshared.py"), "")
	notes := put(t, filepath.Join(home, "notes/today.md"), "")
	shared := put(t, filepath.Join(home, "shared/list.txt"), "")
	own := put(t, filepath.Join(home, "shared/vcpnode.key"), "")
	pol := &policy{Grants: []Grant{{Path: plugin, Write: true}, {Path: filepath.Join(home, "shared")}}}
	run := func(profile string, p *policy) *Run {
		return &Run{Profile: profile, tool: "Weather", kind: "plugin", pol: p, dir: plugin, home: home, protected: []string{own}}
	}
	exit := errors.New("exit status 1")
	for _, c := range []struct {
		name, out, profile string
		pol                *policy
		want               []string // in the message; none: err unchanged
	}{
		{"cat", "cat: " + notes + ": Permission denied", "default", pol,
			[]string{`plugin "Weather" was refused by the node's sandbox (profile "default"): read ` + notes,
				"[sandbox.profiles.weather]\nextends = \"default\"\nread = [\"~/notes\"]\n\n[tools.Weather]\nsandbox = \"weather\"\n"}},
		{"write of a read grant", "Error: EACCES: permission denied, open '" + shared + "'", "web", pol,
			[]string{"write " + shared, "[sandbox.profiles.web]   # added to this profile's lists\nwrite = [\"~/shared\"]\n"}},
		{"node's own file", "PermissionError: [Errno 13] Permission denied: '" + own + "'", "default", pol,
			[]string{"read " + own + ", one of the node's own files, which no profile grants"}},
		{"module of the tree", "Error: Cannot find module 'dayjs'\nRequire stack:\n- " + filepath.Join(plugin, "weather.js"), "default", pol,
			[]string{"read " + filepath.Join(tree, "node_modules/dayjs"), `read = ["` + filepath.Join(tree, "node_modules") + `"]`}},
		{"python module of the tree", "ModuleNotFoundError: No module named 'vcpshared'", "default", pol,
			[]string{"read " + filepath.Join(tree, "vcpshared.py"), `read = ["` + tree + `"]`}},
		{"write in a package", "Error: EACCES: permission denied, open '" + filepath.Join(tree, "node_modules/dayjs/memory.json") + "'", "default", pol,
			[]string{"write " + filepath.Join(tree, "node_modules/dayjs/memory.json"), `write = ["` + filepath.Join(tree, "node_modules/dayjs") + `"]`}},
		{"port", "Error: connect EACCES 127.0.0.1:8080", "offline", &policy{NetDeny: true}, []string{"TCP connect to port 8080", "network = true"}},
		{"port list", "Error: connect EACCES 10.0.0.1:8080", "web", &policy{Ports: []uint16{443}}, []string{"connect_ports = [8080]"}},
		{"file to make", "sh: 1: cannot create " + filepath.Join(home, "notes/new.md") + ": Permission denied", "default", pol,
			[]string{"write " + filepath.Join(home, "notes/new.md"), `write = ["~/notes"]`}},
		{"a shell names its script", shared + ": line 3: " + notes + ": Permission denied", "default", pol,
			[]string{"): read " + notes + ": "}},
		{"granted write", "touch: " + filepath.Join(plugin, "x") + ": Permission denied", "default", pol, nil},
		{"missing file", "cat: /nonexistent/x: Permission denied", "default", pol, nil},
		{"own error", "Error: unit kg is not a length", "default", pol, nil},
		{"no path", "Permission denied", "default", pol, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := run(c.profile, c.pol).Explain(exit, []byte(c.out))
			if c.want == nil {
				if err != exit {
					t.Errorf("got %v, want the error unchanged", err)
				}
				return
			}
			var re *RefusedError
			if !errors.As(err, &re) || !errors.Is(err, exit) {
				t.Fatalf("got %v, want a RefusedError wrapping the exit", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message lacks %q:\n%s", w, err)
				}
			}
		})
	}
}

// TestExplainReadsJoinedAndQuotedLines: a path quoted the GNU way is read
// whole, spaces and all, and an error that joins stderr's lines with " | "
// is read line by line, so a program named on the next line (readable,
// and writable to a root daemon) is not taken for a refused write.
func TestExplainReadsJoinedAndQuotedLines(t *testing.T) {
	home, plugin, bin := t.TempDir(), t.TempDir(), t.TempDir()
	pending := filepath.Join(home, ".config/app/Crash Reports/pending")
	put(t, filepath.Join(pending, "x"), "")
	prog := put(t, filepath.Join(bin, "app"), "")
	pol := &policy{Grants: []Grant{{Path: plugin, Write: true}, {Path: bin}}}
	r := &Run{Profile: "default", tool: "App", kind: "plugin", pol: pol, dir: plugin, home: home}
	joined := errors.New(`plugin "App" failed (exit status 1); stderr: find: ‘` + pending + `/’: Permission denied | ` + prog + `: 9: [: 1: unexpected operator`)
	err := r.Explain(joined)
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want a RefusedError", err)
	}
	if len(re.Refusals) != 1 || re.Refusals[0].String() != "read "+pending {
		t.Errorf("refusals %v, want only: read %s", re.Refusals, pending)
	}
	if !strings.Contains(re.Fix, `read = ["~/.config/app/Crash Reports/pending"]`) {
		t.Errorf("fix grants the wrong folder:\n%s", re.Fix)
	}
}

// TestExplainChromium: what no grant fixes (Chromium's own sandbox, its
// profile folder in the home) names the flag that does without it, and no
// grant — not the crash reporter's folder Chromium complains of first.
func TestExplainChromium(t *testing.T) {
	home, plugin := t.TempDir(), t.TempDir()
	crash := filepath.Join(home, ".config/chromium/Crash Reports")
	put(t, filepath.Join(crash, "settings.dat"), "")
	r := &Run{Profile: "default", tool: "Shot", kind: "plugin", pol: &policy{Grants: []Grant{{Path: plugin, Write: true}}}, dir: plugin, home: home}
	exit := errors.New("exit status 1")
	for _, c := range []struct{ name, out, what, hint string }{
		{"no usable sandbox", "[1:1:ERROR:file_io_posix.cc:208] open " + crash + "/settings.dat: Permission denied (13)\n" +
			"[1:1:ERROR:zygote_host_impl_linux.cc:130] No usable sandbox! If this is a Debian system, please install the chromium-sandbox package",
			"Chromium's own sandbox", "start Chromium with --no-sandbox"},
		{"root", "[1:1:ERROR:zygote_host_impl_linux.cc:103] Running as root without --no-sandbox is not supported. See https://crbug.com/638180.",
			"Chromium's own sandbox", "start Chromium with --no-sandbox"},
		{"user data directory", "[ERROR:chrome/app/chrome_main.cc:210] Failed to create a unique user data directory for headless.",
			"Chromium's profile folder", `--user-data-dir="$TMPDIR/chromium"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := r.Explain(exit, []byte(c.out))
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("got %v, want a RefusedError", err)
			}
			msg := err.Error()
			if len(re.Refusals) != 1 || !strings.HasPrefix(re.Refusals[0].String(), c.what) || !strings.Contains(msg, c.hint) {
				t.Errorf("got %v:\n%s\nwant only %q with %q", re.Refusals, msg, c.what, c.hint)
			}
			if re.Fix != "" || strings.Contains(msg, "to grant it") {
				t.Errorf("a grant offered for what no grant fixes:\n%s", msg)
			}
			var spec Spec
			if AddRefusals(&spec, re.Refusals, home) {
				t.Errorf("learning would grant %+v", spec)
			}
		})
	}
}
