package sandbox

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Where a derived grant comes from (Grant.From), as shown next to a
// tool's profile.
const (
	FromScript      = "script"
	FromPackage     = "package root"
	FromNodeModules = "node_modules"
	FromNodePath    = "NODE_PATH"
	FromTreeModules = "plugin tree modules"
	FromPython      = "python sys.path"
	FromVenv        = "python venv"
	FromCache       = "package runner cache"
	FromGlobal      = "npm global prefix"
	FromDeclared    = "declared in the manifest"
	FromArgument    = "MCP server argument"
)

// homeSecrets are the home directory's trees no derived grant may cover,
// even through a symbolic link: keys, credentials, browser profiles and
// the node's own user config. A profile may still grant them by name.
var homeSecrets = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store", ".netrc",
	".git-credentials", ".pgpass", ".npmrc", ".pypirc", ".config/gcloud", ".config/gh",
	".config/vcpnode", ".local/share/keyrings", ".mozilla", ".thunderbird",
	".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".config/microsoft-edge",
	".var/app", "snap/firefox", "snap/chromium",
}

// DerivedGrants are what the last process started for key got from what
// it ran: key is a tool's name, "mcp:SERVER" or
// "placeholder:NAME", as in Options.Tools. Nil before its first start.
func (s *Sandbox) DerivedGrants(key string) []Grant {
	if s == nil {
		return nil
	}
	if v, ok := s.lastDerived.Load(key); ok {
		return v.([]Grant)
	}
	return nil
}

// AllDerivedGrants are DerivedGrants of every key started so far.
func (s *Sandbox) AllDerivedGrants() map[string][]Grant {
	out := map[string][]Grant{}
	if s == nil {
		return out
	}
	s.lastDerived.Range(func(k, v any) bool {
		if gs := v.([]Grant); len(gs) > 0 {
			out[k.(string)] = gs
		}
		return true
	})
	return out
}

// derivedKey is the key a command's derived grants are kept under.
func derivedKey(c Command) string {
	switch c.Kind {
	case "MCP server":
		return "mcp:" + c.Tool
	case "placeholder command":
		return "placeholder:" + c.Tool
	}
	return c.Tool
}

// derivedTTL is how long a command's derived grants are reused: deriving
// costs some hundred file lookups, and a tool's runtime rarely changes
// between two of its calls; a package installed meanwhile is seen soon.
const derivedTTL = 5 * time.Second

// derivedEnv are the variables derivation reads.
var derivedEnv = []string{"HOME", "PATH", "NODE_PATH", "PYTHONPATH", "PYTHONHOME", "npm_config_cache", "NPM_CONFIG_CACHE",
	"npm_config_prefix", "UV_CACHE_DIR", "UV_TOOL_DIR", "UV_PYTHON_INSTALL_DIR", "XDG_CACHE_HOME", "XDG_DATA_HOME", "PIPX_HOME", "DENO_DIR"}

type derivedEntry struct {
	at time.Time
	gs []Grant
}

// derivedCached is derived, reused for derivedTTL per command.
func (o *Options) derivedCached(c Command) []Grant {
	if o.derivedCache == nil {
		return o.derived(c)
	}
	var b strings.Builder
	for _, s := range append([]string{c.Kind, c.Tool, c.Path, c.Dir}, c.Args...) {
		b.WriteString(s)
		b.WriteByte(0)
	}
	for _, k := range derivedEnv {
		b.WriteString(envValue(c.Env, k))
		b.WriteByte(0)
	}
	if c.Declared != nil { // as kept by the plugin host: a reload may change them
		for _, s := range append(append([]string{"\x01"}, c.Declared.Read...), append([]string{"\x02"}, c.Declared.Write...)...) {
			b.WriteString(s)
			b.WriteByte(0)
		}
	}
	key := b.String()
	if v, ok := o.derivedCache.Load(key); ok && time.Since(v.(derivedEntry).at) < derivedTTL {
		return v.(derivedEntry).gs
	}
	gs := o.derived(c)
	o.derivedCache.Store(key, derivedEntry{at: time.Now(), gs: gs})
	return gs
}

