//go:build linux

package plugin

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A Python or Node.js plugin call cold (the interpreter starts on the
// call's path), warm (an interpreter waits in the pool) and, for Python,
// warm with the script's import preloaded (preload = ["json"]). Run with
//
//	go test -run '^$' -bench 'PythonPluginCall|NodePluginCall' -benchmem -benchtime 200x ./toolhost/plugin/
//
// Each warm call is timed from a full pool (the wait for the successor
// is outside the timer): the latency a call sees when calls are not
// back to back. p50-ms is the median call; idle-*-KiB are the memory of
// one waiting interpreter (/proc/PID/smaps_rollup).

// benchPy is a plugin that does what most do: reads its JSON arguments,
// imports json, answers.
const benchPy = `import json, sys
args = json.loads(sys.stdin.read())
print(json.dumps({"status": "success", "result": {"echo": args}}))
`

// benchJS is benchPy in Node.js: stdin read to its end, JSON out.
const benchJS = `let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', () => {
  console.log(JSON.stringify({ status: 'success', result: { echo: JSON.parse(input) } }));
});
`

func BenchmarkPythonPluginCall(b *testing.B) {
	benchPluginCall(b, warmHost, WarmPython, "python3 bench.py", "bench.py", benchPy)
}

func BenchmarkNodePluginCall(b *testing.B) {
	benchPluginCall(b, nodeHost, WarmNode, "node bench.js", "bench.js", benchJS)
}

func benchPluginCall(b *testing.B, host func(testing.TB, Options) *Host, lang, command, file, source string) {
	modes := []string{"cold", "warm"}
	if lang == WarmPython {
		modes = append(modes, "warm-preload")
	}
	for _, mode := range modes {
		b.Run(mode, func(b *testing.B) {
			h := host(b, Options{})
			root := pluginRoot(b)
			dir := filepath.Join(root, "Bench")
			writeFile(b, dir, manifestFile, `{"name":"Bench","pluginType":"synchronous","entryPoint":{"command":"`+command+`"}}`)
			writeFile(b, dir, file, source)
			set := scan(b, h, root)
			tool := findTool(b, set, "Bench")
			warm := mode != "cold"
			if warm {
				cfg := WarmConfig{Languages: []string{lang}}
				if mode == "warm-preload" {
					cfg.Preload = map[string][]string{"Bench": {"json"}}
				}
				h.Warm(set, cfg)
			}
			var took []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				if warm {
					b.StopTimer()
					waitWarm(b, h, 1)
					b.StartTimer()
				}
				start := time.Now()
				if _, err := call(context.Background(), tool, map[string]string{"n": "1"}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			if warm {
				if n := h.WarmCalls(); n != uint64(len(took)) {
					b.Fatalf("%d of %d calls ran warm", n, len(took))
				}
				waitWarm(b, h, 1)
				if pids := waitingPids(h); len(pids) > 0 {
					rss, pss := rollup(b, pids[0])
					b.ReportMetric(float64(rss), "idle-rss-KiB")
					b.ReportMetric(float64(pss), "idle-pss-KiB")
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		})
	}
}

// rollup reads a process's Rss and Pss in KiB.
func rollup(b *testing.B, pid int) (rss, pss int) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "Rss:":
			rss = n
		case "Pss:":
			pss = n
		}
	}
	return rss, pss
}
