//go:build !linux

package sandbox

import "github.com/vcpnode/vcpnode/toolhost/proctree"

// Probe: nothing confines a command here, so there is nothing to observe.
func (s *Sandbox) Probe(*proctree.Manager, string, int) ([]Protection, error) { return nil, nil }
