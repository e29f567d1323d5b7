package sandbox

import (
	"fmt"

	"kernel.org/pub/linux/libs/security/libcap/cap"
)

// dropCaps empties every capability set of the launcher before the exec:
// ambient, bounding (so that not even root's exec gets any back), then
// inheritable, permitted and effective. Dropping from the bounding set
// needs CAP_SETPCAP: a launcher started by an ordinary user has none to
// drop anywhere and keeps the bounding set it was given, which
// no_new_privs makes moot (no exec raises a capability).
func dropCaps() error {
	if err := cap.ResetAmbient(); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	canDrop, err := cap.GetProc().GetFlag(cap.Effective, cap.SETPCAP)
	if err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	for v := cap.Value(0); canDrop && v < cap.MaxBits(); v++ {
		if on, err := cap.GetBound(v); err != nil || !on {
			continue
		}
		if err := cap.DropBound(v); err != nil {
			return fmt.Errorf("drop %s from the bounding set: %w", v, err)
		}
	}
	if err := cap.NewSet().SetProc(); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}
