#!/bin/sh
# Debug files from a real debuginfod server (elfutils' `debuginfod`, in a
# network namespace of its own: it cannot listen on 127.0.0.1 alone).  A
# program built with -g is split (objcopy --only-keep-debug, strip); the
# server serves the debug file and the stripped program; dumps of the
# stripped program run under the hook.  symbolize, leakdiff and
# convert --to pprof with DEBUGINFOD_URLS, or --debuginfod URL, give exact
# functions and lines, the file kept in DEBUGINFOD_CACHE_PATH; a module
# whose file is gone is fetched whole.  Once fetched, --offline,
# --no-debuginfod and no DEBUGINFOD_URLS take them from the cache (wherever
# elfutils keeps it; another build's file there is passed over).  With an
# empty cache --no-debuginfod and --offline ask nothing (the server sees no
# request, no cache is made): frames are ?? and one warning says how to get
# symbols.  Every run names its cache: the developer's own is never read.
# addr2line -e the stripped program, too.  --debuginfod takes the URLs
# libdebuginfod can use (http://, https://, file://): anything else, or a
# control byte, is one exact usage line naming the word.  --verbose names a missing module as its frames do and the
# file a build-id mismatch passed over.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
for tool in gcc objcopy strip readelf debuginfod unshare nsenter ip; do
	command -v $tool >/dev/null 2>&1 || { echo "$tool is not installed"; exit 77; }
done
src=$top/tests/symbolizer/grow.c
line() { grep -n "$1" "$src" | head -1 | cut -d: -f1; }
alloc=$(line 'grow-alloc')
call=$(line 'grow-call')
maincall=$(line 'main-call')

bin=$w/bin
srv=$w/served
mkdir -p "$bin" "$srv" "$w/gone"
gcc -g -O1 -o "$w/grow.full" "$src" || { fail "cannot build grow"; exit 1; }
strip -o "$bin/grow" "$w/grow.full"
objcopy --only-keep-debug "$w/grow.full" "$srv/grow.debug"
cp "$bin/grow" "$srv/grow"
id=$(readelf -n "$w/grow.full" | sed -n 's/.*Build ID: //p')
[ -n "$id" ] || { fail "grow has no build ID"; exit 1; }
# two builds whose DWARF dwz moved in part to a shared file (as Debian's
# dbgsym packages have it): the function names are in that file alone
if command -v dwz >/dev/null 2>&1; then
	# (not grow's flags: another build ID than grow's)
	gcc -g -O2 -o "$w/dwz1" "$src" && gcc -g -O0 -o "$w/dwz2" "$src" &&
		dwz -m "$srv/common.debug" -M /usr/lib/debug/.dwz/leaksnap-test.debug "$w/dwz1" "$w/dwz2" &&
		objcopy --only-keep-debug "$w/dwz1" "$srv/dwz1.debug" && strip -o "$bin/dwz1" "$w/dwz1" ||
		fail "cannot make the dwz pair"
	dwzid=$(readelf -n "$srv/common.debug" | sed -n 's/.*Build ID: //p')
fi

# The server, alone in a network namespace; everything that talks to it
# runs there too (inns).
port=8002
url=http://127.0.0.1:$port
unshare -n sh -c 'ip link set lo up && exec debuginfod -F -d "$1" -p "$2" "$3"' sh \
	"$w/db.sqlite" "$port" "$srv" >"$w/server.log" 2>&1 &
spid=$!
trap 'kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; rm -rf "$w"' EXIT
inns() { nsenter -t "$spid" -n "$@"; }
ready=
for _ in $(seq 1 100); do
	kill -0 "$spid" 2>/dev/null || break
	# (a probe's own cache: a miss is remembered for minutes)
	if inns env DEBUGINFOD_CACHE_PATH="$w/probe" DEBUGINFOD_URLS="$url" \
		debuginfod-find executable "$id" >/dev/null 2>&1 &&
		inns env DEBUGINFOD_CACHE_PATH="$w/probe" DEBUGINFOD_URLS="$url" \
			debuginfod-find debuginfo "$id" >/dev/null 2>&1 &&
		{ [ -z "${dwzid:-}" ] || inns env DEBUGINFOD_CACHE_PATH="$w/probe" DEBUGINFOD_URLS="$url" \
			debuginfod-find debuginfo "$dwzid" >/dev/null 2>&1; }; then
		ready=1
		break
	fi
	rm -rf "$w/probe"
	sleep 0.2
