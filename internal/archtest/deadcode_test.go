package archtest

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReleaseBinaryKeepsMethodElimination: nothing in vcpnode calls
// reflect's Method or MethodByName with a name known only at run time
// (text/template's field evaluation is the usual one). When something does,
// the linker must keep every exported method of every type that reaches an
// interface, and the binary grows by about a sixth. The failure names the
// chain of calls that makes it so.
func TestReleaseBinaryKeepsMethodElimination(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "vcpnode")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w -dumpdep", "-o", bin, module+"/cmd/vcpnode")
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, tail(out, 4000))
	}
	edges := strings.Split(string(out), "\n")
	if len(edges) < 1000 {
		t.Fatalf("go build -ldflags=-dumpdep printed %d lines; is the dependency dump still on stderr?\n%s", len(edges), tail(out, 4000))
	}
	// Each line is "from -> to"; the first edge that reaches a symbol is the
	// one the linker marked it through, so following them back gives a chain.
	parent := map[string]string{}
	var culprits []string
	for _, line := range edges {
		from, to, ok := strings.Cut(line, " -> ")
		if !ok {
			continue
		}
		if f, marked := strings.CutSuffix(from, " <ReflectMethod>"); marked {
			from = f
			if _, seen := parent[from]; seen && !slices.Contains(culprits, from) {
				culprits = append(culprits, from)
			}
		}
		to = strings.TrimSuffix(strings.TrimSuffix(to, " <ReflectMethod>"), " <UsedInIface>")
		from = strings.TrimSuffix(from, " <UsedInIface>")
		if _, seen := parent[to]; !seen {
			parent[to] = from
		}
	}
	for _, c := range culprits {
		chain := []string{c}
		for len(chain) < 40 {
			p, ok := parent[chain[len(chain)-1]]
			if !ok || slices.Contains(chain, p) {
				break
			}
			chain = append(chain, p)
		}
		t.Errorf("the binary calls reflect's Method or MethodByName dynamically, in %s, reached through\n  %s", c, strings.Join(chain, "\n  <- "))
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
