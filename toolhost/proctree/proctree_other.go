//go:build unix && !linux

package proctree

import "fmt"

// pickMode: without cgroups or a subreaper, a tree is its process group.
func pickMode(_ *Manager, want Mode) (Mode, platform, error) {
	switch want {
	case ModeAuto, ModeProcessGroup:
		return ModeProcessGroup, pgPlatform{}, nil
	}
	return 0, nil, fmt.Errorf("process tree mode %s needs Linux", want)
}
