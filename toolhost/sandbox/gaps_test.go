package sandbox

import (
	"errors"
	"slices"
	"testing"
)

// TestGapsOfTheProfilesInUse: only what a profile in use asks for and the
// machine lacks is a gap; Require turns a gap into ErrNotEnforced. The
// machine is described, not detected: these are the cases no one machine has.
func TestGapsOfTheProfilesInUse(t *testing.T) {
	profiles, err := Resolve(map[string]Spec{
		"capped":  {Extends: "default", CPU: 0.5, Pids: 16},
		"unused":  {Extends: "offline", Memory: "64MiB"},
		"nothing": {Extends: "none", CPU: 1},
		"ports":   {Extends: "default", ConnectPorts: []int{443}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		caps  Capabilities
		tools map[string]string
		want  []string
	}{
		{"everything enforced", Capabilities{PidNS: true, Files: true, Network: true, Seccomp: true, Memory: "cgroup v2", Pids: "cgroup v2", CPU: "cgroup v2"},
			map[string]string{"A": "capped", "B": "nothing"}, nil},
		{"no cgroup, root", Capabilities{PidNS: true, Files: true, Network: true, Seccomp: true, Memory: "rlimit"},
			map[string]string{"A": "capped", "B": "nothing"}, []string{"pids limit", "cpu limit"}},
		{"unused profiles ask for nothing", Capabilities{PidNS: true, Files: true, Network: true, Seccomp: true},
			nil, nil},
		{"no Landlock", Capabilities{PidNS: true, Seccomp: true, Memory: "rlimit", Pids: "rlimit"},
			map[string]string{"A": "default"}, []string{"file access"}},
		{"no TCP rules, offline in use", Capabilities{PidNS: true, Files: true, CPU: "cgroup v1"},
			map[string]string{"B": "offline"}, []string{"syscall filter", "network"}},
		{"no TCP rules, the filter keeps offline whole", Capabilities{PidNS: true, Files: true, Seccomp: true},
			map[string]string{"B": "offline"}, nil},
		{"no TCP rules, connect_ports in use", Capabilities{PidNS: true, Files: true, Seccomp: true},
			map[string]string{"B": "ports"}, []string{"network"}},
		{"no namespaces", Capabilities{Files: true, Network: true, Seccomp: true},
			map[string]string{"A": "default"}, []string{"PID namespace"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Sandbox{caps: c.caps}
			opts := Options{Profiles: profiles, Tools: c.tools, Home: t.TempDir(), TempDir: t.TempDir()}
			if err := s.Update(opts); err != nil {
				t.Fatal(err)
			}
			if got := s.Gaps(); !slices.Equal(got, c.want) {
				t.Errorf("Gaps() = %q, want %q", got, c.want)
			}
			opts.Require = true
			err := s.Update(opts)
			if len(c.want) > 0 && !errors.Is(err, ErrNotEnforced) || len(c.want) == 0 && err != nil {
				t.Errorf("Update with Require: %v", err)
			}
		})
	}
}
