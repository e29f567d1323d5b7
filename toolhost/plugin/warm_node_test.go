//go:build unix

package plugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
)

// needNode skips, saying why, where the system has no node.
func needNode(t testing.TB) {
	t.Helper()
	if lookPath("node", systemPath) == "" {
		t.Skipf("no node in %s", systemPath)
	}
}

// nodeHost is a host whose plugins run the system's node.
func nodeHost(t testing.TB, opts Options) *Host {
	needNode(t)
	return interpreterHost(t, opts)
}

// probeJS prints what a fresh start gives a script; values that differ
// between any two runs (the per-run temporary directory, the tree marker,
// pipe inodes) are replaced by what is checked about them. What it is
// asked on stdin makes it fail, exit, print a lot, or start a worker and
// a child.
const probeJS = `'use strict';
const fs = require('fs'), path = require('path'), Module = require('module');
let data = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { data += c; });
process.stdin.on('end', () => {
  if (data.includes('throw')) throw new TypeError('asked to fail: ' + data);
  if (data.includes('reject')) { Promise.reject(new Error('rejected: ' + data)); return; }
  if (data.includes('exit')) { process.stderr.write('leaving with 3\n'); process.exit(3); }
  if (data.includes('large')) {
    const line = 'x'.repeat(1023) + '\n';
    for (let i = 0; i < 3000; i++) process.stdout.write(line);
    console.error('wrote 3000 lines');
    return;
  }
  const tmp = process.env.TMPDIR || '';
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    env[k] = ['TMPDIR', 'TMP', 'TEMP', 'VCPNODE_PROCTREE'].includes(k) ? '<per-run>' : v;
  }
  const fds = fs.readdirSync('/proc/self/fd').map((f) => {
    try { return f + ' ' + fs.readlinkSync('/proc/self/fd/' + f).replace(/\[\d+\]/, '').replace(tmp, '<tmp>'); } catch { return f; }
  });
  const out = {
    argv: process.argv, execArgv: process.execArgv, argv0: process.argv0, title: process.title,
    main: require.main === module, mainModule: process.mainModule === module, id: module.id,
    file: __filename, dir: __dirname, paths: module.paths, parent: module.parent === undefined ? 'undefined' : String(module.parent),
    cache: Object.keys(require.cache), pathCache: Object.entries(Module._pathCache),
    local: require.resolve('helper'), helper: require('helper').hello(),
    cwd: process.cwd(), stdin: data, env, fds,
    tmpFresh: tmp !== '' && fs.readdirSync(tmp).length === 0,
    globals: Object.getOwnPropertyNames(globalThis), loaded: process.moduleLoadList,
    stack: new Error('here').stack, stdinTTY: Boolean(process.stdin.isTTY),
    listeners: process.listenerCount('exit') + process.listenerCount('uncaughtException'),
  };
  if (data.includes('spawn')) {
    const { Worker } = require('worker_threads');
    const w = new Worker('require("worker_threads").parentPort.postMessage({execArgv: process.execArgv, cache: Object.keys(require.cache), env: process.env.VCPNODE_WARM_NODE})', { eval: true });
    w.on('message', (m) => {
      out.worker = m;
      const child = require('child_process').fork(path.join(__dirname, 'child.js'), ['a'], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
      let got = '';
      child.stdout.on('data', (c) => { got += c; });
      child.on('exit', (code) => { out.child = { got, code }; console.log(JSON.stringify({ status: 'success', result: out })); });
    });
    return;
  }
  console.log(JSON.stringify({ status: 'success', result: out }));
});
`

