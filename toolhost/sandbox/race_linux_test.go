//go:build race

package sandbox

// raceBuild: this test binary carries the race detector, whose runtime
// maps more private writable memory (its shadow) than a profile's memory
// limit leaves a launcher where the limit is an rlimit (an ordinary user
// without a cgroup of their own).
const raceBuild = true