// derived are the grants c needs for what it runs, carved like every
// grant and kept off the home's secrets.
func (o *Options) derived(c Command) []Grant {
	if len(c.Own) > 0 {
		c.Env = slices.DeleteFunc(slices.Clone(c.Env), func(kv string) bool {
			k, _, _ := strings.Cut(kv, "=")
			return slices.Contains(c.Own, k)
		})
	}
	d := deriver{c: c, home: envValue(c.Env, "HOME"), pathEnv: envValue(c.Env, "PATH"), temp: o.TempDir}
	if d.home == "" {
		d.home = o.Home
	}
	d.command(c.Path, c.Args, 0)
	if d.node {
		d.nodeModules()
	}
	if c.Kind == "plugin" && c.Dir != "" {
		d.declared()
	}
	if c.Kind == "MCP server" {
		d.arguments()
	}
	if len(d.out) == 0 {
		return nil
	}
	var safe []Grant
	for _, g := range d.out {
		if d.tooWide(g.Path) {
			continue
		}
		safe = append(safe, g)
	}
	return carveReal(safe, o.derivedProtected(d.home))
}

// derivedProtected are the canonical paths no derived grant covers for a
// command whose home is home: the node's own files and the home's
// secrets (resolved once per configuration and home).
func (o *Options) derivedProtected(home string) []string {
	if o.protectedFor != nil {
		if v, ok := o.protectedFor.Load(home); ok {
			return v.([]string)
		}
	}
	protected := slices.Clone(o.Protected)
	if home != "" {
		for _, s := range homeSecrets {
			protected = append(protected, filepath.Join(home, s))
		}
	}
	prot := canonicalAll(protected)
	if o.protectedFor != nil {
		o.protectedFor.Store(home, prot)
	}
	return prot
}

// deriver collects the grants of one command.
type deriver struct {
	c       Command
	home    string
	pathEnv string
	temp    string   // where every call's private temporary directory is
	wide    []string // home and temp, canonical
	out     []Grant
	// node: the command runs Node.js (or a runtime resolving node_modules).
	node    bool
	scripts []string
}

func (d *deriver) add(path string, write bool, from string) {
	if path == "" || !filepath.IsAbs(path) || d.linkOut(path) {
		return
	}
	d.out = append(d.out, Grant{Path: filepath.Clean(path), Write: write, From: from})
}

// linkOut reports a path inside the tool's own folder that a symbolic
// link leads out of it: the tool writes its folder, and a node_modules or
// a script it links there to another tree would have that tree granted.
func (d *deriver) linkOut(path string) bool {
	if d.c.Dir == "" {
		return false
	}
	p, own := filepath.Clean(path), canonical(d.c.Dir)
	if !within(p, filepath.Clean(d.c.Dir)) && !within(p, own) {
		return false
	}
	return !within(canonical(p), own)
}

// tooWide reports a tree no derived grant may be: the root, the home
// directory or one of its ancestors (they hold everything), the folder
// of the calls' temporary directories or one of its ancestors (they hold
// other calls' private ones).
func (d *deriver) tooWide(path string) bool {
	p := canonical(path)
	if p == "/" {
		return true
	}
	if d.wide == nil {
		for _, dir := range []string{d.home, d.temp} {
			if dir != "" {
				d.wide = append(d.wide, canonical(dir))
			}
		}
	}
	for _, dir := range d.wide {
		if within(dir, p) {
			return true
		}
	}
	return false
}

// Runtime families.
var (
	nodeRuntimes   = map[string]bool{"node": true, "nodejs": true, "bun": true, "deno": true, "tsx": true, "ts-node": true}
	pythonPrefixes = []string{"python", "pypy"}
	shells         = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ash": true}
)

func isPython(prog string) bool {
	for _, p := range pythonPrefixes {
		if rest, ok := strings.CutPrefix(prog, p); ok && strings.Trim(rest, "0123456789.") == "" {
			return true
		}
	}
	return false
}