done
rm -rf "$w/probe"
if [ -z "$ready" ]; then
	kill -0 "$spid" 2>/dev/null ||
		{ echo "cannot run debuginfod in a network namespace of its own (unshare -n): $(tail -1 "$w/server.log")"; exit 77; }
	fail "the server did not serve $id within 20 s"
	tail -5 "$w/server.log"
	exit 1
fi
requests() { grep -c "GET /buildid/" "$w/server.log"; }

LEAKSNAP_OUT="$w/r1" LD_PRELOAD=$HOOK "$bin/grow" "$w/mid.dump" || fail "grow under the hook"
LEAKSNAP_OUT="$w/r2" LD_PRELOAD=$HOOK "$bin/grow" || fail "grow under the hook"
old=$w/mid.dump
new=$(ls "$w"/r2.*.exit.dump)
cp "$bin/grow" "$w/gone/grow"
LEAKSNAP_OUT="$w/r3" LD_PRELOAD=$HOOK "$w/gone/grow" || fail "grow under the hook"
rm "$w/gone/grow"
gone=$(ls "$w"/r3.*.exit.dump)

expect() { # FILE REGEX: a line matches
	grep -q -E -e "$2" "$1" || { fail "$1: no line matching '$2'"; grep -E '#0[0-2] |grow|warning' "$1" | head -6 | sed 's/^/    have: /'; }
}
run() { # NAME CMD...: in the server's namespace; keep stdout, stderr, status
	n=$1
	shift
	inns "$@" >"$w/$n.out" 2>"$w/$n.err"
	echo $? >"$w/$n.st"
}
clean() { # NAME: status 0, nothing on stderr
	[ "$(cat "$w/$1.st")" = 0 ] || fail "$1: status $(cat "$w/$1.st")"
	[ -s "$w/$1.err" ] && { fail "$1: stderr"; cat "$w/$1.err"; }
}
frames_ok() { # FILE DIR: the growing stack, symbolized
	expect "$1" "^ +(> )?#00 0x[0-9a-f]+  $2/grow\\+0x[0-9a-f]+  grow_one  $src:$alloc:[0-9]+\$"
	expect "$1" "^ +(> )?#01 0x[0-9a-f]+  $2/grow\\+0x[0-9a-f]+  grow  $src:$call:[0-9]+\$"
	expect "$1" "^ +(> )?#02 0x[0-9a-f]+  $2/grow\\+0x[0-9a-f]+  main  $src:$maincall:[0-9]+\$"
}
frames_unknown() { # FILE: the same frames, unknown
	expect "$1" "^ +#00 0x[0-9a-f]+  $bin/grow\\+0x[0-9a-f]+  \\?\\?\$"
	grep -q grow_one "$1" && fail "$1: grow_one named without symbols"
}
hint="leaksnap: $bin/grow: warning: stripped, and no debug file found"
fix=": its frames are mostly ??; for symbols install its debug package (-dbgsym or -dbg), or give --symbols /usr/lib/debug, or a debuginfod server (DEBUGINFOD_URLS or --debuginfod URL)"
one_hint() { # NAME WHY: stderr is exactly the warning, once
	printf '%s\n' "$hint$2$fix" >"$w/$1.want"
	cmp -s "$w/$1.want" "$w/$1.err" || { fail "$1: stderr"; diff "$w/$1.want" "$w/$1.err"; }
}

