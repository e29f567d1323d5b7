package sandbox

// stepDone, when a benchmark sets it (steps_bench_linux_test.go), notes
// that a step of a confined start ended, in the daemon or the launcher;
// nil otherwise, and then a step costs one comparison.
var stepDone func(step string)

func stepEnd(step string) {
	if stepDone != nil {
		stepDone(step)
	}
}
