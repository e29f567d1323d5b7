package plugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testuser"
)

// TestSandboxChromium: the real Chromium as a plugin under default. Its own
// sandbox (user namespaces, refused by the syscall filter; as root it wants
// none) and its profile folder in the home fail it; each failure names the
// flag that does without, and with both flags the page is rendered.
func TestSandboxChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium on PATH: the real browser is what this test runs")
	}
	// Chromium makes a Unix socket in its TMPDIR: a short one, as a
	// daemon's calls get (/tmp/vcpnode-call-N), not a test's deep TempDir.
	short, err := os.MkdirTemp("/tmp", "vc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	e := newSandboxEnvTemp(t, "default", nil, short)
	dir := filepath.Join(e.root, "Probe")
	page := writeFile(t, dir, "page.html", "<html><body><p>rendered under default</p></body></html>\n")
	dump := chromium + " --headless --disable-gpu --dump-dom file://" + page

	_, err = e.run(t, "exec "+dump+"\n")
	if err == nil || !strings.Contains(err.Error(), `start Chromium with --user-data-dir="$TMPDIR/chromium"`) {
		t.Fatalf("Chromium with its profile folder in the home: got %v, want the --user-data-dir hint", err)
	}

	dump = strings.Replace(dump, "--headless", `--headless --user-data-dir="$TMPDIR/chromium"`, 1)
	_, err = e.run(t, "exec "+dump+"\n")
	if err == nil {
		t.Fatal("Chromium with its own sandbox ran under default")
	}
	for _, want := range []string{"was refused by the node's sandbox (profile \"default\"): Chromium's own sandbox",
		"start Chromium with --no-sandbox"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "to grant it") {
		t.Errorf("a grant was offered for what no grant fixes:\n%v", err)
	}

	out, err := e.run(t, strings.Replace(dump, "--headless", "--headless --no-sandbox", 1)+" 2>err.txt || { cat err.txt >&2; exit 1; }\n")
	if err != nil {
		t.Fatalf("Chromium with the hinted flags: %v", err)
	}
	if !strings.Contains(out, "<p>rendered under default</p>") {
		t.Errorf("dumped DOM lacks the page:\n%s", out)
	}
}

// TestSandboxChromiumAsUser: a daemon run by an ordinary user is where
// Chromium's own sandbox would otherwise work (unprivileged user
// namespaces): the same holds there.
func TestSandboxChromiumAsUser(t *testing.T) {
	t.Parallel()
	testuser.Rerun(t, "^TestSandboxChromium$")
}
