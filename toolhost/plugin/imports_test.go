package plugin

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportBoundaries: like toolhost, the plugin host never reaches the
// node, the wire types or the network libraries (docs/architecture.md).
func TestImportBoundaries(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps returned only %d packages", len(deps))
	}
	const module = "github.com/vcpnode/vcpnode/"
	forbidden := []string{module + "node", module + "wsproto", module + "placeholders", module + "cmd/vcpnode",
		"github.com/gorilla/websocket", "github.com/cenkalti/backoff/v4"}
	for _, dep := range deps {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("toolhost/plugin depends on %s", dep)
			}
		}
	}
}
