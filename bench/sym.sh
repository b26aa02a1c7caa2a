#!/bin/sh
# bench/sym.sh [BUILD_DIR]: the symbolizer benchmark.  Symbolizes 100,000
# random .text addresses (function, inlined frames, demangled names; process
# start included) of (a) a generated C++ program (bench/gen_cxx.py, built
# with g++ -g -O2 and cached) and (b) libc.so.6 with its libc6-dbg debug file
# found through the build ID, with leaksnap addr2line, llvm-symbolizer, GNU
# addr2line and eu-addr2line, all timed in one hyperfine run; reports the
# median times, addresses/s, peak RSS, the ratios to llvm-symbolizer, and the
# agreement of leaksnap's answers with llvm-symbolizer's.  See
# bench/README.md.
set -eu
. "$(dirname "$0")/lib.sh"

B=${1:-build}
LS=$B/bin/leaksnap
SRC=$(cd "$(dirname "$0")/.." && pwd)
N=${BENCH_ADDRS:-100000}       # addresses per target
EU_N=${BENCH_EU_ADDRS:-2000}   # eu-addr2line's share (it is slow)
SEED=${BENCH_SEED:-1}
RUNS=${BENCH_RUNS:-5}          # timed runs per command, after 1 warmup
RSS_RUNS=3                     # peak RSS: median of this many runs
GOAL_X=4                       # throughput, x llvm-symbolizer's
GOAL_AGREE=99.9                # % of addresses agreeing with llvm-symbolizer
LIBC=${BENCH_LIBC:-/lib/x86_64-linux-gnu/libc.so.6}
RESULTS=$B/bench/results-sym.txt
HF_JSON=$B/bench/hyperfine-sym.json
HF_LOG=$B/bench/hyperfine-sym.log

die() {
	echo "bench: $*" >&2
	exit 1
}
note() {
	echo "bench: $*" >&2
}

[ -x "$LS" ] || die "$LS is missing: run 'make' (or make B=$B)"
command -v hyperfine >/dev/null 2>&1 || die "hyperfine is not installed (scripts/ensure-deps.sh --bench)"
command -v python3 >/dev/null 2>&1 || die "python3 is not installed"
command -v readelf >/dev/null 2>&1 || die "readelf (binutils) is not installed"
mkdir -p "$B/bench"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-symbench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# Results: printed and collected for $RESULTS.  Notes about skipped tools
# and targets are collected too, so the saved results say what is missing.
: >"$WORK/results"
say() {
	printf '%s\n' "$*" | tee -a "$WORK/results"
}
: >"$WORK/skipped"
skip() {
	note "$*"
	echo "$*" >>"$WORK/skipped"
}

# The tools -----------------------------------------------------------------
# Each compared tool is a column; a missing one is said and skipped.
LLVM=""
for c in llvm-symbolizer llvm-symbolizer-19 llvm-symbolizer-18 llvm-symbolizer-17 \
	llvm-symbolizer-16 llvm-symbolizer-15 llvm-symbolizer-14; do
	if command -v "$c" >/dev/null 2>&1; then
		LLVM=$(command -v "$c")
		break
	fi
done
TOOLS="leaksnap"
if [ -n "$LLVM" ]; then
	TOOLS="$TOOLS llvm"
else
	skip "llvm-symbolizer is not installed (Debian: llvm): its column, the ratios and the agreement are skipped"
fi
if command -v addr2line >/dev/null 2>&1; then
	TOOLS="$TOOLS gnu"
else
	skip "GNU addr2line is not installed (Debian: binutils): its column is skipped"
fi
if command -v eu-addr2line >/dev/null 2>&1; then
	TOOLS="$TOOLS eu"
else
	skip "eu-addr2line is not installed (Debian: elfutils): its column is skipped"
fi
TIME=""
if [ -x /usr/bin/time ] && /usr/bin/time -f %M -o "$WORK/t" true 2>/dev/null; then
	TIME=/usr/bin/time
