#!/bin/sh
# bench/hook.sh [BUILD_DIR]: the collection benchmark, two workloads side by
# side in one run:
#  - allocbench: one site behind one chain (4M malloc/free pairs per thread,
#    sizes 16..4096, call depth ~10);
#  - varbench: call paths that branch (2M iterations per thread: four sites,
#    two callers, a 10-deep recursive chain, 1024 live slots freed at
#    random; bench/varbench.c), and varbench-fp, the same built with frame
#    pointers, for LEAKSNAP_UNWIND=fp.
# Each runs bare, under libleakhook.so with LEAKSNAP_UNWIND=fp and =auto
# (16 frames), and under heaptrack, with 1, 2 and 8 threads (8 threads do a
# quarter of the work each); varbench also with its workload in a shared
# library (libvarbench.so, run by varbench_main) under the preload hook
# (hook-lib) and under the in-app hook watching that library alone
# (inapp-lib: libleakhook-inapp.so, LEAKSNAP_LIBS='/libvarbench\.so$'),
# both auto unwinding: the in-app row's goal is the preload row's time.  The runs are interleaved, round by round (one
# warm-up round, then BENCH_RUNS), so that a change in the machine's load
# hits every configuration alike; the table gives medians, their ratio to
# the bare run, what the hook adds per iteration (ns) and the spread
# (max/min over the rounds).  The exit dump of every hooked varbench run is
# checked (bench/varcheck.sh): every live block with a full 16-frame stack
# that is a real call path of the program.  With valgrind, the instructions
# of the 1-thread runs are counted too (steady under load).  Last, the
# hook's memory and dump pause for 1M live blocks (bench/hookmem.c).  See
# bench/README.md.
set -eu

B=${1:-build}
HOOK=$(cd "$B/lib" 2>/dev/null && pwd)/libleakhook.so
INAPP=$(cd "$B/lib" 2>/dev/null && pwd)/libleakhook-inapp.so
PAIRS=${BENCH_PAIRS:-4000000}
ITERS=${BENCH_ITERS:-2000000}
RUNS=${BENCH_RUNS:-5}
RESULTS=$B/bench/results-hook.txt
SC=$B/tests/stackcheck
HERE=$(dirname "$0")
. "$HERE/lib.sh"

die() {
	echo "bench: $*" >&2
	exit 1
}
for p in allocbench varbench varbench-fp varbench_main hookmem; do
	[ -x "$B/bench/$p" ] || die "$B/bench/$p is missing: run 'make bench'"
done
[ -x "$SC" ] || die "$SC is missing: run 'make bench'"
[ -f "$HOOK" ] || die "$HOOK is missing: run 'make bench'"
[ -f "$INAPP" ] || die "$INAPP is missing: run 'make bench'"
have_heaptrack=0
[ "${BENCH_HEAPTRACK:-1}" = 1 ] && command -v heaptrack >/dev/null 2>&1 && have_heaptrack=1

WORK=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-hookbench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# Every configuration must run and print the same checksum line.
for prog in allocbench varbench varbench-fp; do
	for t in 1 2; do
		want=$("$B/bench/$prog" "$t" 1000)
		got=$(env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/chk" "$B/bench/$prog" "$t" 1000)
		[ "$want" = "$got" ] || die "$prog under the hook printed '$got', expected '$want'"
	done
done
ls "$WORK"/chk.*.exit.dump >/dev/null 2>&1 || die "the hook wrote no exit dump"
rm -f "$WORK"/chk.*
want=$("$B/bench/varbench" 2 1000)
got=$(env LD_PRELOAD="$INAPP" LEAKSNAP_LIBS='/libvarbench\.so$' LEAKSNAP_OUT="$WORK/chk" \
	"$B/bench/varbench_main" 2 1000)
[ "$want" = "$got" ] || die "varbench under the in-app hook printed '$got', expected '$want'"
ls "$WORK"/chk.*.exit.dump >/dev/null 2>&1 || die "the in-app hook wrote no exit dump"
rm -f "$WORK"/chk.*

# The configurations, one a line: workload threads what program count
: >"$WORK/configs"
for w in alloc var; do
	for t in 1 2 8; do
		if [ $w = alloc ]; then n=$PAIRS; else n=$ITERS; fi
		[ $t = 8 ] && n=$((n / 4))
		for what in bare bare-fp hook-fp hook-auto hook-lib inapp-lib heaptrack; do
			prog=${w}bench
			case $w/$what in
			alloc/bare-fp | alloc/hook-lib | alloc/inapp-lib) continue ;;
			var/hook-lib | var/inapp-lib) prog=varbench_main ;;
			var/bare-fp | var/hook-fp) prog=varbench-fp ;;
			esac
			[ $what = heaptrack ] && [ $have_heaptrack = 0 ] && continue
			echo "$w $t $what $prog $n" >>"$WORK/configs"
		done
	done
