package builtins

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolsource"
)

// The built-ins serve the config's roots and never the files the node
// protects, even inside a root; they are ready at Prepare and in force as
// committed.
func TestBuiltinsServeRootsButNeverProtectedFiles(t *testing.T) {
	root := t.TempDir()
	open, secret := filepath.Join(root, "open.txt"), filepath.Join(root, "node.toml")
	for path, text := range map[string]string{open: "hello\n", secret: "key = \"s3cret\"\n"} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.Files.Roots = []string{root}
	s := New()
	p, err := s.Prepare(cfg, toolsource.Env{Protected: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	r, ok := p.(toolsource.Ready)
	if !ok {
		t.Fatal("the built-ins are not ready at Prepare")
	}
	var names []string
	var readFile toolhost.Tool
	for _, tl := range r.Ready() {
		names = append(names, tl.Spec().Name)
		if tl.Spec().Name == "ReadFile" {
			readFile = tl
		}
	}
	var specs []string
	for _, sp := range p.Specs() {
		specs = append(specs, sp.Name)
	}
	if !slices.Equal(names, specs) || readFile == nil || names[0] != "internal_request_file" {
		t.Fatalf("ready %v, specs %v", names, specs)
	}
	read := func(path string) (string, error) {
		out, err := readFile.Invoke(context.Background(), toolhost.Call{Args: map[string]json.RawMessage{"path": json.RawMessage(fmt.Sprintf("%q", path))}})
		b, _ := json.Marshal(out)
		return string(b), err
	}
	if out, err := read(open); err != nil || !strings.Contains(out, "hello") {
		t.Errorf("ReadFile %s = %s, %v", open, out, err)
	}
	if out, err := read(secret); err == nil || strings.Contains(out, "s3cret") {
		t.Errorf("ReadFile of a protected file = %s, %v; want it refused", out, err)
	}

	if len(s.Tools()) != 0 {
		t.Fatalf("tools in force before Commit: %v", s.Tools())
	}
	if w := p.Commit(func(string) bool { return false }); w != nil || len(s.Tools()) != len(names) {
		t.Fatalf("after Commit: warnings %q, %d tools", w, len(s.Tools()))
	}
	var st controlapi.StatusResponse
	s.Status(&st)
	p.Discard()
	if err := s.Close(context.Background()); err != nil || len(s.Tools()) != len(names) {
		t.Fatalf("close: %v; a discard or close changed the tools in force", err)
	}
}
