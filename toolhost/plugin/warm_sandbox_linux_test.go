package plugin

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestWarmSandboxStillApplies: an interpreter started ahead of the call
// runs under the plugin's profile like a cold run: under default it cannot
// read a file outside its grants, and it writes its own temporary directory.
func TestWarmSandboxStillApplies(t *testing.T) {
	needPython(t)
	e := newSandboxEnv(t, "default", nil)
	dir := filepath.Join(e.root, "Probe")
	writeFile(t, dir, manifestFile, fmt.Sprintf(`{"name":"Probe","pluginType":"synchronous","entryPoint":{"command":"%s probe.py"}}`,
		lookPath("python3", systemPath)))
	writeFile(t, dir, "probe.py", fmt.Sprintf(`import os
try:
    open(%q).read()
    print("secret read")
except PermissionError:
    print("secret refused")
with open(os.path.join(os.environ["TMPDIR"], "t"), "w") as f:
    f.write("x")
print("tmp written")
`, e.secret))
	warmProbeSays(t, e, "secret refused", "tmp written")
}

// TestWarmNodeSandboxStillApplies: a warm node process runs under the
// plugin's default profile like a cold run: it can read its bootstrap
// (outside every folder the profile grants), not a file outside its
// grants, and it writes its own temporary directory.
func TestWarmNodeSandboxStillApplies(t *testing.T) {
	needNode(t)
	e := newSandboxEnv(t, "default", nil)
	dir := filepath.Join(e.root, "Probe")
	writeFile(t, dir, manifestFile, fmt.Sprintf(`{"name":"Probe","pluginType":"synchronous","entryPoint":{"command":"%s probe.js"}}`,
		lookPath("node", systemPath)))
	writeFile(t, dir, "probe.js", fmt.Sprintf(`const fs = require('fs'), path = require('path');
try {
  fs.readFileSync(%q);
  console.log('secret read');
} catch (e) {
  console.log('secret refused: ' + e.code);
}
fs.writeFileSync(path.join(process.env.TMPDIR, 't'), 'x');
console.log('tmp written');
`, e.secret))
	warmProbeSays(t, e, "secret refused: EACCES", "tmp written")
}

// warmProbeSays warms the Probe plugin under e, calls it once and checks
// that the call ran warm and printed each of wants.
func warmProbeSays(t *testing.T, e *sandboxEnv, wants ...string) {
	t.Helper()
	set := scan(t, e.host, e.root)
	if notes := e.host.Warm(set, WarmConfig{Tools: map[string]bool{"Probe": true}}); len(notes) > 0 {
		t.Fatalf("notes: %q", notes)
	}
	waitWarm(t, e.host, 1)
	res, err := call(context.Background(), findTool(t, set, "Probe"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.host.WarmCalls() != 1 {
		t.Fatalf("the call did not run warm")
	}
	out := textOf(t, res)
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
