package hubtest

import (
	"strconv"
	"testing"
	"time"
)

// TestEachWaitHasItsOwnDeadline: a test of many waits, each well within
// the patience, does not run out of it together: every wait of the Rig's
// own gets the whole patience from its start.
func TestEachWaitHasItsOwnDeadline(t *testing.T) {
	t.Parallel()
	const patience = 2 * time.Second
	r := Start(t, Options{Patience: patience})
	// Eight log lines, each a quarter of the patience after the wait for
	// it starts: twice the patience in all.
	for i := range 8 {
		line := "step " + strconv.Itoa(i)
		go func() {
			<-time.After(patience / 4)
			r.Log.Info().Msg(line)
		}()
		r.WaitLog(line)
	}
	ctx, cancel := r.Wait()
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || time.Until(d) < patience/2 {
		t.Fatalf("a wait started now ends in %v, want about %v", time.Until(d), patience)
	}
	if d, ok := r.Ctx.Deadline(); ok && time.Until(d) < patience {
		t.Fatalf("the test's context ends in %v: it holds one budget for every wait", time.Until(d))
	}
}
