// Package fakehub is what the tests add to demohub, the in-process VCP main
// server: a hub with a known key for a node under test, the server's
// plugins for its bridge, and the reading of register_tools. Tests use
// demohub's own types and constants; the release binary never links this
// package (internal/archtest checks that).
package fakehub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/wsproto"
)

// TestKey is the key of a hub StartForNode starts. It looks like a real
// key, so that a leak into a log would be found.
const TestKey = "k3y-S3cr3t_vcp.Node~42"

// StartForNode starts a hub that takes TestKey, closed when t ends, and
// returns it with the config of a node under test that connects to it:
// named "test-node", with Echo and Gate exposed and the loop guard off
// (many tests call one tool with the same arguments over and over).
func StartForNode(t testing.TB, opts demohub.Options) (*demohub.Hub, config.Config) {
	t.Helper()
	opts.Key = TestKey
	hub, err := demohub.Start(opts)
	if err != nil {
		t.Fatalf("start fake hub: %v", err)
	}
	t.Cleanup(hub.Close)
	cfg := config.Default()
	cfg.Hub.URL = hub.BaseURL()
	cfg.Hub.Key = TestKey
	cfg.Hub.Name = "test-node"
	cfg.Hub.PublicIP = "203.0.113.7"
	cfg.Node.ExposedTools = []string{"Echo", "Gate"}
	cfg.Node.RepeatLimit = 0
	return hub, cfg
}

// Registered waits for c's next register_tools and returns the names it
// registers, sorted, and each tool's manifest by name.
func Registered(ctx context.Context, c *demohub.Conn) (names []string, manifests map[string]map[string]any, err error) {
	m, err := c.WaitType(ctx, wsproto.TypeRegisterTools)
	if err != nil {
		return nil, nil, fmt.Errorf("register_tools: %w", err)
	}
	manifests = map[string]map[string]any{}
	for _, raw := range m.(wsproto.RegisterTools).Tools {
		var mf map[string]any
		if err := json.Unmarshal(raw, &mf); err != nil {
			return nil, nil, fmt.Errorf("register_tools manifest %s: %w", raw, err)
		}
		name, _ := mf["name"].(string)
		names = append(names, name)
		manifests[name] = mf
	}
	slices.Sort(names)
	return names, manifests, nil
}

// NoEnv is the environment of a node under test: nothing of the
// developer's ($VCPNODE_KEY, $STATE_DIRECTORY, credentials) but a state
// directory of the test's own, which as root would be /var/lib/vcpnode.
func NoEnv(t testing.TB) func(string) string {
	stateDir := t.TempDir()
	return func(name string) string {
		if name == "STATE_DIRECTORY" {
			return stateDir
		}
		return ""
	}
}
