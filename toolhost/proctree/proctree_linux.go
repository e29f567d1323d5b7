package proctree

import "fmt"

// pickMode: a cgroup per tree when the daemon may create them, else the
// subreaper walk.
func pickMode(m *Manager, want Mode) (Mode, platform, error) {
	switch want {
	case ModeAuto:
		cg, err := newCgroupPlatform(m.log)
		if err == nil {
			return ModeCgroup, cg, nil
		}
		m.log.Info().Err(err).Msg("no cgroup of our own; tracking plugin process trees as a child subreaper")
		return pickMode(m, ModeSubreaper)
	case ModeCgroup:
		cg, err := newCgroupPlatform(m.log)
		if err != nil {
			return 0, nil, err
		}
		return ModeCgroup, cg, nil
	case ModeSubreaper:
		w, err := newWalker(m.log)
		if err != nil {
			return 0, nil, fmt.Errorf("become a child subreaper: %w", err)
		}
		return ModeSubreaper, w, nil
	case ModeProcessGroup:
		return ModeProcessGroup, pgPlatform{}, nil
	}
	return 0, nil, fmt.Errorf("unknown process tree mode %d", want)
}
