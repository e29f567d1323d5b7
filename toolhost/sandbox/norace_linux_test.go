//go:build !race

package sandbox

// raceBuild: this test binary carries the race detector.
const raceBuild = false
