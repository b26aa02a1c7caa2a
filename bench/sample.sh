#!/bin/sh
# bench/sample.sh [BUILD_DIR]: sampled collection against full tracking and
# the bare program, side by side in one run, on the varied workload
# (bench/varbench.c: call paths that branch, 2M iterations per thread, 1024
# live slots freed at random; 8 threads do a quarter of the work each):
#   bare         varbench alone
#   bare-idle    (1 thread) the same with one more thread that only waits:
#                glibc's malloc locks its arena once a process has two
#                threads (what a dump thread of the hook's would cost a
#                program of one thread: the hook's waits for the
#                program's second; the table gives full and sampled
#                against it too)
#   full-auto    under libleakhook.so, every block, LEAKSNAP_UNWIND=auto
#   sample-auto  the same with LEAKSNAP_SAMPLE=65536
#   bare-fp, full-fp, sample-fp: varbench-fp (frame pointers), UNWIND=fp
#   bare-instr, full-instr, sample-instr: varbench-instr, built with
#                -finstrument-functions, UNWIND=instrument (bare-instr
#                against bare: what the instrumentation itself costs)
# with 1, 2 and 8 threads.  Rounds are interleaved (one warm-up, then
# BENCH_RUNS), so that a change in the machine's load hits every
# configuration alike; the table gives medians, the ratio to the bare run
# of the same binary and the spread (max/min).  Goals (issue 31): sample-auto
# <= 1.10x bare on 1 and 2 threads, and on 8 threads no worse than 1.2x its
# 2-thread ratio.
#
# Then memory: bench/hookmem's 1M live blocks (16..64 bytes, one stack)
# bare, fully tracked and sampled: the hook's resident KiB per live block,
# and, sampled, per sampled block (the dump counts them).
#
# Then the filter of sampled blocks on big heaps: bench/bigheap with
# BENCH_BIG_MIB MiB (default "1024 4096") of small blocks, an eighth of them
# replaced at random with the whole heap live, bare and sampled: the share
# of the unsampled frees that took the table lock (the dump's
# sample_filter= line), the filter's size, and the churn's time.
set -eu

B=${1:-build}
HOOK=$(cd "$B/lib" 2>/dev/null && pwd)/libleakhook.so
ITERS=${BENCH_ITERS:-2000000}
RUNS=${BENCH_RUNS:-5}
SAMPLE=${BENCH_SAMPLE:-65536}
RESULTS=$B/bench/results-sample.txt
HERE=$(dirname "$0")
. "$HERE/lib.sh"

die() {
	echo "bench: $*" >&2
	exit 1
}
for p in varbench varbench-fp varbench-instr hookmem bigheap; do
	[ -x "$B/bench/$p" ] || die "$B/bench/$p is missing: run 'make bench'"
done
[ -f "$HOOK" ] || die "$HOOK is missing: run 'make bench'"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-samplebench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

: >"$WORK/configs"
for t in 1 2 8; do
	n=$ITERS
	[ $t = 8 ] && n=$((n / 4))
	for what in bare full-auto sample-auto bare-fp full-fp sample-fp bare-instr full-instr \
		sample-instr; do
		prog=varbench
		case $what in *-fp) prog=varbench-fp ;; *-instr) prog=varbench-instr ;; esac
		echo "$t $what $prog $n" >>"$WORK/configs"
	done
	# (one thread: the same bare with one more thread that only waits, as
	# the hook's dump thread does: glibc's malloc then locks its arena)
	[ $t = 1 ] && echo "$t bare-idle varbench $n" >>"$WORK/configs"
done

mode() { # CONFIG: its LEAKSNAP_UNWIND
	case $1 in *-instr) echo instrument ;; *) echo "${1#*-}" ;; esac
}

run_one() { # THREADS WHAT PROG COUNT: the run's time in ns
	rm -f "$WORK"/d.*
	t=$1 what=$2 prog=$B/bench/$3 n=$4
	case $what in
	bare-idle) set -- env VARBENCH_IDLE_THREAD=1 "$prog" "$t" "$n" ;;
	bare*) set -- "$prog" "$t" "$n" ;;
	full-*) set -- env LD_PRELOAD="$HOOK" LEAKSNAP_UNWIND="$(mode "$what")" LEAKSNAP_FRAMES=16 \
		LEAKSNAP_OUT="$WORK/d" "$prog" "$t" "$n" ;;
	sample-*) set -- env LD_PRELOAD="$HOOK" LEAKSNAP_UNWIND="$(mode "$what")" LEAKSNAP_FRAMES=16 \
		LEAKSNAP_SAMPLE="$SAMPLE" LEAKSNAP_OUT="$WORK/d" "$prog" "$t" "$n" ;;
	esac
	s=$(date +%s%N)
	"$@" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err" >&2; die "failed: $*"; }
	e=$(date +%s%N)
	echo $((e - s))
}

