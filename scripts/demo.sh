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
# 6. write the same comparison as a self-contained HTML report
#    (BUILD/demo/report.html; its path is printed last).
# Everything happens in BUILD/demo, which keeps the inputs and outputs.
set -eu
B=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
case $B in /*) bdir=$B ;; *) bdir="$top/$B" ;; esac
bin="$bdir/bin"
# The demo's inputs and outputs stay in BUILD/demo, so that every command
# it prints can be run again there as printed.  Only the files an earlier
# demo made there are removed first (BUILD is make's; make clean removes it).
d="$bdir/demo"
mkdir -p "$d"
rm -f "$d"/demo.*.dump "$d"/demo.*.maps "$d/app-heap.dump" "$d/report.html" "$d/server"
cp "$top/testdata/demo/app-heap.txt" "$top/testdata/demo/server.c" "$d/"
cd "$d"
PATH="$bin:$PATH"
export PATH
shown_d=$d
case $d in "$top"/*) shown_d=${d#"$top"/} ;; esac
shown_bin=$bin
case $bin in "$top"/*) shown_bin=${bin#"$top"/} ;; esac

if [ -t 1 ]; then bold=$(printf '\033[1m') plain=$(printf '\033[0m'); else bold= plain=; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; }
echo "The demo runs in $shown_d; to run its commands again:"
echo "  cd $shown_d && PATH=$bin:\$PATH"
echo "(leaksnap never replaces a file: remove app-heap.dump or report.html before"
echo "running again the command that writes it)"
step leaksnap show --top 3 app-heap.txt
leaksnap show --top 3 app-heap.txt
step leaksnap convert app-heap.txt app-heap.dump
leaksnap convert app-heap.txt app-heap.dump
step leaksnap show --json --top 1 app-heap.dump
leaksnap show --json --top 1 app-heap.dump
step leaksnap maps app-heap.dump
leaksnap maps app-heap.dump
step ${CC:-cc} -O2 -g -o server server.c -ldl '&&' leaksnap record --reachability --out demo -- ./server
${CC:-cc} -O2 -g -o server server.c -ldl
leaksnap record --reachability --out demo -- ./server 2>&1
# The server's numbered dumps (one per batch), in capture order whether
# their numbers are zero-padded or not; the exit dump is left out.
set -- $(ls | grep -E '^demo\.[0-9]+\.[0-9]+\.dump$' | sort -t. -k3,3n)
[ $# = 3 ] || { echo "demo: expected 3 numbered dumps, found $#: $*" >&2; exit 1; }
step leakdiff "$@"
leakdiff "$@"
step leakdiff --fail-on 4K "$@" '>/dev/null;' echo '$?'
set +e
leakdiff --fail-on 4K "$@" >/dev/null
echo "$?    (1: the suspects grew by 4 KiB or more -- a CI gate; the cache does not count)"
step leakdiff --fail-on-unreachable 1 "$@" '>/dev/null;' echo '$?'
leakdiff --fail-on-unreachable 1 "$@" >/dev/null
echo "$?    (1: the last snapshot holds unreachable blocks -- leaks, whatever they grew)"
set -e
step leakdiff --html report.html "$@" '>/dev/null'
leakdiff --html report.html "$@" >/dev/null
echo "the report: $d/report.html (open it in a browser)"