# DEBUGINFOD_URLS: the debug file by build ID, kept in the cache
cache=$w/cache
run env env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$cache" "$L" symbolize -v "$new"
clean env
frames_ok "$w/env.out" "$bin"
expect "$w/env.out" "^  $bin/grow  $bin/grow  \\(build-id match, debug file from debuginfod: $cache/$id/debuginfo\\)\$"
cmp -s "$cache/$id/debuginfo" "$srv/grow.debug" || fail "the debug file is not in DEBUGINFOD_CACHE_PATH"
# again: from the cache, no request
before=$(requests)
run cached env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$cache" "$L" symbolize "$new"
clean cached
frames_ok "$w/cached.out" "$bin"
[ "$(requests)" = "$before" ] || fail "the cached debug file was asked for again"
# fetched once, then no server asked: --offline, --no-debuginfod and no
# DEBUGINFOD_URLS at all take the file already in the cache
for how in offline no-debuginfod; do
	run "c-$how" env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$cache" "$L" symbolize -v "--$how" "$new"
	clean "c-$how"
	frames_ok "$w/c-$how.out" "$bin"
	expect "$w/c-$how.out" "^  $bin/grow  $bin/grow  \\(build-id match, debug file from debuginfod: $cache/$id/debuginfo\\)\$"
done
run c-none env -u DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH="$cache" "$L" diff "$old" "$new"
clean c-none
frames_ok "$w/c-none.out" "$bin"
# where elfutils keeps its cache by default: ~/.cache/debuginfod_client,
# $XDG_CACHE_HOME/debuginfod_client; another build's file is passed over
mkdir -p "$w/home/.cache" "$w/xdg/debuginfod_client/$id"
cp -r "$cache" "$w/home/.cache/debuginfod_client"
cp "$w/grow.full" "$w/xdg/debuginfod_client/$id/debuginfo"
gcc -g -O0 -o "$w/grow.o0" "$src" && objcopy --only-keep-debug "$w/grow.o0" "$w/grow.other" ||
	fail "cannot build grow another way"
run c-home env -u DEBUGINFOD_URLS -u DEBUGINFOD_CACHE_PATH -u XDG_CACHE_HOME HOME="$w/home" \
	"$L" symbolize -v --offline "$new"
clean c-home
frames_ok "$w/c-home.out" "$bin"
expect "$w/c-home.out" "debug file from debuginfod: $w/home/.cache/debuginfod_client/$id/debuginfo\\)\$"
run c-xdg env -u DEBUGINFOD_URLS -u DEBUGINFOD_CACHE_PATH XDG_CACHE_HOME="$w/xdg" HOME="$w/home" \
	"$L" symbolize -v --offline "$new"
clean c-xdg
expect "$w/c-xdg.out" "debug file from debuginfod: $w/xdg/debuginfod_client/$id/debuginfo\\)\$"
rm -f "$w/xdg/debuginfod_client/$id/debuginfo"
cp "$w/grow.other" "$w/xdg/debuginfod_client/$id/debuginfo"
run c-other env -u DEBUGINFOD_URLS -u DEBUGINFOD_CACHE_PATH XDG_CACHE_HOME="$w/xdg" HOME="$w/home" \
	"$L" symbolize -v --offline "$new"
frames_unknown "$w/c-other.out"
expect "$w/c-other.out" "^  $bin/grow  $bin/grow  \\(build-id match, stripped\\)\$"
[ "$(requests)" = "$before" ] || fail "a cached file was asked for again"

# --debuginfod URL, DEBUGINFOD_URLS unset; JSON says the file used
run opt env -u DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH="$w/c2" "$L" symbolize --debuginfod "$url" --json "$new"
clean opt
expect "$w/opt.out" "\"function\": \"grow_one\", \"file\": \"$src\", \"line\": $alloc,"
# one of several servers, space separated or repeated, the first one dead
run two env -u DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH="$w/c3" "$L" symbolize \
	--debuginfod "http://127.0.0.1:9 $url" "$new"
clean two
frames_ok "$w/two.out" "$bin"

