package toolhost

import (
	"sync"
	"testing"
)

// Swap puts a tool set and its policy in force together: a reader never
// sees the new tools under the old policy. Each policy here hides the other
// set's tool, so a mixed view would expose nothing.
func TestSwapIsOneStep(t *testing.T) {
	regs := [2]*Registry{NewRegistry(), NewRegistry()}
	if err := regs[0].Replace([]Tool{newGateTool("X")}); err != nil {
		t.Fatal(err)
	}
	if err := regs[1].Replace([]Tool{newGateTool("Y")}); err != nil {
		t.Fatal(err)
	}
	pols := [2]Policy{{HiddenTools: []string{"Y"}}, {HiddenTools: []string{"X"}}}
	d := newTestDispatcher(t, pols[0], Limits{}, newGateTool("X"))
	d.Swap(regs[0], pols[0])

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			d.Swap(regs[i%2], pols[i%2])
		}
	})
	for range 20000 {
		m, err := d.Manifests()
		if err != nil {
			t.Fatal(err)
		}
		if len(m) != 1 {
			close(stop)
			wg.Wait()
			t.Fatalf("a reader saw %d exposed tools during swaps, want always 1", len(m))
		}
	}
	close(stop)
	wg.Wait()
}
