//go:build !linux

package sandbox

// refusals: nothing is refused where nothing is enforced.
func (r *Run) refusals([][]byte) []Refusal { return nil }