# leakdiff across the two runs; convert --to pprof
run diff env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$w/c4" "$L" diff "$old" "$new"
clean diff
frames_ok "$w/diff.out" "$bin"
run pprof env -u DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH="$w/c5" "$L" convert --to pprof \
	--debuginfod "$url" "$new" "$w/p.pb.gz"
clean pprof
gzip -dc "$w/p.pb.gz" | grep -a -q grow_one || fail "pprof: grow_one not in the profile"

# A module whose file is gone: the file and its debug file, by build ID
run gone env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$w/c6" "$L" symbolize -v "$gone"
clean gone
frames_ok "$w/gone.out" "$w/gone"
expect "$w/gone.out" "^  $w/gone/grow  $w/c6/$id/executable  \\(build-id match, debug file from debuginfod: $w/c6/$id/debuginfo\\)\$"
# and again --offline: both from the cache
before=$(requests)
run goneoff env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$w/c6" "$L" symbolize -v --offline "$gone"
clean goneoff
frames_ok "$w/goneoff.out" "$w/gone"
expect "$w/goneoff.out" "^  $w/gone/grow  $w/c6/$id/executable  \\(build-id match, debug file from debuginfod: $w/c6/$id/debuginfo\\)\$"
[ "$(requests)" = "$before" ] || fail "--offline asked the server for a file in the cache"

# addr2line -e the stripped program
addr=$(nm "$w/grow.full" | sed -n 's/^0*\([0-9a-f]*\) t grow_one$/\1/p')
run a2l env -u DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH="$w/c7" "$L" addr2line -f -e "$bin/grow" --debuginfod "$url" "$addr"
clean a2l
expect "$w/a2l.out" "^grow_one\$"
expect "$w/a2l.out" "^$src:$(($alloc - 1))\$"

# the dwz file the debug file links to, by its own build ID
if [ -n "${dwzid:-}" ]; then
	daddr=$(nm "$w/dwz1" | sed -n 's/^0*\([0-9a-f]*\) t grow_one$/\1/p')
	run dwz env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$w/c10" "$L" addr2line -f -e "$bin/dwz1" "$daddr"
	clean dwz
	[ "$(head -1 "$w/dwz.out")" = grow_one ] && grep -q -x "$src:[0-9]*" "$w/dwz.out" ||
		{ fail "dwz: not symbolized"; cat "$w/dwz.out"; }
	[ -f "$w/c10/$dwzid/debuginfo" ] || fail "dwz: the shared file is not in the cache"
	# and --offline: the debug file and the shared file from the cache
	before=$(requests)
	run dwzoff env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$w/c10" "$L" addr2line --offline -f -e "$bin/dwz1" "$daddr"
	clean dwzoff
	cmp -s "$w/dwz.out" "$w/dwzoff.out" || { fail "dwz --offline: not as fetched"; cat "$w/dwzoff.out"; }
	[ "$(requests)" = "$before" ] || fail "dwz --offline asked the server"
else
	echo "dwz is not installed: a debug file with a dwz file is not checked"
fi

