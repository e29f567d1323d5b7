//go:build !unix

package direct

import "fmt"

// newChannel is a loopback connection the host makes back: Windows passes
// a child no descriptor past stderr, so there is no fd 3.
func newChannel() (channel, error) {
	c, err := newTCPChannel()
	if err != nil {
		return nil, fmt.Errorf("loopback channel: %w", err)
	}
	return c, nil
}
