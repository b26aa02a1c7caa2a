#!/bin/sh
# The hook in server shapes (issue 32): workers forked from a master that
# never allocate again still answer a dump signal and the control socket
# at once; a child's unshare(CLONE_NEWUSER) is not failed by the hook's
# threads.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	rm -rf "$w"
}
trap cleanup EXIT

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# BOUND_MS: how long a dump of an idle worker may take (the goal is 100 ms;
# the bound leaves room for a loaded machine).
BOUND_MS=1000

# start NAME [ENV...]: prefork 3 under the hook, its stdin a fifo held on
# fd 8; WORKERS = the workers' pids.
start() {
	_n=$1
	shift
	mkfifo "$w/$_n.in"
	env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$w/$_n" "$@" "$T/prefork" 3 \
		<"$w/$_n.in" >"$w/$_n.out" 2>"$w/$_n.err" &
	PIDS="$PIDS $!"
	exec 8>"$w/$_n.in"
	_i=0
	until grep -q '^ready ' "$w/$_n.out" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt 400 ] && { fail "$_n: never ready"; cat "$w/$_n.err"; finish; }
		sleep 0.05
	done
	WORKERS=$(sed -n 's/^ready //p' "$w/$_n.out")
	PIDS="$PIDS $WORKERS"
	sleep 0.2 # (idle: the workers sit in read())
}

stop() {
	exec 8>&-
	wait
}

# 1. A dump signal to each idle worker: its dump, at once, with one thread.
start sig
for p in $WORKERS; do
	t0=$(now_ms)
	kill -47 "$p" # SIGRTMAX-17 with glibc
	d="$w/sig.$p.0001.dump"
	while [ ! -f "$d" ] && [ $(($(now_ms) - t0)) -lt 10000 ]; do
		sleep 0.005
	done
	ms=$(($(now_ms) - t0))
	if [ ! -f "$d" ]; then
		fail "worker $p: no dump 10 s after the signal"
		continue
	fi
	[ "$ms" -le $BOUND_MS ] || fail "worker $p: dump after $ms ms (bound $BOUND_MS)"
	echo "worker $p: dump after $ms ms"
	# (written by the worker's one thread, in the handler: no dump thread
	# is made for it; the in-app build has one from the start)
	n=$(sed -n 's/^Threads:[[:space:]]*//p' "/proc/$p/status")
	want=1
	[ -n "${LEAKSNAP_TEST_HOOK:-}" ] && want=2
	[ "$n" = $want ] || fail "worker $p: $n threads after its dump, expected $want"
	"$SC" "$d" >"$d.txt" || fail "$d: stackcheck failed"
	expect_record "$d.txt" "2001 1 app master_leak main"
	no_record "$d.txt" ' zygote ' # (the worker allocated nothing)
done
# (nothing else was written: no dump of the master, no second one)
n=$(ls "$w"/sig.*.dump | wc -l)
[ "$n" = 3 ] || { fail "$n dumps, expected 3"; ls "$w"; }
stop

# 1b. With reachability: the dump thread holds the table locks and stops
# the threads at real-time priority where the process may have it (root
# here, unless the container forbids it: chrt tells), never a thread of
# the program's.
start rsig LEAKSNAP_REACHABILITY=1
set -- $WORKERS
kill -47 "$1"
d="$w/rsig.$1.0001.dump"
i=0
while [ ! -f "$d" ] && [ $i -lt 200 ]; do i=$((i + 1)); sleep 0.05; done
if command -v chrt >/dev/null 2>&1 && chrt -f 1 true 2>/dev/null; then want=fifo; else want=other; fi
expect_meta "$d" "reachability_sched=$want"
stop

# 2. The control socket of each idle worker answers.
start ctl LEAKSNAP_CONTROL=1 LEAKSNAP_DUMP_ON_EXIT=0
for p in $WORKERS; do
	t0=$(now_ms)
	out=$(timeout 10 "$L" ctl "$p" version 2>&1)
	ms=$(($(now_ms) - t0))
	case $out in
	*", pid $p, "*) ;;
	*) fail "worker $p: ctl version: '$out'" ;;
	esac
	[ "$ms" -le $BOUND_MS ] || fail "worker $p: ctl answered after $ms ms (bound $BOUND_MS)"
	timeout 10 "$L" ctl "$p" dump -o "$w/ctl-$p.dump" >/dev/null 2>"$w/ctl-$p.err" ||
		{ fail "worker $p: ctl dump failed"; cat "$w/ctl-$p.err"; }
done
stop

# 3. Workers that exit (fork per request): by default no exit dump of a
# forked child that did not exec, only the master's; LEAKSNAP_DUMP_ON_EXIT=all
# asks for theirs too; 0 for none.
for setting in "" all 0; do
	o="$w/ex$setting"
	mkdir "$o"
	out=$(env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$o/p" ${setting:+LEAKSNAP_DUMP_ON_EXIT=$setting} \
		LEAKSNAP_REACHABILITY=1 "$T/prefork" 3 exit)
	[ "$out" = done ] || fail "prefork exit ($setting): '$out'"
	n=$(ls "$o" | grep -c '\.exit\.dump$')
	case $setting in
	"") want=1 ;;
	all) want=4 ;;
	0) want=0 ;;
	esac
	[ "$n" = $want ] || { fail "LEAKSNAP_DUMP_ON_EXIT=$setting: $n exit dumps, expected $want"; ls "$o"; }
	for d in "$o"/*.exit.dump; do
		[ -f "$d" ] || continue
		"$SC" "$d" >"$d.txt" || fail "$d: stackcheck failed"
		expect_record "$d.txt" "2001 1 app master_leak main"
		if grep -q ' zygote ' "$d.txt"; then
			[ "$setting" = all ] || fail "$d: a worker's exit dump without =all"
			expect_record "$d.txt" "2002 1 zygote worker_leak main"
		fi
		expect_meta "$d" "trigger=exit"
	done
done

# A fork-per-request child keeps its changes to the tables apart from the
# pages it shares with its parent (tests/hook/forkcow.c): its 200
# allocations and 105 frees must not copy the parent's table pages (about
# 200 page faults when each one did; the child's own heap pages are about
# 60), and its dumps are still exact: the inherited blocks less those it
# freed, its own and those of a thread it started (whose first call put
# the child's changes into the shared tables), the double free of an
# inherited block counted; the same after its first dump.
RD=$(cd "$B/tests" && pwd)/reachdump
mkdir "$w/fc"
out=$(env LD_PRELOAD="$HOOK" LEAKSNAP_DUMP_ON_EXIT=0 "$T/forkcow" "$w/fc/d" 2>&1) ||
	fail "forkcow: status $?: $out"
f=$(echo "$out" | sed -n 's/^faults \([0-9]*\)$/\1/p')
[ -n "$f" ] && [ "$f" -lt 130 ] || fail "forkcow: the child's calls took '$f' page faults (expected < 130)"
for n in 1 2; do
	d="$w/fc/d.$n.dump"
	"$RD" "$d" >"$d.rd" 2>&1 || { fail "$d: not readable: $(cat "$d.rd")"; continue; }
	got=$(awk '$1 == "rec" { c[$2] += $3 }
		END { printf "%d %d %d %d %d", c[48], c[3000], c[1000], c[2500], c[2000] }' "$d.rd")
	want="20000 4 100 4 0"
	[ $n = 2 ] && want="20000 2 100 4 3"
	[ "$got" = "$want" ] || fail "$d: blocks of 48/3000/1000/2500/2000 bytes: $got, expected $want"
	grep -q -x 'meta invalid_frees=1' "$d.rd" || fail "$d: the double free not counted"
done

finish
