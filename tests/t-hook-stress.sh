#!/bin/sh
# The hook under load: 8 threads x 1M random malloc/calloc/realloc/free run
# unchanged and leave nothing behind; ten dump signals sent back to back
# while the stress runs give exactly the dumps 1..10, each readable and
# each a consistent snapshot; blocks handed between threads; a dlopen/dlclose
# loop and a fork+exec chain.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"

"$T/stress" 8 1000000 >"$w/bare.out" 2>&1 || fail "stress without the hook failed"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/st" "$T/stress" 8 1000000 >"$w/hook.out" 2>&1
[ $? = 0 ] || fail "stress under the hook: exit status"
cmp -s "$w/bare.out" "$w/hook.out" || { fail "stress output differs"; cat "$w/hook.out"; }
d=$(ls "$w"/st.*.exit.dump)
"$SC" "$d" >"$d.txt"
no_record "$d.txt" 'stress_thread'

# Ten signals, no pause between them; the program runs on meanwhile.
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/sig" "$T/stress" 8 4000000 >"$w/sig.out" 2>&1 &
pid=$!
sleep 0.3
for i in 1 2 3 4 5 6 7 8 9 10; do
	kill -47 "$pid" # SIGRTMAX-17 with glibc (SIGRTMAX = 64)
done
wait "$pid"
[ $? = 0 ] || fail "stress with signals: exit status"
grep -q -x "stress 8 x 4000000: checksum [0-9]*, 0 bad" "$w/sig.out" || { fail "stress with signals: output"; cat "$w/sig.out"; }
for n in 0001 0002 0003 0004 0005 0006 0007 0008 0009 0010; do
	f="$w/sig.$pid.$n.dump"
	if [ ! -f "$f" ]; then
		fail "dump $n of 10 missing"
		continue
	fi
	"$L" show "$f" >"$f.show" 2>"$f.err" || fail "$f: not readable"
	[ -s "$f.err" ] && { fail "$f: show warned (inconsistent snapshot?)"; cat "$f.err"; }
	grep -q -x '  trigger=signal' "$f.show" || fail "$f: trigger"
	[ -f "$w/sig.$pid.$n.maps" ] || fail "maps $n missing"
done
[ -e "$w/sig.$pid.0011.dump" ] && fail "an eleventh dump appeared"
[ -f "$w/sig.$pid.exit.dump" ] || fail "no exit dump after the signals"
ls "$w" | grep -q '\.tmp' && fail "temporary files left behind"

# Blocks freed by other threads than their own, threads coming and going,
# interval dumps meanwhile: the exit dump holds exactly the blocks the
# program kept, counted and sized as it counts them, one record per size.
for mode in fp auto; do
	LD_PRELOAD=$HOOK LEAKSNAP_UNWIND=$mode LEAKSNAP_INTERVAL=0.05 LEAKSNAP_OUT="$w/ho$mode" \
		"$T/handoff" 25 4 20000 >"$w/ho$mode.out" 2>&1
	[ $? = 0 ] || { fail "handoff ($mode): exit status"; cat "$w/ho$mode.out"; }
	grep -q -x 'handoff: kept 2007 blocks of 500 sizes, 565783 bytes, ok' "$w/ho$mode.out" ||
		{ fail "handoff ($mode): output"; cat "$w/ho$mode.out"; }
	d=$(ls "$w"/ho$mode.*.exit.dump)
	"$SC" "$d" >"$d.txt"
	got=$(awk '/ handoff_alloc( |$)/ { c += $2; b += $1 * $2; r++ } END { print c + 0, b + 0, r + 0 }' "$d.txt")
	[ "$got" = "2007 565783 500" ] ||
		fail "handoff ($mode): exit dump holds $got (count bytes records), expected 2007 565783 500"
done

# dlopen / dlclose loop: unwind rules of unloaded code are dropped.
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/dl" "$T/dlloop" "$T/libleaker.so" 300 >"$w/dl.out" 2>&1
[ $? = 0 ] && grep -q -x 'dlloop 300 ok' "$w/dl.out" || { fail "dlloop"; cat "$w/dl.out"; }

# The same with 3,000 dump signals 0.3 ms apart: in a process of one thread the
# handler writes the dumps itself, and may come inside dlclose(), between
# the unmapping of the library and its leaving the loader's list (the
# build IDs are read only from what the maps show readable: before, the
# program died of SIGSEGV within a few thousand rounds), or come while the
# thread writes a dump asked for before (one switch to the hook's stack at
# a time: a second one made the program jump to address 1).
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/dls" LEAKSNAP_DUMP_ON_EXIT=0 "$T/dlloop" "$T/libleaker.so" 5000 \
	>"$w/dls.out" 2>&1 &
dpid=$!
"$T/sigsend" "$dpid" 3000 300 || fail "dlloop with dump signals: sigsend failed"
wait "$dpid"
st=$?
[ $st = 0 ] && grep -q -x 'dlloop 5000 ok' "$w/dls.out" ||
	{ fail "dlloop with dump signals: status $st"; cat "$w/dls.out"; }
ls "$w"/dls.*.0001.dump >/dev/null 2>&1 || fail "dlloop with dump signals: no dump"

# Dump signals during fork(): the hook's fork handlers hold its locks with
# the signals blocked, and the signal comes as they give them back. Each of
# the 20 dumps still has the lines of the library unloaded before (before,
# the handler waited half a second for a lock of its own thread's, and the
# dump went without them).
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/fu" LEAKSNAP_DUMP_ON_EXIT=0 "$T/edge" forkunload \
	"$T/libleaker.so" 3000 >"$w/fu.out" 2>&1 &
fpid=$!
i=0
until grep -q -x 'forkunload unloaded' "$w/fu.out" 2>/dev/null || [ $i -ge 400 ]; do
	i=$((i + 1))
	sleep 0.025
done
"$T/sigsend" "$fpid" 20 5000 || fail "forkunload: sigsend failed"
wait "$fpid"
grep -q -x 'forkunload 3000 ok' "$w/fu.out" || { fail "forkunload"; cat "$w/fu.out"; }
n=0
for d in "$w"/fu.*.dump; do
	[ -f "$d" ] || continue
	n=$((n + 1))
	if [ -z "${LEAKSNAP_TEST_HOOK:-}" ]; then
		grep -a -q '^unloaded_build_id=.* [^ ]*/libleaker\.so$' "$d" ||
			fail "forkunload: $d has no unloaded= lines of libleaker.so"
	fi
done
[ $n = 20 ] || fail "forkunload: $n dumps, expected 20"

# fork + exec chain: four processes, four exit dumps, each with its leak.
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/fe" "$T/forkexec" 3 >"$w/fe.out" 2>&1
[ $? = 0 ] || fail "forkexec: exit status"
printf 'level 3\nlevel 2\nlevel 1\nlevel 0\n' | cmp -s - "$w/fe.out" || fail "forkexec output"
set -- "$w"/fe.*.exit.dump
[ $# = 4 ] || fail "forkexec: $# exit dumps, expected 4"
for d in "$@"; do
	"$SC" "$d" >"$d.txt"
	grep -q -E '^300[0-3] 1 app chain_leak main' "$d.txt" || fail "$d: no chain_leak record"
done
cat "$w"/fe.*.txt | grep -c -E '^300[0-3] 1 app chain_leak' | grep -q -x 4 ||
	fail "forkexec: the four leaks are not one per process"
finish