echo "bench: $(wc -l <"$WORK/configs") configurations, 1 warm-up round and $RUNS timed rounds" >&2
: >"$WORK/times"
r=0
while [ $r -le "$RUNS" ]; do
	while read -r t what prog n; do
		ns=$(run_one "$t" "$what" "$prog" "$n" </dev/null)
		[ $r = 0 ] || echo "$t $what $ns" >>"$WORK/times"
	done <"$WORK/configs"
	echo "bench: round $r of $RUNS done" >&2
	r=$((r + 1))
done

# Instructions of the 1-thread runs (valgrind's cachegrind: the same count
# whatever the machine's load), on runs a tenth as long.
: >"$WORK/instr"
if [ "${BENCH_IR:-1}" = 1 ] && command -v valgrind >/dev/null 2>&1; then
	while read -r t what prog n; do
		[ "$t" = 1 ] || continue
		n=$((n / 10))
		case $what in
		bare-idle) set -- VARBENCH_IDLE_THREAD=1 ;;
		bare*) set -- ;;
		full-*) set -- LD_PRELOAD="$HOOK" LEAKSNAP_UNWIND="$(mode "$what")" LEAKSNAP_OUT="$WORK/d" ;;
		sample-*) set -- LD_PRELOAD="$HOOK" LEAKSNAP_UNWIND="$(mode "$what")" LEAKSNAP_OUT="$WORK/d" \
			LEAKSNAP_SAMPLE="$SAMPLE" ;;
		esac
		ir=$(env "$@" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
			"$B/bench/$prog" 1 "$n" 2>&1 >/dev/null | awk '/I *refs/ { gsub(",", "", $4); print $4 }')
		[ -n "$ir" ] || die "valgrind could not count $what"
		echo "$what $ir $n" >>"$WORK/instr"
	done <"$WORK/configs"
fi

med() { # THREADS WHAT
	awk -v t="$1" -v w="$2" '$1 == t && $2 == w { print $3 }' "$WORK/times" | median
}
spread() {
	awk -v t="$1" -v w="$2" '$1 == t && $2 == w { if (!mn || $3 < mn) mn = $3; if ($3 > mx) mx = $3 }
		END { printf "%.2f", mx / mn }' "$WORK/times"
}

# Memory: 1M live blocks of one stack, resident KiB after the allocations.
MEM_BLOCKS=${BENCH_MEM_BLOCKS:-1000000}
NORAND=
setarch "$(uname -m)" -R true 2>/dev/null && NORAND="setarch $(uname -m) -R"
mem_rss() { # bare|full|sample
	case $1 in
	bare) set -- ;;
	full) set -- env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/m" LEAKSNAP_DUMP_ON_EXIT=0 ;;
	sample) set -- env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/m" LEAKSNAP_DUMP_ON_EXIT=0 \
		LEAKSNAP_SAMPLE="$SAMPLE" LEAKSNAP_SAMPLE_SEED=1 ;;
	esac
	"$@" $NORAND "$B/bench/hookmem" "$MEM_BLOCKS" 1 | awk '/^rss_kib/ { print $2 }'
}
: >"$WORK/mem"
for r in 1 2 3; do
	for k in bare full sample; do
		echo "$k $(mem_rss $k)" >>"$WORK/mem"
	done
done
rm -f "$WORK"/m.*
env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/m" LEAKSNAP_DUMP_ON_EXIT=0 LEAKSNAP_SAMPLE="$SAMPLE" \
	LEAKSNAP_SAMPLE_SEED=1 "$B/bench/hookmem" "$MEM_BLOCKS" 1 "$WORK/m.dump" >/dev/null ||
	die "hookmem could not dump"
sampled=$("$B/bin/leaksnap" show "$WORK/m.dump" | awk '/^records:/ { gsub("[(]", "", $3); print $3 }')
mem() { awk -v k="$1" '$1 == k { print $2 }' "$WORK/mem" | median; }

