#!/bin/sh
# --version: the program's version (the Makefile's), then the version of
# each library it runs with, as the library reports itself.  The expected
# lines are read from the installed packages at test time (pkg-config for
# libdw, Jansson, libzip, zlib and protobuf-c; dpkg for the static libiberty), so the
# test holds on any machine and fails on a missing, extra or wrong line.
set -u
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$B/bin" && pwd)
command -v pkg-config >/dev/null 2>&1 || { echo "pkg-config is not installed"; exit 77; }
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-version.XXXXXX")
trap 'rm -rf "$w"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

version=$(sed -n 's/^VERSION := //p' "$top/Makefile")
[ -n "$version" ] || fail "no VERSION in the Makefile"
iberty=$(dpkg-query -W -f='${Version}' libiberty-dev 2>/dev/null)
libs() {
	echo "libdw $(pkg-config --modversion libdw)"
	echo "jansson $(pkg-config --modversion jansson)"
	echo "libzip $(pkg-config --modversion libzip)"
	echo "zlib $(pkg-config --modversion zlib)"
	echo "protobuf-c $(pkg-config --modversion libprotobuf-c)"
	echo "libiberty ${iberty:-unknown} (built in)"
}
{ echo "leaksnap $version"; libs; } >"$w/leaksnap.want"
{ echo "leakdiff $version"; libs; } >"$w/leakdiff.want"

check() { # WANT CMD...: exact stdout, nothing on stderr, status 0
	want=$1
	shift
	"$@" >"$w/out" 2>"$w/err"
	st=$?
	[ $st = 0 ] || fail "$*: status $st"
	[ -s "$w/err" ] && fail "$*: stderr: $(cat "$w/err")"
	cmp -s "$w/out" "$want" || { fail "$*: stdout"; diff "$want" "$w/out"; }
}
check "$w/leaksnap.want" "$bin/leaksnap" --version
check "$w/leakdiff.want" "$bin/leakdiff" --version
check "$w/leakdiff.want" "$bin/leaksnap" diff --version
# the shape alone, whatever the numbers: NAME DOTTED-VERSION
"$bin/leaksnap" --version | sed -n '2,6p' | grep -v -E '^(libdw|jansson|libzip|zlib|protobuf-c) [0-9]+(\.[0-9]+)+$' >"$w/odd"
[ -s "$w/odd" ] && fail "lines not 'NAME VERSION': $(cat "$w/odd")"
# a full standard output is an error, said once
if [ -w /dev/full ]; then
	"$bin/leaksnap" --version >/dev/full 2>"$w/err"
	st=$?
	[ $st = 2 ] || fail "--version >/dev/full: status $st"
	[ "$(wc -l <"$w/err")" = 1 ] || fail "--version >/dev/full: stderr: $(cat "$w/err")"
fi
[ $fails = 0 ] || exit 1
echo "--version: leaksnap $version and its libraries"
