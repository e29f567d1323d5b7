package controlapi

// SandboxStatus is the sandbox section of GET /v1/status: how tools'
// processes are confined here, and what is not enforced.
type SandboxStatus struct {
	// Mechanism is "landlock", or "none" where nothing confines files and network.
	Mechanism   string `json:"mechanism"`
	LandlockABI int    `json:"landlockAbi,omitempty"`
	// Memory, Pids, CPU say how each limit is applied ("cgroup v2",
	// "cgroup v1", "rlimit"); empty where it is not.
	Memory string `json:"memory,omitempty"`
	Pids   string `json:"pids,omitempty"`
	CPU    string `json:"cpu,omitempty"`
	// Default is the profile of every tool that names none.
	Default  string   `json:"defaultProfile"`
	Profiles []string `json:"profiles"`
	// NotEnforced lists what no profile gets on this machine.
	NotEnforced []string `json:"notEnforced,omitempty"`
	Require     bool     `json:"require"`
	// Why explains a missing mechanism.
	Why string `json:"why,omitempty"`
	// Derived are the grants each tool's last process got from what it
	// ran (its script, node_modules, venv, package caches…), by tool
	// name, "mcp:SERVER" or "placeholder:NAME".
	Derived map[string][]SandboxGrant `json:"derived,omitempty"`
}

// SandboxGrant is one path a tool's processes may use beyond their
// profile, and why.
type SandboxGrant struct {
	Path  string `json:"path"`
	Write bool   `json:"write,omitempty"`
	From  string `json:"from"`
}
