//go:build !unix && !windows

package proctree

func pickMode(*Manager, Mode) (Mode, platform, error) { return 0, nil, ErrUnsupported }