// command derives the grants of program path run with argv.
func (d *deriver) command(path string, argv []string, depth int) {
	if depth > 3 || path == "" {
		return
	}
	prog := filepath.Base(path)
	var args []string
	if len(argv) > 1 {
		args = argv[1:]
	}
	runner := PackageRunner(append([]string{prog}, args...))
	switch {
	case shells[prog]:
		// sh -c "LINE": the line's first command, when it is a plain one.
		if len(args) >= 2 && args[0] == "-c" {
			if words := strings.Fields(args[1]); len(words) > 0 {
				if p := d.lookPath(words[0]); p != "" {
					d.command(p, words, depth+1)
				}
			}
		} else if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			d.script(d.abs(args[0]), nil)
		}
	case prog == "env":
		// /usr/bin/env [NAME=VALUE…] PROGRAM ARGS
		for i, a := range args {
			if strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
				continue
			}
			if p := d.lookPath(a); p != "" {
				d.command(p, args[i:], depth+1)
			}
			break
		}
	case nodeRuntimes[prog]:
		d.node = true
		skip := map[string]bool{"run": prog == "deno" || prog == "bun"}
		if s := d.firstFile(args, skip, []string{"-e", "-p", "--eval", "--print"}); s != "" {
			d.script(s, []string{"package.json", "deno.json", "deno.jsonc"})
		}
		if prog == "deno" {
			d.cache(d.dir("DENO_DIR", ".cache/deno"))
		}
	case isPython(prog):
		d.python(path)
		if s := d.firstFile(args, nil, []string{"-c", "-m"}); s != "" {
			d.script(s, []string{"pyproject.toml", "setup.py", "setup.cfg"})
		}
	case runner == "npx":
		d.node = true
		d.cache(d.npmCache())
		if prefix := envValue(d.c.Env, "npm_config_prefix"); prefix != "" {
			d.add(prefix, false, FromGlobal)
		}
	case runner == "uvx":
		d.uv()
	case prog == "uv" && len(args) > 0 && args[0] == "run":
		d.uv()
		if s := d.firstFile(args[1:], nil, []string{"-m", "--module"}); s != "" {
			d.script(s, []string{"pyproject.toml", "setup.py", "setup.cfg"})
		}
	case runner == "pipx":
		for _, dir := range []string{d.dir("PIPX_HOME", ".local/pipx"), d.dir("", ".local/share/pipx"), d.dir("", ".cache/pipx")} {
			d.cache(dir)
		}
	default:
		// A script run by its #! line: the program is the script.
		if interp, iargs := shebang(path); interp != "" {
			d.command(interp, append(append([]string{interp}, iargs...), path), depth+1)
		}
	}
}

// PackageRunner names the package runner argv starts — "npx" (npx, npm
// exec), "uvx" (uvx, uv tool run) or "pipx" (pipx run) — which fetches the
// package into its cache before running it; "" for any other command.
func PackageRunner(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	prog, args := filepath.Base(argv[0]), argv[1:]
	switch {
	case prog == "npx" || prog == "npm" && len(args) > 0 && (args[0] == "exec" || args[0] == "x"):
		return "npx"
	case prog == "uvx" || prog == "uv" && len(args) > 1 && args[0] == "tool" && args[1] == "run":
		return "uvx"
	case prog == "pipx" && len(args) > 0 && args[0] == "run":
		return "pipx"
	}
	return ""
}

