#!/bin/sh
# make demo: what leaksnap does today, end to end on a bundled example.
# 1. read an Android text heap dump (as `am dumpheap -n` or malloc_debug
#    writes it), map every frame to module+offset, rank records by bytes;
# 2. convert it to a LEAKSNAP v1 file and show that;
# 3. list the maps it carries as modules;
# 4. build a small server with a real leak and a bounded cache, run it under
#    `leaksnap record --reachability` (the malloc hook), which writes a
#    snapshot after each of its three batches of requests, each saying which
#    blocks no pointer reaches any more;
# 5. compare the snapshots with leakdiff: the leak ranks first, a definite
#    leak (all its blocks unreachable), with its function and source line; the
#    cache, which stopped growing once full and is still reachable, is listed
#    apart as a cache, not as a leak; --fail-on and --fail-on-unreachable gate;
# 6. write the same comparison as a self-contained HTML report (kept in
#    BUILD/demo/report.html; its path is printed last).
set -eu
B=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
case $B in /*) bin="$B/bin" ;; *) bin="$top/$B/bin" ;; esac
ls_="$bin/leaksnap"
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
step cc -O2 -g server.c -o server '&&' leaksnap record --reachability --out /tmp/demo -- ./server
${CC:-cc} -O2 -g -o "$w/server" server.c -ldl
(cd "$w" && "$ls_" record --reachability --out "$w/demo" -- ./server 2>&1) | sed "s|$w|/tmp|g"
step leakdiff /tmp/demo.PID.0001.dump /tmp/demo.PID.0002.dump /tmp/demo.PID.0003.dump
set -- "$w"/demo.*.0001.dump "$w"/demo.*.0002.dump "$w"/demo.*.0003.dump
(cd "$w" && "$bin/leakdiff" "${1##*/}" "${2##*/}" "${3##*/}") | sed "s|$w|/tmp|g"
step leakdiff --fail-on 4K /tmp/demo.PID.'{0001,0002,0003}'.dump '>/dev/null;' echo '$?'
set +e
(cd "$w" && "$bin/leakdiff" --fail-on 4K "${1##*/}" "${2##*/}" "${3##*/}" >/dev/null)
echo "$?    (1: the suspects grew by 4 KiB or more -- a CI gate; the cache does not count)"
step leakdiff --fail-on-unreachable 1 /tmp/demo.PID.'{0001,0002,0003}'.dump '>/dev/null;' echo '$?'
(cd "$w" && "$bin/leakdiff" --fail-on-unreachable 1 "${1##*/}" "${2##*/}" "${3##*/}" >/dev/null)
echo "$?    (1: the last snapshot holds unreachable blocks -- leaks, whatever they grew)"
set -e
step leakdiff --html report.html /tmp/demo.PID.'{0001,0002,0003}'.dump
report_dir="$top/$B/demo"
case $B in /*) report_dir="$B/demo" ;; esac
mkdir -p "$report_dir"
(cd "$w" && "$bin/leakdiff" --html "$report_dir/report.html" "${1##*/}" "${2##*/}" "${3##*/}" >/dev/null)
echo "the report: $report_dir/report.html (open it in a browser)"
