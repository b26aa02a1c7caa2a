#!/bin/sh
# make demo: what leaksnap does today, end to end on a bundled example.
# 1. read an Android text heap dump (as `am dumpheap -n` or malloc_debug
#    writes it), map every frame to module+offset, rank records by bytes;
# 2. convert it to a LEAKSNAP v1 file and show that;
# 3. list the maps it carries as modules;
# 4. build a small leaking program and run it under `leaksnap record` (the
#    malloc hook), then show the leaks in its exit dump with every frame
#    symbolized (function, file:line, inline chain).
set -eu
B=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
ls_="$top/$B/bin/leaksnap"
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-demo.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$top/testdata/demo"

if [ -t 1 ]; then bold=$(printf '\033[1m') plain=$(printf '\033[0m'); else bold= plain=; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; }
step leaksnap show --top 3 app-heap.txt
"$ls_" show --top 3 app-heap.txt
step leaksnap convert app-heap.txt app-heap.dump
"$ls_" convert app-heap.txt "$w/app-heap.dump"
step leaksnap show --json --top 1 app-heap.dump
"$ls_" show --json --top 1 "$w/app-heap.dump"
step leaksnap maps app-heap.dump
"$ls_" maps "$w/app-heap.dump"
step cc -O2 -g leaky.c -o leaky '&&' leaksnap record --out /tmp/demo -- ./leaky
${CC:-cc} -O2 -g -o "$w/leaky" leaky.c
(cd "$w" && "$ls_" record --out "$w/demo" -- ./leaky)
step leaksnap symbolize --top 2 --verbose /tmp/demo.PID.exit.dump
"$ls_" symbolize --top 2 --verbose "$w"/demo.*.exit.dump | sed -e '/^metadata:/,/^$/d' -e "s|$w|/tmp|g"
printf '\nleakdiff (comparing snapshots, ranking leaks) arrives with the next issue.\n'