// firstFile is the first argument naming an existing file, before any of
// stop (an inline program or a module to run) and skipping the words of
// skip (a subcommand).
func (d *deriver) firstFile(args []string, skip map[string]bool, stop []string) string {
	for _, a := range args {
		if slices.Contains(stop, a) {
			return ""
		}
		if skip[a] || strings.HasPrefix(a, "-") {
			continue
		}
		p := d.abs(a)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// abs is path made absolute from the command's folder.
func (d *deriver) abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	if d.c.Dir == "" {
		return ""
	}
	return filepath.Join(d.c.Dir, path)
}

// script grants the script, and its package root (the nearest folder up
// holding one of markers) or else its own folder: a program reads its
// project's other files. Both read-only.
func (d *deriver) script(path string, markers []string) {
	if path == "" || d.linkOut(path) {
		return
	}
	d.scripts = append(d.scripts, path)
	d.add(path, false, FromScript)
	if real := canonical(path); real != path {
		d.scripts = append(d.scripts, real)
		d.add(real, false, FromScript)
	}
	for _, p := range []string{path, canonical(path)} {
		if root := packageRoot(filepath.Dir(p), markers); root != "" && !d.aboveOwnFolder(root) {
			d.add(root, false, FromPackage)
		} else if dir := filepath.Dir(p); !d.tooWide(dir) && !d.aboveOwnFolder(dir) {
			d.add(dir, false, FromPackage)
		}
	}
}

// aboveOwnFolder reports a folder above a plugin's own: the plugin tree
// (VCPToolBox's root holds package.json and pyproject.toml), whose
// config.env holds the tree's keys and whose other plugins' folders hold
// theirs. What a plugin uses of it is granted as such (node_modules,
// modules).
func (d *deriver) aboveOwnFolder(dir string) bool {
	if d.c.Kind != "plugin" || d.c.Dir == "" {
		return false
	}
	own, real := canonical(d.c.Dir), canonical(dir)
	return own != real && within(own, real)
}

// packageRoot is the nearest folder from dir up holding one of markers.
func packageRoot(dir string, markers []string) string {
	for ; ; dir = filepath.Dir(dir) {
		for _, m := range markers {
			if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
				return dir
			}
		}
		if dir == filepath.Dir(dir) {
			return ""
		}
	}
}

// nodeModules grants Node.js's module resolution: every node_modules from
// the tool's folder and its scripts up, NODE_PATH, and for a plugin kept
// as VCPToolBox keeps them (ROOT/Plugin/NAME) the tree's shared modules/.
func (d *deriver) nodeModules() {
	starts := slices.Clone(d.scripts)
	if d.c.Dir != "" {
		starts = append(starts, filepath.Join(d.c.Dir, "x"), filepath.Join(canonical(d.c.Dir), "x"))
	}
	for _, s := range starts {
		for dir := filepath.Dir(s); ; dir = filepath.Dir(dir) {
			if filepath.Base(dir) != "node_modules" {
				if nm := filepath.Join(dir, "node_modules"); isDir(nm) {
					d.add(nm, false, FromNodeModules)
				}
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	for _, p := range filepath.SplitList(envValue(d.c.Env, "NODE_PATH")) {
		if filepath.IsAbs(p) {
			d.add(p, false, FromNodePath)
		}
	}
	if d.c.Kind == "plugin" && d.c.Dir != "" {
		if m := filepath.Join(filepath.Dir(filepath.Dir(d.c.Dir)), "modules"); isDir(m) {
			d.add(m, false, FromTreeModules)
		}
	}
}

// arguments grants an MCP server the folders its arguments name (the
// filesystem server's roots, a git server's repository), read and write:
// the owner named them in the node's config as what the server works on,
// as a plugin works on its folder. Not a tree the system reads (read
// already; writing it takes a profile), nor a folder right under the root.
func (d *deriver) arguments() {
	if len(d.c.Args) < 2 {
		return
	}
	for _, a := range d.c.Args[1:] {
		if flag, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(flag, "-") {
			a = v // --root=/srv/notes
		}
		if !filepath.IsAbs(a) || !isDir(a) {
			continue
		}
		real := canonical(a)
		if filepath.Dir(real) == "/" || slices.ContainsFunc(systemRead, func(s string) bool {
			if rest, ok := strings.CutPrefix(s, "~/"); ok {
				s = filepath.Join(d.home, rest)
			}
			return within(real, canonical(s))
		}) {
			continue
		}
		d.add(a, true, FromArgument)
	}
}

// cache grants a package runner's cache, made when missing (the runner
// would make it, which it cannot once confined), read and write.
func (d *deriver) cache(dir string) {
	if dir == "" || d.tooWide(dir) {
		return
	}
	if !isDir(dir) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return
		}
	}
	d.add(dir, true, FromCache)
}

// dir is the folder the variable env names, else rel below the home.
func (d *deriver) dir(env, rel string) string {
	if env != "" {
		if v := envValue(d.c.Env, env); filepath.IsAbs(v) {
			return v
		}
	}
	if d.home == "" {
		return ""
	}
	return filepath.Join(d.home, rel)
}

// npmCache is npm's cache folder (npm_config_cache, else ~/.npm).
func (d *deriver) npmCache() string {
	for _, k := range []string{"npm_config_cache", "NPM_CONFIG_CACHE"} {
		if v := envValue(d.c.Env, k); filepath.IsAbs(v) {
			return v
		}
	}
	return d.dir("", ".npm")
}

// uv grants uv's cache and its tools and interpreters.
func (d *deriver) uv() {
	cache := d.dir("UV_CACHE_DIR", ".cache/uv")
	if x := envValue(d.c.Env, "XDG_CACHE_HOME"); envValue(d.c.Env, "UV_CACHE_DIR") == "" && filepath.IsAbs(x) {
		cache = filepath.Join(x, "uv")
	}
	data := d.dir("", ".local/share/uv")
	if x := envValue(d.c.Env, "XDG_DATA_HOME"); filepath.IsAbs(x) {
		data = filepath.Join(x, "uv")
	}
	d.cache(cache)
	d.cache(data)
	for _, k := range []string{"UV_TOOL_DIR", "UV_PYTHON_INSTALL_DIR"} {
		if v := envValue(d.c.Env, k); filepath.IsAbs(v) {
			d.cache(v)
		}
	}
}

// shebang is the interpreter (and its one argument) a script names on
// its #! line; "" when path is no such script.
func shebang(path string) (string, []string) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil
	}
	defer f.Close()
	// The kernel reads at most 256 bytes of a #! line; a binary program
	// is not read further.
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	line, _, _ := strings.Cut(string(head[:n]), "\n")
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "#!")
	if !ok {
		return "", nil
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 || !filepath.IsAbs(fields[0]) {
		return "", nil
	}
	return fields[0], fields[1:]
}

