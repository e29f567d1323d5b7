package main

import (
	"slices"
	"strings"
	"testing"
)

func TestServiceLaunchd(t *testing.T) {
	const plist = "/Users/alice/Library/LaunchAgents/com.github.vcpnode.plist"
	st := newServiceTest(t, "darwin", 501)
	st.writeFile(t, "/Users/alice/.config/vcpnode/key", "k\n", 0o600)

	// Not loaded: bootstrap it.
	st.cmds.Fail["launchctl print"] = 113
	st.mustRun(t, "service", "install")
	want := []string{"launchctl print gui/501/com.github.vcpnode", "launchctl enable gui/501/com.github.vcpnode", "launchctl bootstrap gui/501 " + plist}
	if got := st.cmds.Take(); !slices.Equal(got, want) {
		t.Errorf("first install ran %q, want %q", got, want)
	}
	if !st.exists("/Users/alice/Library/Logs/vcpnode") {
		t.Error("the log directory was not made")
	}

	// Loaded and unchanged: restart in place.
	delete(st.cmds.Fail, "launchctl print")
	st.mustRun(t, "service", "install")
	if got := st.cmds.Take(); !slices.Equal(got, []string{"launchctl print gui/501/com.github.vcpnode", "launchctl kickstart -k gui/501/com.github.vcpnode"}) {
		t.Errorf("second install ran %q", got)
	}

	// Loaded, plist changed (a new binary path): unload and load again.
	st.mustRun(t, "service", "install", "--binary", "/opt/vcpnode")
	want = []string{"launchctl print gui/501/com.github.vcpnode", "launchctl bootout gui/501/com.github.vcpnode", "launchctl enable gui/501/com.github.vcpnode", "launchctl bootstrap gui/501 " + plist}
	if got := st.cmds.Take(); !slices.Equal(got, want) {
		t.Errorf("install with a new binary ran %q, want %q", got, want)
	}

	st.mustRun(t, "service", "stop")
	if got := st.cmds.Take(); !slices.Equal(got, []string{"launchctl print gui/501/com.github.vcpnode", "launchctl bootout gui/501/com.github.vcpnode"}) {
		t.Errorf("stop ran %q", got)
	}
	st.mustRun(t, "service", "uninstall", "--purge")
	st.cmds.Take()
	for _, p := range []string{plist, "/Users/alice/.config/vcpnode", "/Users/alice/Library/Logs/vcpnode"} {
		if st.exists(p) {
			t.Errorf("%s survived uninstall --purge", p)
		}
	}
}

func TestServiceStatus(t *testing.T) {
	st := newServiceTest(t, "linux", 1000)
	st.withSystemd(t)
	st.mustRun(t, "service", "status")
	if got := st.cmds.Take(); !slices.Equal(got, []string{"systemctl --user status --no-pager vcpnode.service"}) {
		t.Errorf("ran %q", got)
	}
	st.cmds.Fail["systemctl --user status"] = 3
	if code := st.run("service", "status"); code != exitError {
		t.Errorf("status of a stopped service: exit %d, want %d", code, exitError)
	}
	if got := st.stderr.String(); !strings.Contains(got, "the service is not running") {
		t.Errorf("stderr = %q", got)
	}
}

func TestServiceRefusals(t *testing.T) {
	tests := []struct {
		name     string
		goos     string
		euid     int
		exe      string
		args     []string
		wantCode int
		want     string
	}{
		{"both scopes", "linux", 0, "", []string{"service", "install", "--user", "--system"}, exitUsage, "exclude each other"},
		{"system without root", "linux", 1000, "", []string{"service", "start", "--system"}, exitError, "needs root"},
		{"user as root", "linux", 0, "", []string{"service", "stop", "--user"}, exitError, "--user as root"},
		{"windows", "windows", 1000, "", []string{"service", "install"}, exitError, "windows is not supported"},
		{"go run", "linux", 1000, "/tmp/go-build123/b001/exe/vcpnode", []string{"service", "install"}, exitError, "Go's build cache"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newServiceTest(t, tt.goos, tt.euid)
			if tt.exe != "" {
				st.h.executable = func() (string, error) { return tt.exe, nil }
			}
			if code := st.run(tt.args...); code != tt.wantCode {
				t.Errorf("exit %d, want %d", code, tt.wantCode)
			}
			if got := st.stderr.String(); !strings.Contains(got, tt.want) {
				t.Errorf("stderr = %q, want it to mention %q", got, tt.want)
			}
			if ran := st.cmds.Take(); len(ran) > 0 {
				t.Errorf("ran %q", ran)
			}
		})
	}
}
