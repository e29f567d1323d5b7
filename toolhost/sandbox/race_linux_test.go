//go:build race

package sandbox

// raceBuild: this test binary carries the race detector, whose runtime
// reserves more address space than a profile's memory limit leaves a
// launcher where the limit is RLIMIT_AS (an ordinary user without a
// cgroup of their own).
const raceBuild = true