else
	skip "/usr/bin/time (GNU time) is not installed (Debian: time): peak RSS is not measured"
fi

tool_label() {
	case $1 in
	leaksnap) echo "leaksnap addr2line" ;;
	llvm) echo "llvm-symbolizer" ;;
	gnu) echo "GNU addr2line" ;;
	eu) echo "eu-addr2line" ;;
	esac
}

# with TOOL FILE PREFIX...: run PREFIX then TOOL's command for FILE (the
# addresses come on standard input).
with() {
	_t=$1 _f=$2
	shift 2
	case $_t in
	leaksnap) "$@" "$LS" addr2line -f -i -C -e "$_f" ;;
	llvm) "$@" "$LLVM" -e "$_f" ;; # its defaults: functions, inlines, demangled
	gnu) "$@" addr2line -f -i -C -e "$_f" ;;
	eu) "$@" eu-addr2line -f -i -C -e "$_f" ;;
	esac
}

# Target (a): the generated C++ program --------------------------------------
# Built once into BUILD/bench/symcxx-KEY/, KEY a hash of the generator, its
# options and the compiler's version: a changed generator gets a new tree.
TARGETS=""
GEN_OPTS="--seed 1"
CXX_FILE=""
CXX_INFO=""
if ! command -v g++ >/dev/null 2>&1; then
	skip "g++ is not installed: target (a), the generated C++ program, is skipped"
elif ! command -v make >/dev/null 2>&1; then
	skip "make is not installed: target (a), the generated C++ program, is skipped"
