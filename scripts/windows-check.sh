#!/usr/bin/env bash
# Windows check for developers on Linux: cross-compiles and vets everything
# for windows/amd64, then runs the Windows tests of the process-tree code
# (toolhost/proctree, toolhost/plugin, toolhost/direct) and `vcpnode.exe demo`
# under Wine when Wine is installed (Debian: apt-get install wine64). Without Wine it says what
# it skipped and exits 0 after the build and vet.
#
# Under Wine only the tests written for Windows run (proctree's whole
# package; TestWindows* in plugin and direct): the rest of those packages
# use t.TempDir, whose cleanup Wine 8 cannot do (RemoveAll: "unlinkat …:
# Invalid function"), and assumes a Unix shell.
#
# Wine 8 (Debian 12) lacks bcryptprimitives.dll, which Go programs need
# since Go 1.22 (its ProcessPrng); when the Wine prefix has none, a
# three-line stand-in calling RtlGenRandom is compiled with MinGW
# (apt-get install gcc-mingw-w64-x86-64-win32). Nothing outside the temporary
# Wine prefix is changed.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cross-compile and vet for windows/amd64"
GOOS=windows GOARCH=amd64 go build ./...
GOOS=windows GOARCH=amd64 go vet ./...
echo "ok: windows/amd64 builds and vets"

wine=""
for w in wine64 /usr/lib/wine/wine64 wine; do
	if command -v "$w" >/dev/null 2>&1; then
		wine=$(command -v "$w")
		break
	fi
done
if [ -z "$wine" ]; then
	echo "SKIPPED: Wine is not installed (apt-get install wine64): the Windows tests were compiled, not run"
	exit 0
fi

work=$(mktemp -d)
wineserver=$(command -v wineserver || echo "$(dirname "$wine")/wineserver")
cleanup() {
	WINEPREFIX="$work/prefix" "$wineserver" -k >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
export WINEPREFIX="$work/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="

echo "== Wine prefix ($("$wine" --version 2>/dev/null || echo unknown version))"
"$wine" wineboot --init >/dev/null 2>&1 || true
sys32="$WINEPREFIX/drive_c/windows/system32"
if ! [ -e "$sys32/bcryptprimitives.dll" ]; then
	if ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
		echo "SKIPPED: this Wine has no bcryptprimitives.dll (Go needs it) and MinGW is missing to build a stand-in" \
			"(apt-get install gcc-mingw-w64-x86-64-win32): the Windows tests were compiled, not run"
		exit 0
	fi
	cat >"$work/bcp.c" <<'EOF'
#include <windows.h>
#include <ntsecapi.h>
/* Go's runtime reads random bytes with ProcessPrng (Windows 10+). */
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
	while (len > 0) {
		ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!RtlGenRandom(data, n)) return FALSE;
		data += n; len -= n;
	}
	return TRUE;
}
EOF
	printf 'LIBRARY bcryptprimitives\nEXPORTS\nProcessPrng\n' >"$work/bcp.def"
	x86_64-w64-mingw32-gcc -O2 -shared -o "$sys32/bcryptprimitives.dll" "$work/bcp.c" "$work/bcp.def" -ladvapi32
	echo "built a bcryptprimitives.dll stand-in for this Wine"
fi

failed=0
run() { # package, -test.run pattern
	local pkg=$1 pattern=$2 exe
	exe="$work/$(basename "$pkg").test.exe"
	GOOS=windows GOARCH=amd64 go test -c -o "$exe" "./$pkg"
	echo "== $pkg (-test.run '$pattern') under Wine"
	# From the package folder, as go test runs it (testdata, relative paths).
	if ! (cd "$pkg" && timeout 600 "$wine" "$exe" -test.v -test.run "$pattern" -test.timeout 5m); then
		failed=1
		echo "FAIL: $pkg"
	fi
}
run toolhost/proctree '.'
run toolhost/plugin '^TestWindows'
run toolhost/direct '^TestWindows'
# The program itself in the foreground: vcpnode demo runs a node against a
# fake server on loopback (connect, register, calls, graceful shutdown) and
# exits non-zero when a call does not turn out as expected.
echo "== vcpnode.exe demo under Wine"
GOOS=windows GOARCH=amd64 go build -o "$work/vcpnode.exe" ./cmd/vcpnode
if ! (cd "$work" && timeout 300 "$wine" ./vcpnode.exe demo); then
	failed=1
	echo "FAIL: vcpnode.exe demo"
fi
if [ "$failed" -ne 0 ]; then
	echo "FAIL: Windows tests under Wine"
	exit 1
fi
echo "ok: Windows tests pass under Wine"
