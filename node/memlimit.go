package node

import (
	"runtime/debug"
	"sync"
)

// The soft memory limit is process-wide. The value in force before the
// first config set one (GOMEMLIMIT, or none) is kept so that a reload that
// removes node.memory_limit puts it back.
var (
	memLimitMu      sync.Mutex
	memLimitInitial int64 = -1
)

// applyMemoryLimit sets the runtime's soft memory limit from the config.
func applyMemoryLimit(limit int64) {
	memLimitMu.Lock()
	defer memLimitMu.Unlock()
	if memLimitInitial < 0 {
		memLimitInitial = debug.SetMemoryLimit(-1) // a negative value only reads it
	}
	if limit <= 0 {
		limit = memLimitInitial
	}
	debug.SetMemoryLimit(limit)
}