# Big heaps: "MIB frees locked unsampled counters bare_churn_ns sampled_churn_ns"
: >"$WORK/big"
for mib in ${BENCH_BIG_MIB:-1024 4096}; do
	bare=$("$B/bench/bigheap" "$mib" | awk '{ print $6 }')
	rm -f "$WORK"/bh.*
	out=$(env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/bh" LEAKSNAP_SAMPLE="$SAMPLE" \
		LEAKSNAP_SAMPLE_SEED=1 "$B/bench/bigheap" "$mib") || die "bigheap $mib failed"
	f=$("$B/bin/leaksnap" show "$WORK"/bh.*.exit.dump | sed -n 's/^  sample_filter=//p')
	[ -n "$f" ] || die "bigheap $mib: no sample_filter= in the dump"
	set -- $f
	echo "$mib $(echo "$out" | awk '{ print $2 }') $2 $3 $1 $bare $(echo "$out" | awk '{ print $6 }')" \
		>>"$WORK/big"
	rm -f "$WORK"/bh.*
done

{
	echo "sampled collection (LEAKSNAP_SAMPLE=$SAMPLE) against full tracking, varbench"
	echo "$ITERS iterations per thread (8 threads: a quarter each), medians of $RUNS rounds"
	echo "$(uname -m), $(nproc) CPUs"
	echo
	printf '%-8s %-12s %10s %8s %8s\n' threads config seconds ratio spread
	for t in 1 2 8; do
		extra=
		[ $t = 1 ] && extra=bare-idle
		for what in bare $extra full-auto sample-auto bare-fp full-fp sample-fp bare-instr \
			full-instr sample-instr; do
			m=$(med "$t" "$what")
			case $what in
			*-fp) b=$(med "$t" bare-fp) ;;
			full-instr | sample-instr) b=$(med "$t" bare-instr) ;;
			*) b=$(med "$t" bare) ;;
			esac
			printf '%-8s %-12s %10.3f %7.2fx %8s\n' "$t" "$what" \
				"$(echo "$m" | awk '{ print $1 / 1e9 }')" \
				"$(echo "$m $b" | awk '{ print $1 / $2 }')" "$(spread "$t" "$what")"
		done
	done
	echo
	echo "1 thread, against bare with one idle thread (bare-idle: what a second thread costs"
	echo "the program, glibc's malloc locking its arena once it exists):"
	for what in full-auto sample-auto; do
		printf '  %-12s %7.2fx\n' "$what" "$(echo "$(med 1 "$what") $(med 1 bare-idle)" |
			awk '{ print $1 / $2 }')"
	done
	if [ -s "$WORK/instr" ]; then
		echo
		echo "instructions per iteration, 1 thread (valgrind; the ratio to the same binary bare):"
		awk '{ ir[$1] = $2 / $3 }
			END { n = split("bare bare-idle full-auto sample-auto bare-fp full-fp sample-fp bare-instr full-instr sample-instr", k, " ")
			for (i = 1; i <= n; i++) { b = k[i] ~ /-fp$/ ? "bare-fp" : k[i] ~ /^(full|sample)-instr$/ ? "bare-instr" : "bare"
				printf "  %-12s %8.0f  %5.2fx\n", k[i], ir[k[i]], ir[k[i]] / ir[b] } }' "$WORK/instr"
	fi
	echo
	bare=$(mem bare) full=$(mem full) samp=$(mem sample)
	echo "memory, $MEM_BLOCKS live blocks of 16..64 bytes (resident KiB, medians of 3):"
	echo "  bare $bare, full tracking $full, sampled $samp ($sampled blocks sampled)"
	awk -v b="$bare" -v f="$full" -v s="$samp" -v n="$MEM_BLOCKS" -v k="$sampled" 'BEGIN {
		printf "  full tracking: %.1f bytes per live block\n", (f - b) * 1024 / n
		printf "  sampled: %.2f bytes per live block, %.0f bytes per sampled block\n",
			(s - b) * 1024 / n, k ? (s - b) * 1024 / k : 0 }'
	echo
	echo "the filter of sampled blocks, big heaps of 16..112-byte blocks, an eighth replaced:"
	awk '{ printf "  %5d MiB: %.1f%% of %d frees (unsampled) took the table lock, %d counters;" \
		" churn %.2f s bare, %.2f s sampled\n", $1, $4 * 100 / $2, $2, $5, $6 / 1e9, $7 / 1e9 }' \
		"$WORK/big"
} | tee "$RESULTS"