else
	key=$( (cat "$SRC/bench/gen_cxx.py"; echo "$GEN_OPTS"; g++ --version | head -n 1) |
		sha256sum | cut -c 1-12)
	dir=$B/bench/symcxx-$key
	CXX_FILE=$dir/symbench
	CXX_INFO=$dir/info
	# The info file is written last: a tree without it is incomplete.  The
	# tree is built where it stays, so its DWARF names the sources' real
	# paths.
	if [ ! -x "$CXX_FILE" ] || [ ! -s "$CXX_INFO" ]; then
		# Trees of other generator versions are stale (~150 MB each).
		rm -rf "$B"/bench/symcxx-*
		note "generating and building the C++ program in $dir (once; a minute or two)"
		# shellcheck disable=SC2086
		python3 "$SRC/bench/gen_cxx.py" $GEN_OPTS "$dir" || die "gen_cxx.py failed"
		jobs=$(nproc 2>/dev/null || echo 2)
		t0=$(date +%s.%N)
		make -s -C "$dir" -j"$jobs" >"$WORK/make.log" 2>&1 ||
			{ tail -n 30 "$WORK/make.log" >&2; die "building the generated C++ program failed"; }
		t1=$(date +%s.%N)
		note "counting its DW_TAG_inlined_subroutine entries (readelf)"
		inl=$(readelf --debug-dump=info "$CXX_FILE" 2>/dev/null |
			grep -c DW_TAG_inlined_subroutine || true)
		set -- "$dir"/unit*.cc
		units=$#
		rm -f "$dir"/*.o
		{
			echo "seconds $(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }')"
			echo "jobs $jobs"
			echo "units $units"
			echo "bytes $(wc -c <"$CXX_FILE" | tr -d ' ')"
			echo "text $(size -A "$CXX_FILE" | awk '$1 == ".text" { print $2 }')"
			echo "inlined $inl"
			echo "compiler $(g++ --version | head -n 1)"
		} >"$CXX_INFO.tmp"
		mv "$CXX_INFO.tmp" "$CXX_INFO"
		CXX_FRESH=1
	fi
	TARGETS="a"
fi
info() { # KEY: a value from the generated program's info file
	awk -v k="$1" '$1 == k { sub(/^[^ ]* /, ""); print }' "$CXX_INFO"
}

# Target (b): libc.so.6, its DWARF in libc6-dbg's file named by the build ID --
LIBC_DEBUG=""
if [ ! -f "$LIBC" ]; then
	skip "$LIBC does not exist (set BENCH_LIBC): target (b), libc, is skipped"
else
	bid=$(readelf -n "$LIBC" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
	if [ -z "$bid" ]; then
		skip "$LIBC has no build ID: target (b), libc, is skipped"
	else
		LIBC_DEBUG=/usr/lib/debug/.build-id/$(echo "$bid" | cut -c 1-2)/$(echo "$bid" | cut -c 3-).debug
		if [ -f "$LIBC_DEBUG" ]; then
			TARGETS="$TARGETS b"
		else
			skip "libc6-dbg is not installed ($LIBC_DEBUG, the debug file for libc's build ID, is missing): target (b), libc, is skipped"
			LIBC_DEBUG=""
		fi
	fi
fi
[ -n "$TARGETS" ] || die "no target to measure"

target_file() {
	case $1 in
	a) echo "$CXX_FILE" ;;
	b) echo "$LIBC" ;;
	esac
}
target_label() {
	case $1 in
	a) echo "(a) generated C++" ;;
	b) echo "(b) libc.so.6" ;;
	esac
}

# Addresses: N random addresses in the file's .text, seeded (one list per
# target, the same for every tool); eu-addr2line gets the first EU_N.
for t in $TARGETS; do
	python3 - "$(target_file "$t")" "$N" "$SEED" "$WORK/addrs.$t" <<'EOF' || die "cannot make addresses for $(target_file "$t")"
import random, subprocess, sys
path, n, seed, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sections = subprocess.run(['readelf', '-SW', path], capture_output=True, text=True, check=True).stdout
for line in sections.splitlines():
    if ' .text ' in line:
        f = line.split(']', 1)[1].split()
        lo, size = int(f[2], 16), int(f[4], 16)
        break
else:
    sys.exit('bench: %s has no .text' % path)
rng = random.Random(seed)
with open(out, 'w') as f:
    f.writelines('0x%x\n' % rng.randrange(lo, lo + size) for _ in range(n))
EOF
	head -n "$EU_N" "$WORK/addrs.$t" >"$WORK/addrs-eu.$t"
done
[ "$EU_N" -le "$N" ] || EU_N=$N
naddrs() { # TOOL
	if [ "$1" = eu ]; then echo "$EU_N"; else echo "$N"; fi
}

# Sanity: every tool must answer a sample with source lines, or its numbers
# would time a failure (no debug file found answers fast).  With -a each
# answer starts with the address; an answer counts if it has a FILE:LINE with
# LINE > 0.
SAMPLE=200
for t in $TARGETS; do
	f=$(target_file "$t")
	head -n "$SAMPLE" "$WORK/addrs.$t" >"$WORK/sample"
	for tool in $TOOLS; do
		case $tool in # the timed commands with -a (print each address first)
		leaksnap) "$LS" addr2line -a -f -i -C -e "$f" ;;
		llvm) "$LLVM" -a -e "$f" ;;
		gnu) addr2line -a -f -i -C -e "$f" ;;
		eu) eu-addr2line -a -f -i -C -e "$f" ;;
		esac <"$WORK/sample" >"$WORK/sample.out" 2>"$WORK/sample.err" ||
			{ cat "$WORK/sample.err" >&2; die "$(tool_label "$tool") failed on $f"; }
		known=$(awk '/^0x[0-9a-fA-F]+$/ { n++; next }
			/:[1-9][0-9]*(:[0-9]+)?( \(discriminator [0-9]+\))?$/ { k[n] = 1 }
			END { c = 0; for (i in k) c++; print c + 0 }' "$WORK/sample.out")
		echo "$t $tool $known" >>"$WORK/known"
	done
	best=$(awk -v t="$t" '$1 == t && $3 > m { m = $3 } END { print m + 0 }' "$WORK/known")
	[ "$best" -ge $((SAMPLE / 2)) ] ||
		die "no tool answers $f with source lines ($best of $SAMPLE addresses)"
	for tool in $TOOLS; do
		k=$(awk -v t="$t" -v o="$tool" '$1 == t && $2 == o { print $3 }' "$WORK/known")
		if [ $((k * 10)) -lt $((best * 9)) ]; then
			[ "$tool" = leaksnap ] && die "leaksnap answers only $k of $SAMPLE sample addresses of $f with a source line (best tool: $best)"
			skip "$(tool_label "$tool") answers only $k of $SAMPLE sample addresses of $f with a source line (best tool: $best): it did not find the debug information, its $(target_label "$t") numbers are skipped"
			echo "$t $tool" >>"$WORK/unusable"
		fi
	done
done
usable() { # TARGET TOOL
	! grep -qx "$1 $2" "$WORK/unusable" 2>/dev/null
}

# Report header -----------------------------------------------------------------
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null || true)
rev=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$rev" != unknown ] &&
	[ -n "$(git -C "$SRC" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	rev="$rev+uncommitted changes"
fi
version() { # TOOL
	case $1 in
	leaksnap) "$LS" --version 2>/dev/null | head -n 1 ;;
	llvm) "$LLVM" --version 2>/dev/null | grep -o 'LLVM version [^ ]*' | head -n 1 ;;
	gnu) addr2line --version 2>/dev/null | head -n 1 ;;
	eu) eu-addr2line --version 2>/dev/null | head -n 1 ;;
	esac
}
mib() { # BYTES
	awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1000000 }'
}

say "leaksnap benchmark: symbolizer, $N random .text addresses per target ($(date -u '+%Y-%m-%d %H:%M UTC'))"
say "machine: $(nproc) CPUs, ${cpu:-$(uname -m)}, ${mem:-? GiB} RAM, $(uname -sr); load average $(cut -d ' ' -f 1-3 /proc/loadavg)"
say "leaksnap: $rev, build dir $B (bin/leaksnap built $(date -u -r "$LS" '+%Y-%m-%d %H:%M UTC'))"
if [ -n "${LEAKSNAP_JOBS:-}" ]; then
	say "leaksnap threads: LEAKSNAP_JOBS=$LEAKSNAP_JOBS"
else
	cpus=$(nproc 2>/dev/null || echo 1)
	say "leaksnap threads: $([ "$cpus" -gt 4 ] && echo 4 || echo "$cpus") (the CPUs it may run on, at most 4; LEAKSNAP_JOBS unset)"
fi
for tool in $TOOLS; do
	[ "$tool" = leaksnap ] && continue
	say "$(printf '%-19s%s' "$(tool_label "$tool"):" "$(version "$tool")")"
done
say "targets:"
for t in $TARGETS; do
	case $t in
	a)
		bytes=$(info bytes)
		inl=$(info inlined)
		say "  (a) $CXX_FILE"
		say "      generated by bench/gen_cxx.py $GEN_OPTS: $(info units) units, $(info compiler) -g -O2"
		say "      $bytes bytes ($(mib "$bytes"); goal >= 50 MB $( [ "$bytes" -ge 50000000 ] && echo PASS || echo FAIL)), .text $(info text) bytes,"
		say "      $inl DW_TAG_inlined_subroutine (goal >= 500000 $( [ "$inl" -ge 500000 ] && echo PASS || echo FAIL)),"
		say "      built in $(info seconds) s with make -j$(info jobs)$( [ "${CXX_FRESH:-0}" = 1 ] && echo " (in this run)" || echo " (cached from an earlier run)")"
		;;
	b)
		dbytes=$(wc -c <"$LIBC_DEBUG" | tr -d ' ')
		say "  (b) $LIBC ($(wc -c <"$(readlink -f "$LIBC")" | tr -d ' ') bytes), build ID $bid"
		say "      DWARF in $LIBC_DEBUG ($dbytes bytes, libc6-dbg $(dpkg-query -W -f='${Version}' libc6-dbg 2>/dev/null || echo '?'))"
		;;
	esac
done
say "commands (addresses on standard input, one per line, seed $SEED; output discarded):"
for tool in $TOOLS; do
	case $tool in
	leaksnap) say "  leaksnap addr2line -f -i -C -e FILE" ;;
	llvm) say "  llvm-symbolizer -e FILE        (its defaults: functions, inlined frames, demangled)" ;;
	gnu) say "  addr2line -f -i -C -e FILE" ;;
	eu) say "  eu-addr2line -f -i -C -e FILE  (the first $EU_N addresses only)" ;;
	esac
done
[ -n "$TIME" ] || RSS_RUNS=0
say "method: warm page cache; time = median (and min-max) of $RUNS runs after 1 warmup, all commands in one hyperfine run;"
say "        peak RSS = median of $RSS_RUNS runs (/usr/bin/time -f %M)"
say ""

# Times: one hyperfine run for every target and tool --------------------------------
set --
for t in $TARGETS; do
	for tool in $TOOLS; do
		usable "$t" "$tool" || continue
		if [ "$tool" = eu ]; then a=$WORK/addrs-eu.$t; else a=$WORK/addrs.$t; fi
		set -- "$@" --command-name "$t $tool" "$(with "$tool" "$(target_file "$t")" quoted) < $(q "$a")"
	done
done
note "timing with hyperfine ($RUNS runs each, log in $HF_LOG)"
hyperfine --warmup 1 --runs "$RUNS" --style basic --export-json "$HF_JSON" "$@" >"$HF_LOG" 2>&1 ||
	{ cat "$HF_LOG" >&2; die "hyperfine failed"; }
python3 - "$HF_JSON" >"$WORK/times" <<'EOF' || die "cannot read $HF_JSON"
import json, sys
for r in json.load(open(sys.argv[1]))['results']:
    print(r['command'], r['median'], r['min'], r['max'])
EOF

# Peak RSS: "TARGET TOOL KIB" lines --------------------------------------------
: >"$WORK/rss"
if [ -n "$TIME" ]; then
	note "measuring peak RSS with /usr/bin/time ($RSS_RUNS runs each)"
	for t in $TARGETS; do
		for tool in $TOOLS; do
			usable "$t" "$tool" || continue
			if [ "$tool" = eu ]; then a=$WORK/addrs-eu.$t; else a=$WORK/addrs.$t; fi
			: >"$WORK/runs"
			i=0
			while [ "$i" -lt "$RSS_RUNS" ]; do
				with "$tool" "$(target_file "$t")" "$TIME" -f %M -a -o "$WORK/runs" \
					<"$a" >/dev/null 2>"$WORK/rss.err" ||
					{ cat "$WORK/rss.err" >&2; die "$(tool_label "$tool") failed on $(target_file "$t")"; }
				i=$((i + 1))
			done
			echo "$t $tool $(grep -E '^[0-9]+$' "$WORK/runs" | median)" >>"$WORK/rss"
		done
	done
fi

# Agreement with llvm-symbolizer: "TARGET AGREE TOTAL" lines ---------------------------
: >"$WORK/agree"
if [ -n "$LLVM" ]; then
	for t in $TARGETS; do
		usable "$t" llvm || continue
		note "comparing leaksnap's answers with llvm-symbolizer's on $(target_label "$t") (JSON)"
		python3 "$SRC/bench/symagree.py" "$LS" "$LLVM" "$(target_file "$t")" "$WORK/addrs.$t" \
			"$(target_label "$t")" >"$WORK/agree.$t" || die "comparison failed on $(target_label "$t")"
		echo "$t $(sed -n 's/^agree //p' "$WORK/agree.$t")" >>"$WORK/agree"
	done
fi

# Tables ---------------------------------------------------------------------------
val() { # FILE TARGET TOOL: the value column
	awk -v t="$2" -v o="$3" '$1 == t && $2 == o { print $3 }' "$1"
}
for t in $TARGETS; do
	lt=$(val "$WORK/times" "$t" llvm)
	lr=$(val "$WORK/rss" "$t" llvm)
	say "$(target_label "$t"): $(target_file "$t")"
	say "$(printf '%-22s %9s %13s %12s %9s %10s %9s' tool 'time (s)' '(min-max)' 'addresses/s' 'x llvm' 'RSS (MiB)' 'RSS/llvm')"
	for tool in $TOOLS; do
		if ! usable "$t" "$tool"; then
			say "$(printf '%-22s %s' "$(tool_label "$tool")" "skipped: no debug information found")"
			continue
		fi
		tm=$(val "$WORK/times" "$t" "$tool")
		k=$(val "$WORK/rss" "$t" "$tool")
		l=$(tool_label "$tool")
		[ "$tool" = eu ] && l="$l *"
		say "$(awk -v l="$l" -v t="$tm" -v n="$(naddrs "$tool")" -v lt="$lt" -v k="$k" -v lr="$lr" \
			-v ln="$N" -v range="$(awk -v t="$t" -v o="$tool" '$1 == t && $2 == o { printf "%.3f-%.3f", $4, $5 }' "$WORK/times")" 'BEGIN {
			rate = n / t
			x = (lt != "" ? sprintf("%.2fx", rate / (ln / lt)) : "n/a")
			r = (k != "" ? sprintf("%.1f", k / 1024) : "n/a")
			rx = (k != "" && lr != "" ? sprintf("%.2fx", k / lr) : "n/a")
			printf "%-22s %9.3f %13s %12.0f %9s %10s %9s\n", l, t, range, rate, x, r, rx
		}')"
	done
	if echo " $TOOLS " | grep -q ' eu ' && usable "$t" eu; then
		say "  * eu-addr2line symbolizes only the first $EU_N addresses (BENCH_EU_ADDRS): its time is for"
		say "    those; addresses/s and x llvm are comparable, its RSS is for the smaller run"
	fi
	if [ -n "$lt" ]; then
		say "$(awk -v t="$(val "$WORK/times" "$t" leaksnap)" -v lt="$lt" -v k="$(val "$WORK/rss" "$t" leaksnap)" \
			-v lr="$lr" -v g="$GOAL_X" 'BEGIN {
			x = lt / t
			printf "goal: throughput %.2fx llvm-symbolizer (goal >= %sx) %s", x, g, (x >= g ? "PASS" : "FAIL")
			if (k != "" && lr != "")
				printf ", peak RSS %.1f MiB vs %.1f MiB (goal <= llvm-symbolizer) %s", k / 1024, lr / 1024,
					(k <= lr ? "PASS" : "FAIL")
			printf "\n"
		}')"
		agree=$(awk -v t="$t" '$1 == t { print $2, $3 }' "$WORK/agree")
		[ -n "$agree" ] && say "$(echo "$agree" | awk -v g="$GOAL_AGREE" '{
			p = 100 * $1 / $2
			printf "goal: agreement %d of %d addresses with llvm-symbolizer = %.3f%% (goal >= %s%%) %s\n",
				$1, $2, p, g, (p >= g ? "PASS" : "FAIL")
		}')"
	else
		say "goals: not evaluated (no llvm-symbolizer numbers for this target)"
	fi
	say ""
done

if [ -s "$WORK/agree" ]; then
	say "agreement with llvm-symbolizer (leaksnap addr2line --json vs llvm-symbolizer --output-style=JSON;"
	say "FunctionName, FileName, Line, Column of every frame, and the inline depth):"
	for t in $TARGETS; do
		grep -v '^agree ' "$WORK/agree.$t" | while IFS= read -r line; do say "$line"; done
	done
fi
if [ -s "$WORK/skipped" ]; then
	say ""
	say "skipped:"
	while IFS= read -r line; do say "  $line"; done <"$WORK/skipped"
fi

cp "$WORK/results" "$RESULTS"
note "results in $RESULTS, hyperfine data in $HF_JSON"