// esmJS is the probe as an ES module: top-level await, static imports,
// import.meta, a CommonJS module through createRequire.
const esmJS = `import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { helper } from './lib/helper.mjs';
const require = createRequire(import.meta.url);
let data = '';
process.stdin.setEncoding('utf8');
for await (const c of process.stdin) data += c;
if (data.includes('throw')) throw new TypeError('asked to fail: ' + data);
if (data.includes('exit')) { console.error('leaving with 4'); process.exit(4); }
const tmp = process.env.TMPDIR || '';
const fds = fs.readdirSync('/proc/self/fd').map((f) => {
  try { return f + ' ' + fs.readlinkSync('/proc/self/fd/' + f).replace(/\[\d+\]/, '').replace(tmp, '<tmp>'); } catch { return f; }
});
const env = {};
for (const [k, v] of Object.entries(process.env)) {
  env[k] = ['TMPDIR', 'TMP', 'TEMP', 'VCPNODE_PROCTREE'].includes(k) ? '<per-run>' : v;
}
const out = {
  argv: process.argv, execArgv: process.execArgv, url: import.meta.url, dirname: import.meta.dirname ?? null,
  resolved: import.meta.resolve('./lib/helper.mjs'), helper: helper(), cjs: require('./lib/old.cjs'),
  cache: Object.keys(require.cache).map((k) => path.relative(process.cwd(), k)), main: require.main === undefined ? 'undefined' : String(require.main && require.main.filename),
  stdin: data, env, fds, globals: Object.getOwnPropertyNames(globalThis), loaded: process.moduleLoadList,
  stack: new Error('here').stack,
};
console.log(JSON.stringify({ status: 'success', result: out }));
`

// childJS is what the probe forks: it says what it inherited.
const childJS = `console.log(JSON.stringify({execArgv: process.execArgv, env: process.env.VCPNODE_WARM_NODE || null, argv: process.argv.slice(2)}));`

// vcpJS is a plugin as VCP plugins are written: JSON arguments on stdin, a
// file read beside the script, a module from its own node_modules, a
// setting from config.env, errors as a JSON status and an exit code.
const vcpJS = `const fs = require('fs');
const path = require('path');
const pad = require('leftpad');
const table = JSON.parse(fs.readFileSync(path.join(__dirname, 'data', 'table.json'), 'utf8'));
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', async () => {
  const args = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
  await new Promise((r) => setImmediate(r));
  if (args.command === 'Lookup') {
    const hit = table[args.key];
    if (hit === undefined) {
      console.error('VcpLike: no key ' + args.key);
      console.log(JSON.stringify({ status: 'error', error: 'no such key: ' + args.key }));
      process.exitCode = 1;
      return;
    }
    console.log(JSON.stringify({ status: 'success', result: { key: pad(args.key, 12), value: hit, unit: process.env.VCP_UNIT } }));
    return;
  }
  if (args.command === 'Dump') {
    process.stdout.write(JSON.stringify({ status: 'success', result: { rows: Array.from({ length: 20000 }, (_, i) => ({ i, v: table.a + i })) } }));
    return;
  }
  throw new Error('unknown command ' + args.command);
});
`

// writeNodePlugins makes the Node.js plugins of the warm tests in root:
// NodeProbe, VcpLike (a module in node_modules, a data file, config.env)
// and CjsProbe (the probe as a .cjs script, run through a relative path).
func writeNodePlugins(t testing.TB, root string) {
	dir := filepath.Join(root, "NodeProbe")
	writeFile(t, dir, manifestFile, `{"name":"NodeProbe","pluginType":"synchronous",
		"entryPoint":{"command":"node probe.js first --second"}}`)
	writeFile(t, dir, "probe.js", probeJS)
	writeFile(t, dir, "child.js", childJS)
	writeFile(t, dir, "node_modules/helper/index.js", "exports.hello = () => 'hello from ' + require('path').basename(__dirname);\n")
	writeFile(t, dir, configEnvFile, "PROBE_SETTING=from config.env\n")

	dir = filepath.Join(root, "CjsProbe")
	writeFile(t, dir, manifestFile, `{"name":"CjsProbe","pluginType":"synchronous",
		"entryPoint":{"command":"node ./lib/probe.cjs"}}`)
	writeFile(t, dir, "lib/probe.cjs", probeJS)
	writeFile(t, dir, "lib/child.js", childJS)
	writeFile(t, dir, "node_modules/helper/index.js", "exports.hello = () => 'cjs helper';\n")
	writeFile(t, dir, "package.json", `{"name":"cjs-probe","type":"commonjs"}`)

	for name, main := range map[string]string{"EsmProbe": "probe.mjs", "TypeModule": "probe.js"} {
		dir = filepath.Join(root, name)
		writeFile(t, dir, manifestFile, fmt.Sprintf(`{"name":%q,"pluginType":"synchronous","entryPoint":{"command":"node %s x"}}`, name, main))
		writeFile(t, dir, main, esmJS)
		writeFile(t, dir, "lib/helper.mjs", "export const helper = () => 'esm helper of ' + import.meta.url.split('/').slice(-3).join('/');\n")
		writeFile(t, dir, "lib/old.cjs", "module.exports = { old: true, file: require('path').basename(__filename) };\n")
	}
	writeFile(t, filepath.Join(root, "TypeModule"), "package.json", `{"type":"module"}`)

	dir = filepath.Join(root, "VcpLike")
	writeFile(t, dir, manifestFile, `{"name":"VcpLike","pluginType":"synchronous",
		"entryPoint":{"command":"node vcp_like.js"}}`)
	writeFile(t, dir, "vcp_like.js", vcpJS)
	writeFile(t, dir, "data/table.json", `{"a": 1, "b": "two", "ü": [3]}`)
	writeFile(t, dir, "node_modules/leftpad/package.json", `{"name":"leftpad","main":"lib/pad.js"}`)
	writeFile(t, dir, "node_modules/leftpad/lib/pad.js", "module.exports = (s, n) => String(s).padStart(n, '.');\n")
	writeFile(t, dir, configEnvFile, "VCP_UNIT=metres\n")
}

