package bridge

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vcpnode/vcpnode/internal/humantext"
	"github.com/vcpnode/vcpnode/wsproto"
)

// ErrNoListYet: the server was asked for its list and has not answered yet.
var ErrNoListYet = errors.New("the server has not sent its list of tools yet")

// UnlistedError says why the server's tool Name has no tool on this node:
// its Cause is ErrNotOffered (the list does not hold it), ErrNoListYet,
// ErrNoBridge or ErrNotConnected.
type UnlistedError struct {
	Name  string
	Cause error
	// Names are the tools of the server's last list, for a suggestion.
	Names []string
	text  string
}

func (e *UnlistedError) Error() string { return e.text }

func (e *UnlistedError) Unwrap() error { return e.Cause }

// Unlisted says why the server's tool name has no tool on this node, in
// the words of the client's state: the list's size and age, the server
// without a bridge, the list not come yet, no connection. A name the list
// holds gets an UnlistedError too (its tools are being registered).
func (c *Client) Unlisted(name string) *UnlistedError {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unlistedLocked(name)
}

func (c *Client) unlistedLocked(name string) *UnlistedError {
	e := &UnlistedError{Name: name, Cause: ErrNotOffered}
	for _, p := range c.plugins {
		e.Names = append(e.Names, p.Name)
	}
	ago := func(t time.Time) string { return humantext.Duration(time.Since(t)) + " ago" }
	list := fmt.Sprintf("%d tools, received %s", len(c.plugins), ago(c.listAt))
	listed := slices.ContainsFunc(c.plugins, func(p wsproto.VCPPlugin) bool { return p.Name == name })
	switch {
	case c.state == StateNone:
		e.Cause = ErrNoBridge
		e.text = fmt.Sprintf("no server tool %q: %s (it did not answer the list request of %s)", name, ErrNoBridge, ago(c.since))
	case c.state == StateAsking && !listed:
		e.Cause = ErrNoListYet
		e.text = fmt.Sprintf("no server tool %q yet: %s (asked %s)", name, ErrNoListYet, ago(c.since))
	case c.state == StateDisconnected:
		e.Cause = ErrNotConnected
		e.text = fmt.Sprintf("no server tool %q: %s", name, ErrNotConnected)
		if !c.listAt.IsZero() && !listed {
			e.text += fmt.Sprintf("; the last list (%s) does not hold it", list)
		}
	case listed:
		e.text = fmt.Sprintf("the server lists %q, but its tools are being registered here; try again in a moment", name)
	default:
		e.text = fmt.Sprintf("the server's list has no tool %q (%s)", name, list)
	}
	return e
}
