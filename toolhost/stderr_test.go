package toolhost

import (
	"strings"
	"testing"
	"testing/iotest"
)

// Real stderr of failing programs (Python 3.12, Node.js 20, npm 10).
const (
	pythonTraceback = `Traceback (most recent call last):
  File "/srv/Plugin/Weather/weather.py", line 4, in <module>
    f()
  File "/srv/Plugin/Weather/weather.py", line 3, in f
    return undefined_name
           ^^^^^^^^^^^^^^
NameError: name 'undefined_name' is not defined
`
	nodeMissingModule = `node:internal/modules/cjs/loader:1210
  throw err;
  ^

Error: Cannot find module 'vcpnode-nope'
Require stack:
- /srv/Plugin/Weather/index.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)
    at Module._load (node:internal/modules/cjs/loader:1038:27)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12) {
  code: 'MODULE_NOT_FOUND',
  requireStack: [ '/srv/Plugin/Weather/index.js' ]
}

Node.js v20.20.2
`
	nodeThrow = `/srv/x.js:1
function f(){ throw new TypeError('bad thing') }
              ^

TypeError: bad thing
    at f (/srv/x.js:1:21)
    at node:internal/main/run_main_module:28:49

Node.js v20.20.2
`
	npmNotFound = `npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/@vcpnode%2fno-such-server - Not found
npm error 404
npm error 404  '@vcpnode/no-such-server@*' is not in this registry.
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-27T15_00_00_000Z-debug-0.log
`
	npmAccess = `npm error code EACCES
npm error syscall mkdir
npm error path /home/u/.npm/_cacache
npm error errno -13
npm error Error: EACCES: permission denied, mkdir '/home/u/.npm/_cacache'
npm error
npm error Your cache folder contains root-owned files, due to a bug in
npm error You can rerun the command with --loglevel=verbose to see the logs.
`
)

func TestSummarizeStderr(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"python: the exception line, which is last", pythonTraceback, "NameError: name 'undefined_name' is not defined"},
		{"node: the error line, then the last lines", nodeMissingModule,
			"Error: Cannot find module 'vcpnode-nope' … - /srv/Plugin/Weather/index.js … code: 'MODULE_NOT_FOUND', | requireStack: [ '/srv/Plugin/Weather/index.js' ]"},
		{"node throw", nodeThrow, "TypeError: bad thing"},
		{"npm: what failed, not the code", npmNotFound,
			"npm error 404 Not Found - GET https://registry.npmjs.org/@vcpnode%2fno-such-server - Not found | npm error 404 | npm error 404  '@vcpnode/no-such-server@*' is not in this registry. | npm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-27T15_00_00_000Z-debug-0.log"},
		{"npm: the Error line before error-ish ones", npmAccess,
			"npm error Error: EACCES: permission denied, mkdir '/home/u/.npm/_cacache' | npm error Your cache folder contains root-owned files, due to a bug in | npm error You can rerun the command with --loglevel=verbose to see the logs."},
		{"no error line: the last lines", "starting\nloading config\nlistening on stdio\nbye\n", "loading config | listening on stdio | bye"},
		{"unterminated last line counts", "Fatal: no licence", "Fatal: no licence"},
		{"blank and punctuation lines say nothing", "\n  ^^^^\n}\n\n", ""},
		{"empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SummarizeStderr([]byte(c.in)); got != c.want {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
			// Written in any pieces, the summary is the same.
			var s StderrSummary
			r := iotest.OneByteReader(strings.NewReader(c.in))
			buf := make([]byte, 1)
			for {
				n, err := r.Read(buf)
				_, _ = s.Write(buf[:n])
				if err != nil {
					break
				}
			}
			if got := s.String(); got != c.want {
				t.Errorf("byte by byte: got %q", got)
			}
		})
	}
}

// TestStderrSummaryIsBounded: a flood keeps a few short lines.
func TestStderrSummaryIsBounded(t *testing.T) {
	var s StderrSummary
	long := strings.Repeat("é", 5000)
	for range 1000 {
		_, _ = s.Write([]byte("log " + long + "\n"))
	}
	_, _ = s.Write([]byte(strings.Repeat("x", 1<<20))) // no newline
	got := s.String()
	if len(got) > 4*(stderrSummaryLineBytes+8) || len(s.partial) > stderrPartialMax || !strings.HasPrefix(got, "log éé") {
		t.Fatalf("summary of %d bytes, partial %d: %.80q", len(got), len(s.partial), got)
	}
	if !strings.HasSuffix(got, "xxx…") {
		t.Fatalf("the unterminated line is not last: %q", got[len(got)-20:])
	}
}