// rawOutcome runs spec once with stdin and renders everything a caller
// could see of the run: stdout, stderr and the exit status, byte for byte.
func rawOutcome(t testing.TB, h *Host, tool toolhost.Tool, stdin string) string {
	t.Helper()
	pt := tool.(*pluginTool)
	p, out, stopped, err := h.runToEnd(context.Background(), pt.run, []byte(stdin))
	if err != nil {
		t.Fatalf("run %s: %v", pt.spec.Name, err)
	}
	if stopped {
		t.Fatalf("run %s was stopped", pt.spec.Name)
	}
	return fmt.Sprintf("exit: %s\nstdout (%d bytes):\n%s\nstderr:\n%s", p.exitText(), out.total, out.buf, p.errOut.buf)
}

// TestWarmNodeMatchesCold runs the same calls cold and then warm over the
// Node.js probe (argv, execArgv, require.main, module paths and caches,
// globals, loaded internal modules, fds, env, a worker thread and a forked
// child, an uncaught exception, an unhandled rejection, process.exit, 3 MB
// of output), a VCP-style plugin and the example TextStats: stdout, stderr
// and exit status must be byte-identical, and so must what the tool
// returns; every warm call must be served warm.
func TestWarmNodeMatchesCold(t *testing.T) {
	h := nodeHost(t, Options{})
	root := pluginRoot(t)
	writeNodePlugins(t, root)
	copyDir(t, filepath.Join("..", "..", "examples", "Plugin", "TextStats"), filepath.Join(root, "TextStats"))
	set := scan(t, h, root)
	probe, cjs := findTool(t, set, "NodeProbe"), findTool(t, set, "CjsProbe")
	vcp, stats := findTool(t, set, "VcpLike"), findTool(t, set, "TextStats")
	esm, typeModule := findTool(t, set, "EsmProbe"), findTool(t, set, "TypeModule")

	type callCase struct {
		tool  toolhost.Tool
		stdin string
	}
	var calls []callCase
	for i := range 6 {
		n := strconv.Itoa(i)
		calls = append(calls,
			callCase{probe, `{"n":"` + n + `","text":"héllo\n\"quoted\""}`},
			callCase{vcp, `{"command":"Lookup","key":"a"}`},
			callCase{stats, `{"command":"TopWords","text":"the cat and the hat ` + n + `","limit":"3"}`},
			callCase{cjs, `{"n":"` + n + `"}`})
		if i < 3 {
			calls = append(calls, callCase{esm, `{"n":"` + n + `"}`}, callCase{typeModule, `{"n":"` + n + `"}`})
		}
	}
	calls = append(calls,
		callCase{probe, `{"do":"spawn"}`},
		callCase{cjs, `{"do":"spawn"}`},
		callCase{probe, `{"do":"throw"}`},
		callCase{esm, `{"do":"throw"}`},
		callCase{typeModule, `{"do":"exit"}`},
		callCase{probe, `{"do":"reject"}`},
		callCase{probe, `{"do":"exit"}`},
		callCase{probe, `{"do":"large"}`},
		callCase{probe, `{}`},
		callCase{vcp, `{"command":"Lookup","key":"ü"}`},
		callCase{vcp, `{"command":"Lookup","key":"zz"}`},
		callCase{vcp, `{"command":"Dump"}`},
		callCase{vcp, `{"command":"Nope"}`},
		callCase{vcp, `not json`},
		callCase{stats, `{"command":"Count","text":"One. Two! 三。"}`},
		callCase{stats, `{"command":"TopWords","limit":"0"}`})

	run := func() (raw, res []string) {
		for _, c := range calls {
			if len(h.pools) > 0 {
				waitWarm(t, h, 6)
			}
			raw = append(raw, rawOutcome(t, h, c.tool, c.stdin))
			if len(h.pools) > 0 {
				waitWarm(t, h, 6)
			}
			r, err := h.runSync(context.Background(), c.tool.(*pluginTool).run, []byte(c.stdin))
			res = append(res, outcome(t, r, err))
		}
		return raw, res
	}
	coldRaw, coldRes := run()
	if notes := h.Warm(set, WarmConfig{Languages: []string{WarmNode}}); len(notes) > 0 {
		t.Fatalf("notes: %q", notes)
	}
	warmRaw, warmRes := run()
	if got := h.WarmCalls(); got != uint64(2*len(calls)) {
		t.Errorf("%d of %d calls ran warm", got, 2*len(calls))
	}
	for i, c := range calls {
		if coldRaw[i] != warmRaw[i] {
			t.Errorf("call %d (%s %s) output differs: %s", i, c.tool.Spec().Name, c.stdin, firstDiff(coldRaw[i], warmRaw[i]))
		}
		if coldRes[i] != warmRes[i] {
			t.Errorf("call %d (%s %s) result differs: %s", i, c.tool.Spec().Name, c.stdin, firstDiff(coldRes[i], warmRes[i]))
		}
	}
	for i, c := range calls {
		// The probes ran to their answer, not to the same early failure.
		if strings.HasPrefix(c.stdin, `{"n":`) && (c.tool == probe || c.tool == cjs || c.tool == esm || c.tool == typeModule) &&
			!strings.Contains(coldRes[i], `"helper":`) {
			t.Errorf("call %d (%s %s) did not answer: %s", i, c.tool.Spec().Name, c.stdin, coldRes[i][:min(len(coldRes[i]), 500)])
		}
		if c.stdin == `{"do":"spawn"}` || c.stdin == `{"do":"throw"}` {
			t.Logf("%s %s: %s", c.tool.Spec().Name, c.stdin, coldRaw[i][:min(len(coldRaw[i]), 1500)])
		}
	}
}

