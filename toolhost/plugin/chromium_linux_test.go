package plugin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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

// puppeteerShot renders page.html of its folder with puppeteer-core and the
// system's Chromium, ARGS its launch arguments.
const puppeteerShot = `const puppeteer = require('puppeteer-core');
(async () => {
  const browser = await puppeteer.launch({executablePath: process.argv[2], headless: true, args: ARGS});
  try {
    const page = await browser.newPage();
    await page.goto('file://' + __dirname + '/page.html');
    const text = await page.$eval('p', el => el.textContent);
    process.stdout.write(JSON.stringify({status: 'success', result: text}));
  } finally { await browser.close(); }
})().catch(e => { process.stderr.write(String(e) + '\n'); process.exit(1); });
`

// TestSandboxPuppeteer: a plugin driving the system's Chromium through a
// real puppeteer-core from npm, installed in its folder, under default:
// without --no-sandbox the failure names the flag; with it the page is
// rendered (puppeteer makes its profile folder in TMPDIR itself).
func TestSandboxPuppeteer(t *testing.T) {
	t.Parallel() // mostly waiting on npm and the registry
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium on PATH: the real browser is what this test drives")
	}
	for _, c := range []string{"node", "npm"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("no %s on PATH: the plugin is a Node.js one using puppeteer from npm", c)
		}
	}
	if testing.Short() {
		t.Skip("-short: this test installs puppeteer-core from the npm registry")
	}
	short, err := os.MkdirTemp("/tmp", "vc") // Chromium's socket in TMPDIR: a short path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	e := newSandboxEnvTemp(t, "default", nil, short)
	dir := filepath.Join(e.root, "Probe")
	writeFile(t, dir, "package.json", "{}\n")
	writeFile(t, dir, "page.html", "<html><body><p>rendered by puppeteer under default</p></body></html>\n")
	cache := filepath.Join(os.Getenv("STATE_DIRECTORY"), "npm-cache") // shared by the run's tests, removed after it
	if os.Getenv("STATE_DIRECTORY") == "" {
		cache = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	npm := exec.CommandContext(ctx, "npm", "install", "puppeteer-core")
	npm.Dir = dir
	npm.Env = append(os.Environ(), "HOME="+t.TempDir(), "npm_config_cache="+cache, "npm_config_update_notifier=false",
		"npm_config_fund=false", "npm_config_audit=false", "npm_config_prefer_offline=true")
	if out, err := npm.CombinedOutput(); err != nil {
		if os.Getenv("CI") == "" && regexp.MustCompile(`ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|network`).Match(out) {
			t.Skipf("the npm registry cannot be reached: npm install: %v\n%s", err, out)
		}
		t.Fatalf("npm install puppeteer-core: %v\n%s", err, out)
	}
	run := func(args string) (string, error) {
		writeFile(t, dir, "shot.js", strings.Replace(puppeteerShot, "ARGS", args, 1))
		writeFile(t, dir, manifestFile, `{"name":"Probe","pluginType":"synchronous","entryPoint":{"command":"node shot.js `+chromium+`"},`+
			`"communication":{"protocol":"stdio","timeout":120000}}`)
		res, err := call(t.Context(), findTool(t, scan(t, e.host, e.root), "Probe"), nil)
		if err != nil {
			return "", err
		}
		return textOf(t, res), nil
	}
	if _, err := run("[]"); err == nil || !strings.Contains(err.Error(), "Chromium's own sandbox") ||
		!strings.Contains(err.Error(), "puppeteer: args: ['--no-sandbox']") {
		t.Errorf("puppeteer with Chromium's own sandbox: got %v, want the --no-sandbox hint", err)
	}
	out, err := run("['--no-sandbox']")
	if err != nil || out != "rendered by puppeteer under default" {
		t.Errorf("puppeteer with --no-sandbox: %q, %v", out, err)
	}
}
