//go:build !soakbroken || !linux

package hubsession

import "github.com/vcpnode/vcpnode/toolhost"

// The hooks of a daemon broken on purpose for the chaos soak's own test
// (soakbroken.go); in every other build they do nothing.
func soakBrokenSessionStarted(*session) {}

func soakBrokenDropsResult(*session, toolhost.Outcome) bool { return false }