// lookPath finds name on the command's PATH (a path is taken as it is).
func (d *deriver) lookPath(name string) string {
	if strings.Contains(name, "/") {
		return d.abs(name)
	}
	for _, dir := range filepath.SplitList(d.pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if p := filepath.Join(dir, name); executableFile(p) {
			return p
		}
	}
	return ""
}

// envValue is the last value of key in env.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func executableFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// manifestFile is a plugin's manifest in its folder (VCPToolBox's name).
const manifestFile = "plugin-manifest.json"

// Declared are the folders a plugin's manifest declares it uses:
//
//	"sandbox": {"read": ["../Shared", "/srv/data"], "write": ["~/notes"]}
type Declared struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
}

// ParseDeclared is the "sandbox" member of a plugin's manifest; a member
// missing or not of that shape declares nothing.
func ParseDeclared(manifest []byte) Declared {
	var m struct {
		Sandbox Declared `json:"sandbox"`
	}
	if json.Unmarshal(manifest, &m) != nil {
		return Declared{}
	}
	return m.Sandbox
}

// declared grants the folders a plugin's manifest declares it uses:
//
//	"sandbox": {"read": ["../Shared", "/srv/data"], "write": ["~/notes"]}
//
// relative to the plugin's folder, absolute or from ~/; kept off the
// node's own files and the home's secrets like every derived grant. The
// command's Declared when the plugin host gives them (as first seen),
// else the manifest's now.
func (d *deriver) declared() {
	decl := d.c.Declared
	if decl == nil {
		b, err := os.ReadFile(filepath.Join(d.c.Dir, manifestFile))
		if err != nil {
			return
		}
		m := ParseDeclared(b)
		decl = &m
	}
	for _, l := range []struct {
		paths []string
		write bool
	}{{decl.Read, false}, {decl.Write, true}} {
		for _, p := range l.paths {
			switch {
			case p == "~" || strings.HasPrefix(p, "~/"):
				if d.home != "" {
					p = filepath.Join(d.home, strings.TrimPrefix(p, "~"))
				} else {
					continue
				}
			case !filepath.IsAbs(p):
				p = filepath.Join(d.c.Dir, p)
			}
			d.add(p, l.write, FromDeclared)
		}
	}
}