// firstDiff shows where a and b first differ, with some context.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(i-150, 0)
	return fmt.Sprintf("at byte %d of %d/%d:\ncold: …%s…\nwarm: …%s…", i, len(a), len(b), a[from:min(i+150, len(a))], b[from:min(i+150, len(b))])
}

// TestWarmNodeSelection: only node commands the warm path understands are
// warmed; the others say why.
func TestWarmNodeSelection(t *testing.T) {
	h := nodeHost(t, Options{})
	root := pluginRoot(t)
	writeNodePlugins(t, root)
	plugins := map[string]string{
		"Shell": "node a.js | cat", "Options": "node --no-warnings a.js", "BadPackage": "node a.js",
		"NoScript": "node", "Ts": "node a.ts", "Missing": "node gone.js",
	}
	for name, command := range plugins {
		dir := filepath.Join(root, name)
		writeFile(t, dir, manifestFile, fmt.Sprintf(`{"name":%q,"pluginType":"synchronous","entryPoint":{"command":%q}}`, name, command))
		for _, f := range []string{"a.js", "a.mjs", "a.ts"} {
			writeFile(t, dir, f, "console.log('{}')\n")
		}
	}
	writeFile(t, filepath.Join(root, "BadPackage"), "package.json", `{"type":`)
	dir := filepath.Join(root, "NodeOptions")
	writeFile(t, dir, manifestFile, `{"name":"NodeOptions","pluginType":"synchronous","entryPoint":{"command":"node a.js"}}`)
	writeFile(t, dir, "a.js", "console.log('{}')\n")
	writeFile(t, dir, configEnvFile, "NODE_OPTIONS=--no-warnings\n")
	set := scan(t, h, root)
	notes := h.Warm(set, WarmConfig{Languages: []string{WarmNode}})
	want := []string{
		`plugin "BadPackage" runs cold, not warm: its package.json cannot be read`,
		`plugin "Missing" runs cold, not warm: its script cannot be read: stat MISSING: no such file or directory`,
		`plugin "NoScript" runs cold, not warm: its command passes no script, or options, to node`,
		`plugin "NodeOptions" runs cold, not warm: NODE_OPTIONS is set: its preloads would run before the call`,
		`plugin "Options" runs cold, not warm: its command passes no script, or options, to node`,
		`plugin "Shell" runs cold, not warm: its command runs under a shell`,
		`plugin "Ts" runs cold, not warm: its script is not a .js, .cjs or .mjs file`,
	}
	for i := range want {
		want[i] = strings.ReplaceAll(want[i], "MISSING", filepath.Join(root, "Missing", "gone.js"))
	}
	if strings.Join(notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant\n%s", strings.Join(notes, "\n"), strings.Join(want, "\n"))
	}
	waitWarm(t, h, 5)
	h.warmMu.Lock()
	var names []string
	for spec := range h.pools {
		names = append(names, spec.name)
	}
	h.warmMu.Unlock()
	slices.Sort(names)
	if want := []string{"CjsProbe", "EsmProbe", "NodeProbe", "TypeModule", "VcpLike"}; !slices.Equal(names, want) {
		t.Errorf("pools for %q, want %q", names, want)
	}
}

