package node

import (
	"testing"

	"github.com/vcpnode/vcpnode/internal/testuser"
)

// TestRenamedManifestKeepsItsOwnersRulesAsAUser: the same, for a daemon run
// by an ordinary user.
func TestRenamedManifestKeepsItsOwnersRulesAsAUser(t *testing.T) {
	testuser.Rerun(t, "^TestRenamedManifestKeepsItsOwnersRules$")
}