done

# run_one WORKLOAD THREADS WHAT PROG COUNT: time it (ns) into stdout; check
# a hooked varbench run's exit dump.
run_one() {
	rm -rf "$WORK"/d.* "$WORK"/ht*
	set -- "$1" "$2" "$3" "$B/bench/$4" "$5"
	case $3 in
	bare*) set -- "$@" "$4" "$2" "$5" ;;
	hook-lib) set -- "$@" env LD_PRELOAD="$HOOK" LEAKSNAP_UNWIND=auto LEAKSNAP_FRAMES=16 \
		LEAKSNAP_OUT="$WORK/d" "$4" "$2" "$5" ;;
	hook-*) set -- "$@" env LD_PRELOAD="$HOOK" LEAKSNAP_UNWIND="${3#hook-}" LEAKSNAP_FRAMES=16 \
		LEAKSNAP_OUT="$WORK/d" "$4" "$2" "$5" ;;
	inapp-lib) set -- "$@" env LD_PRELOAD="$INAPP" LEAKSNAP_LIBS='/libvarbench\.so$' \
		LEAKSNAP_UNWIND=auto LEAKSNAP_FRAMES=16 LEAKSNAP_OUT="$WORK/d" "$4" "$2" "$5" ;;
	heaptrack) set -- "$@" heaptrack -o "$WORK/ht" "$4" "$2" "$5" ;;
	esac
	w=$1 t=$2 what=$3
	shift 5
	s=$(date +%s%N)
	"$@" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err" >&2; die "failed: $*"; }
	e=$(date +%s%N)
	if [ "$w" = var ] && { [ "${what#hook-}" != "$what" ] || [ "${what#inapp-}" != "$what" ]; }; then
		sh "$HERE/varcheck.sh" "$SC" "$WORK"/d.*.exit.dump "$t" >>"$WORK/checks" ||
			die "$what $t: the dump's stacks are not varbench's"
	fi
	echo $((e - s))
}

nconf=$(wc -l <"$WORK/configs")
echo "bench: $nconf configurations, 1 warm-up round and $RUNS timed rounds, interleaved" >&2
: >"$WORK/times"
r=0
while [ $r -le "$RUNS" ]; do
	while read -r w t what prog n; do
		ns=$(run_one "$w" "$t" "$what" "$prog" "$n" </dev/null)
		[ $r = 0 ] || echo "$w $t $what $ns" >>"$WORK/times"
	done <"$WORK/configs"
	echo "bench: round $r of $RUNS done" >&2
	r=$((r + 1))
done

# Instructions of the 1-thread runs (valgrind's cachegrind: the same
# count whatever the load), on shorter runs: per iteration.
have_ir=0
if [ "${BENCH_IR:-1}" = 1 ] && command -v valgrind >/dev/null 2>&1; then
	have_ir=1
	: >"$WORK/instr"
	while read -r w t what prog n; do
		[ "$t" = 1 ] && [ "$what" != heaptrack ] || continue
		n=$((n / 10))
		case $what in
		bare*) set -- ;;
		inapp-lib) set -- LD_PRELOAD="$INAPP" LEAKSNAP_LIBS='/libvarbench\.so$' \
			LEAKSNAP_UNWIND=auto LEAKSNAP_FRAMES=16 LEAKSNAP_OUT="$WORK/d" ;;
		hook-lib) set -- LD_PRELOAD="$HOOK" LEAKSNAP_UNWIND=auto LEAKSNAP_FRAMES=16 \
			LEAKSNAP_OUT="$WORK/d" ;;
		*) set -- LD_PRELOAD="$HOOK" LEAKSNAP_UNWIND="${what#hook-}" LEAKSNAP_FRAMES=16 \
			LEAKSNAP_OUT="$WORK/d" ;;
		esac
		rm -rf "$WORK"/d.*
		ir=$(env "$@" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
			"$B/bench/$prog" 1 "$n" 2>&1 >/dev/null | awk '/I *refs/ { gsub(",", "", $4); print $4 }')
		[ -n "$ir" ] || die "valgrind could not count $what $prog"
		echo "$w $what $ir $n" >>"$WORK/instr"
	done <"$WORK/configs"
fi