# Off: no request, no cache; ?? and the warning once
before=$(requests)
run off env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$w/c8" "$L" symbolize -v --no-debuginfod "$new"
[ "$(cat "$w/off.st")" = 0 ] || fail "off: status $(cat "$w/off.st")"
frames_unknown "$w/off.out"
one_hint off " (debuginfod: off, --no-debuginfod, and not in its cache)"
expect "$w/off.out" "^  $bin/grow  $bin/grow  \\(build-id match, stripped\\)\$"
run offline env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$w/c8" "$L" diff --offline "$old" "$new"
[ "$(cat "$w/offline.st")" = 0 ] || fail "offline: status $(cat "$w/offline.st")"
one_hint offline " (debuginfod: off, --offline, and not in its cache)"
grep -q grow_one "$w/offline.out" && fail "offline: grow_one named"
run a2loff env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$w/c8" "$L" addr2line -f -e "$bin/grow" --offline "$addr"
printf '??\n??:0\n' >"$w/a2loff.want"
cmp -s "$w/a2loff.want" "$w/a2loff.out" || { fail "addr2line --offline"; cat "$w/a2loff.out"; }
[ "$(requests)" = "$before" ] || fail "--no-debuginfod or --offline asked the server"
[ -e "$w/c8" ] && fail "--no-debuginfod or --offline made a cache"
# no server named at all: the same hint, nothing about debuginfod
run none env -u DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH="$w/c11" "$L" symbolize "$new"
one_hint none ""
# a server without the file: said why
echo 'int main(void) { return 0; }' >"$w/other.c"
gcc -o "$w/other" "$w/other.c" && strip "$w/other"
run miss env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$w/c9" "$L" addr2line -e "$w/other" 0
clean miss
[ "$(cat "$w/miss.out")" = "??:0" ] || { fail "addr2line of a file the server lacks"; cat "$w/miss.out"; }
run nf env -u DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH="$w/c9" "$L" symbolize --debuginfod "$url/nothing" "$new"
one_hint nf " (debuginfod: not found on the debuginfod servers)"

# Usage
for bad in "--debuginfod $url --offline" "--no-debuginfod --debuginfod $url"; do
	# shellcheck disable=SC2086
	"$L" symbolize $bad "$new" >"$w/bad.out" 2>"$w/bad.err"
	st=$?
	[ "$st" = 2 ] && [ "$(wc -l <"$w/bad.err")" = 1 ] && [ ! -s "$w/bad.out" ] ||
		{ fail "symbolize $bad: status $st"; cat "$w/bad.err"; }
done
# what libdebuginfod cannot use: one line naming the word, control bytes escaped
usage() { # WORD ARG: --debuginfod ARG is refused for WORD
	env DEBUGINFOD_CACHE_PATH="$w/c14" "$L" symbolize --debuginfod "$2" "$new" >"$w/bad.out" 2>"$w/bad.err"
	st=$?
	printf "leaksnap: symbolize: --debuginfod needs URLs such as http://HOST:PORT, https://HOST or file:///DIR, got '%s' (see 'leaksnap symbolize --help')\n" "$1" >"$w/bad.want"
	[ "$st" = 2 ] && [ ! -s "$w/bad.out" ] && cmp -s "$w/bad.want" "$w/bad.err" ||
		{ fail "--debuginfod '$1': status $st"; diff "$w/bad.want" "$w/bad.err"; }
}
usage nourl nourl
usage ftp://127.0.0.1 ftp://127.0.0.1
usage gopher://h "$url gopher://h"
usage 'http://' 'http://'
usage 'http://h:70000' 'http://h:70000'
usage 'file://host/dir' 'file://host/dir'
usage '' ' '
usage 'http://h\x09x' "$(printf 'http://h\tx')"
usage 'http://127.0.0.1\x1b[2J' "$(printf 'http://127.0.0.1\033[2J')"
usage 'http://h/a\x0ab' "$(printf 'http://h/a\nb')"
# what it can use: https:// (a dead server first) and file:// (a directory
# laid out as a server's URLs are)
mkdir -p "$w/fsrv/buildid/$id"
cp "$srv/grow.debug" "$w/fsrv/buildid/$id/debuginfo"
run https env -u DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH="$w/c12" "$L" symbolize \
	--debuginfod "HTTPS://127.0.0.1:9/ $url/" "$new"
clean https
frames_ok "$w/https.out" "$bin"
run file env -u DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH="$w/c13" "$L" symbolize -v \
	--debuginfod "file://$w/fsrv" "$new"
clean file
frames_ok "$w/file.out" "$bin"
expect "$w/file.out" "debug file from debuginfod: $w/c13/$id/debuginfo\\)\$"

[ "$fails" = 0 ] || exit 1
echo "debuginfod: symbolize, leakdiff, pprof and addr2line through a real server; off and offline ask nothing"