// TestWarmNodeCrashLoopRunsCold: node processes that die before they are
// ready make the pool give up; calls still run, cold. The plugin's "node"
// is a wrapper that dies when it is given the bootstrap.
func TestWarmNodeCrashLoopRunsCold(t *testing.T) {
	h := nodeHost(t, Options{})
	root := pluginRoot(t)
	dir := filepath.Join(root, "Fragile")
	writeFile(t, dir, manifestFile, `{"name":"Fragile","pluginType":"synchronous","entryPoint":{"command":"./bin/node a.js"}}`)
	writeFile(t, dir, "a.js", "console.log(JSON.stringify({status: 'success', result: 'cold'}))\n")
	wrapper := writeFile(t, dir, "bin/node", "#!/bin/sh\ncase \"$1\" in --require=*) exit 9;; esac\nexec "+lookPath("node", systemPath)+" \"$@\"\n")
	if err := os.Chmod(wrapper, 0o755); err != nil {
		t.Fatal(err)
	}
	set := scan(t, h, root)
	if notes := h.Warm(set, WarmConfig{Languages: []string{WarmNode}}); len(notes) > 0 {
		t.Fatalf("notes: %q", notes)
	}
	testwait.For(t, "the pool to give up", func() bool {
		pools := h.WarmPools()
		return len(pools) == 1 && pools[0].Cold && h.Running() == 0
	})
	res, err := call(context.Background(), findTool(t, set, "Fragile"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "cold" || h.WarmCalls() != 0 {
		t.Errorf("result %q, %d warm calls; want cold, 0", got, h.WarmCalls())
	}
}

// TestWarmNodeAfterClose: a Warm after Close starts nothing and writes no
// bootstrap.
func TestWarmNodeAfterClose(t *testing.T) {
	h := nodeHost(t, Options{})
	root := pluginRoot(t)
	writeNodePlugins(t, root)
	set := scan(t, h, root)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	notes := h.Warm(set, WarmConfig{Tools: map[string]bool{"NodeProbe": true}})
	if len(notes) != 1 || !strings.Contains(notes[0], ErrClosed.Error()) {
		t.Errorf("notes: %q, want one saying the host is closed", notes)
	}
	if h.bootDir != "" || h.WarmWaiting() != 0 || h.Running() != 0 {
		t.Errorf("after Close: bootstrap %q, %d waiting, %d running", h.bootDir, h.WarmWaiting(), h.Running())
	}
}