# The hook's memory and dump pause: bench/hookmem.c, 1M live blocks from 1
# and from 16384 distinct stacks, bare and hooked (resident KiB after the
# allocations), and leaksnap_dump() while another thread allocates.  The
# resident-size runs go without address randomization where setarch can
# turn it off: the heap then lies the same way in every run, so the
# pointer tables (one per 64 MiB of address space, each a power of two)
# come out the same size, and the figures repeat to the KiB.
MEM_BLOCKS=${BENCH_MEM_BLOCKS:-1000000}
MEM_STACKS=16384
NORAND=
setarch "$(uname -m)" -R true 2>/dev/null && NORAND="setarch $(uname -m) -R"
mem_rss() { # STACKS [hook]
	if [ "${2:-}" = hook ]; then
		env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/m" LEAKSNAP_DUMP_ON_EXIT=0 \
			$NORAND "$B/bench/hookmem" "$MEM_BLOCKS" "$1"
	else
		$NORAND "$B/bench/hookmem" "$MEM_BLOCKS" "$1"
	fi | awk '/^rss_kib/ { print $2 }'
}
# The distinct stacks of a hooked run's dump: the divisor of the
# per-stack figure is counted, not assumed.
rm -f "$WORK"/m.*
env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/m" LEAKSNAP_DUMP_ON_EXIT=0 \
	"$B/bench/hookmem" $((MEM_STACKS * 4)) "$MEM_STACKS" "$WORK/m.dump" >/dev/null ||
	die "hookmem could not dump"
mem_distinct=$("$B/bin/leaksnap" show "$WORK/m.dump" | awk '
	/^#[0-9]/ { if (st != "") n[st] = 1; st = ""; rec = 1; next }
	rec && /^    #[0-9]/ { st = st " " $2; next }
	END { if (st != "") n[st] = 1; c = 0; for (k in n) c++; print c }')
[ "$mem_distinct" -ge "$MEM_STACKS" ] || die "hookmem's dump holds $mem_distinct stacks, not $MEM_STACKS"
rm -f "$WORK"/m.*
: >"$WORK/mem"
for r in 1 2 3; do
	echo "bare1 $(mem_rss 1)" >>"$WORK/mem"
	echo "hook1 $(mem_rss 1 hook)" >>"$WORK/mem"
	echo "bareS $(mem_rss $MEM_STACKS)" >>"$WORK/mem"
	echo "hookS $(mem_rss $MEM_STACKS hook)" >>"$WORK/mem"
	rm -f "$WORK"/m.*
	env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/m" LEAKSNAP_DUMP_ON_EXIT=0 \
		"$B/bench/hookmem" "$MEM_BLOCKS" 1 "$WORK/m.dump" >"$WORK/pause" ||
		die "hookmem could not dump"
	awk '/^dump_s|^pause_s/ { print $1, $2 }' "$WORK/pause" >>"$WORK/mem"
	rm -f "$WORK"/m.*
done
mmed() {
	awk -v k="$1" '$1 == k { print $2 }' "$WORK/mem" | median
}

# median / spread of one configuration, in seconds
med() {
	awk -v k="$1 $2 $3" '$1 " " $2 " " $3 == k { print $4 / 1e9 }' "$WORK/times" | median
}
spread() {
	awk -v k="$1 $2 $3" '$1 " " $2 " " $3 == k { v = $4 / 1e9
		if (mn == "" || v < mn) mn = v; if (v > mx) mx = v }
		END { if (mn > 0) printf "%.2f", mx / mn }' "$WORK/times"
}
ratio() {
	echo "$1 $2" | awk '{ printf "%.2f", $1 / $2 }'
}

cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
rev=$(git -C "$HERE/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
{
	echo "leaksnap benchmark: collection ($(date -u '+%Y-%m-%d %H:%M UTC'))"
	echo "machine: $(nproc) CPUs, ${cpu:-$(uname -m)}, $(uname -sr); load average $load; leaksnap $rev"
	echo "allocbench THREADS $PAIRS: malloc/free pairs per thread, one site, call depth 10,"
	echo "  sizes 16..4096, blocks filled"
	echo "varbench THREADS $ITERS: iterations per thread, sites malloc/calloc/malloc+realloc/"
	echo "  posix_memalign, 2 callers, 10-deep recursive chain, 1024 live slots freed at random,"
	echo "  sizes 16..4096, filled; -O2 without frame pointers (fp mode: varbench-fp, with them)"
	echo "8 threads: a quarter of the work per thread.  16 frames.  Median of $RUNS interleaved"
	echo "rounds; spread = slowest / fastest round.  fp rows of varbench are against bare-fp."
	echo "+ns/iter: what the hook adds to one iteration (pair), in CPU time per thread."
	echo "hook-lib, inapp-lib: varbench's workload in libvarbench.so (varbench_main), auto"
	echo "  unwinding, under libleakhook.so / libleakhook-inapp.so watching that library alone."
	for w in alloc var; do
		echo ""
		printf '%-22s %9s %8s %8s %7s %s\n' "${w}bench" "time (s)" "x bare" "+ns/iter" "spread" "goal"
		for t in 1 2 8; do
			bare=$(med $w $t bare)
			for what in bare bare-fp hook-fp hook-auto hook-lib inapp-lib heaptrack; do
				grep -q "^$w $t $what " "$WORK/times" || continue
				m=$(med $w $t $what)
				base=$bare
				case $what in hook-fp | bare-fp) [ $w = var ] && base=$(med $w $t bare-fp) ;; esac
				x=$(ratio "$m" "$base")
				echo "$w $t $what $x" >>"$WORK/ratios"
				goal=""
				case "$w $what $t" in
				"var hook-auto 1" | "var hook-auto 2") goal="<= 2.0x (aim 1.5x)" ;;
				"var hook-fp 1" | "var hook-fp 2") goal="<= 1.3x" ;;
				"var inapp-lib "*)
					goal="<= hook-lib: $(ratio "$m" "$(med $w $t hook-lib)") of its time" ;;
				"var hook-"*" 8")
					r2=$(awk -v k="$w 2 $what" '$1 " " $2 " " $3 == k { print $4 }' "$WORK/ratios")
					goal="<= 1.2 x the 2-thread ratio: $(ratio "$x" "$r2")" ;;
				esac
				n=$(awk -v k="$w $t $what" '$1 " " $2 " " $3 == k { print $5 }' "$WORK/configs")
				printf '%-22s %9.3f %7.2fx %8.1f %7s %s\n' "$what ($t thr)" "$m" "$x" \
					"$(echo "$m $base $n $t $(nproc)" | awk '{ c = $4 < $5 ? $4 : $5
						print ($1 - $2) * 1e9 * c / ($3 * $4) }')" \
					"$(spread $w $t $what)" "$goal"
			done
		done
	done
	if [ $have_ir = 1 ]; then
		echo ""
		echo "instructions per malloc/free pair (alloc) or iteration (var), 1 thread, a tenth of"
		echo "the work (valgrind --tool=cachegrind; steady under load):"
		for w in alloc var; do
			awk -v w=$w '$1 == w { v[$2] = $3 / $4 }
				END { b = v["bare"]; bf = v["bare-fp"]
					for (k in v) if (k != "bare" && k != "bare-fp") {
						base = w == "var" && k == "hook-fp" ? bf : b
						printf "  %sbench %-10s %6.0f  bare%s %4.0f  %5.2fx\n", w, k, v[k],
							base == bf && w == "var" ? "-fp" : "   ", base, v[k] / base } }' \
				"$WORK/instr" | sort
		done
	fi
	echo ""
	b1=$(mmed bare1) h1=$(mmed hook1) bs=$(mmed bareS) hs=$(mmed hookS)
	echo "the hook's memory, $MEM_BLOCKS live blocks (bench/hookmem.c; resident KiB, median of 3):"
	echo "$b1 $h1 $bs $hs $MEM_BLOCKS $mem_distinct" | awk -v norand="$NORAND" '{
		pb = ($2 - $1) * 1024 / $5
		ps = (($4 - $3) - ($2 - $1)) * 1024 / ($6 - 1)
		printf "  1 stack: bare %d, hooked %d KiB: %.0f bytes per live block (all included)\n", $1, $2, pb
		printf "  %d stacks: bare %d, hooked %d KiB: %.0f bytes more per distinct stack\n", $6, $3, $4, ps
		if (norand == "")
			printf "  (address randomization was on: resident sizes move by MiBs between runs)\n" }'
	echo "  dump of $MEM_BLOCKS live blocks: leaksnap_dump() $(mmed dump_s) s, longest stall of another"
	echo "  allocating thread meanwhile (the pause) $(mmed pause_s) s (goal <= 0.1 s)"
	echo ""
	echo "stacks checked in the exit dump of every hooked varbench run ($(wc -l <"$WORK/checks") dumps):"
	sort "$WORK/checks" | uniq -c | sed 's/^ */  /'
	[ $have_heaptrack = 1 ] || echo "(heaptrack not installed or BENCH_HEAPTRACK=0: its rows are missing)"
} | tee "$RESULTS"
echo "bench: results in $RESULTS" >&2
