#!/bin/sh
# Crash dumps: a program that leaks known blocks and then dies of a fatal
# signal (tests/hook/crash.c) dies of it under the hook as without it (the
# same exit status, 128+N under the shell) and leaves PREFIX.PID.crash.dump
# and .maps: readable by `leaksnap show`, trigger=crash and the signal in its
# metadata, every leaked block with its size, count and the function that
# leaked it, the freed one not; no exit dump, nothing on stderr.  Also from
# a second thread, on a stack overflow (the alternate stack), for a signal
# sent by kill(), from glibc's free() finding the heap corrupt (its lock
# held), on a thread of 16 KiB of stack (the dump runs on a stack
# of its own: that thread's would overflow, and SIGABRT end as SIGSEGV),
# while another thread sends the program's SA_ONSTACK handler a signal
# every 20 us (it must wait for the dump, or it runs over the crash
# handler's frames: SIGABRT ended as SIGSEGV).  A handler the program installs is called (ours is
# replaced; one that chains to ours gets the dump too); a crash inside the
# hook's own locked section writes no dump and says so in one line;
# LEAKSNAP_DUMP_ON_CRASH=0 writes none.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"

# run NAME MODE [VAR=VALUE...]: the program under the hook, prefix $w/NAME;
# its status in $st, stdout in $w/NAME.out, stderr in $w/NAME.err.
run() {
	_n=$1 _m=$2
	shift 2
	timeout 60 env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$w/$_n" "$@" "$T/crash" "$_m" >"$w/$_n.out" 2>"$w/$_n.raw"
	st=$?
	# (dash writes its "Segmentation fault" line there too: not the program's)
	sed '/^\(Segmentation fault\|Aborted\|Floating point exception\|Bus error\)\( (core dumped)\)\{0,1\}$/d' \
		"$w/$_n.raw" >"$w/$_n.err"
}

# files NAME: the dumps and maps run NAME wrote.
files() {
	ls "$w" | grep "^$1\..*\.\(dump\|maps\)\$" | tr '\n' ' '
}

# expect_crash_dump NAME SIGNAL [TOTAL]: the one dump of run NAME is its
# crash dump, with the leaks of crash.c (and nothing else: TOTAL bytes).
expect_crash_dump() {
	_n=$1 _sig=$2 _total=${3:-}
	set -- "$w/$_n".*.crash.dump
	[ -f "$1" ] || { fail "$_n: no crash dump"; ls "$w" | grep "^$_n\." | sed 's/^/    have: /'; return; }
	_d=$1
	[ -f "${_d%.dump}.maps" ] || fail "$_n: no crash maps"
	[ "$(files "$_n" | sed "s/\.[0-9]*\./.PID./g")" = "$_n.PID.crash.dump $_n.PID.crash.maps " ] ||
		fail "$_n: files written: $(files "$_n")"
	"$L" show "$_d" >"$_d.show" 2>"$_d.err" || fail "$_n: show failed: $(cat "$_d.err")"
	[ -s "$_d.err" ] && fail "$_n: show warned: $(cat "$_d.err")"
	grep -q -x '  trigger=crash' "$_d.show" || fail "$_n: trigger"
	grep -q -x "  crash_signal=$_sig" "$_d.show" || fail "$_n: crash_signal"
	[ -z "$_total" ] || grep -q -x "total memory:    $_total bytes" "$_d.show" ||
		fail "$_n: $(grep '^total memory' "$_d.show"), expected $_total"
	"$SC" "$_d" >"$_d.txt" || fail "$_n: stackcheck"
	# size count function of crash.c's leaks, records of one size and
	# function summed (the loop's calls may be unrolled: one record each)
	_got=$(awk '$4 ~ /^crash_leak_/ { c[$1 " " $4] += $2 } END { for (k in c) { split(k, a, " "); print a[1], c[k], a[2] } }' "$_d.txt" | sort)
	_want=$(printf '%s\n' "1111 3 crash_leak_malloc" "2222 1 crash_leak_calloc" "3333 2 crash_leak_realloc")
	[ "$_got" = "$_want" ] || { fail "$_n: records"; echo "$_got" | sed 's/^/    have: /'; }
}

# The exit status of each mode without the hook: what it must stay.
bare() {
	"$T/crash" "$1" >/dev/null 2>&1
	echo $?
}

for case in segv:11:139 abort:6:134 fpe:8:136 kill:7:135 overflow:11:139 thread:11:139 smallstack:6:134 \
	onstack:6:134; do
	m=${case%%:*} rest=${case#*:}
	sig=${rest%%:*} want=${rest#*:}
	b=$(bare "$m")
	[ "$b" = "$want" ] || fail "$m without the hook: status $b, expected $want"
	run "$m" "$m"
	[ "$st" = "$want" ] || fail "$m: status $st, expected $want"
	[ "$(cat "$w/$m.out")" = leaked ] || fail "$m: stdout '$(cat "$w/$m.out")'"
	[ -s "$w/$m.err" ] && fail "$m: stderr: $(cat "$w/$m.err")"
	# (the thread's own memory, from pthread_create, is live too)
	case $m in thread | smallstack | onstack) total= ;; *) total=12221 ;; esac
	expect_crash_dump "$m" "$sig" $total
done

# glibc finds the heap corrupt in free() and aborts with its arena lock
# held: the dump calls no malloc, so it is written all the same (a dump that
# did would hang here).
run heap heap
[ "$st" = 134 ] || fail "heap: status $st, expected 134"
[ "$(cat "$w/heap.err")" = "free(): invalid next size (normal)" ] || fail "heap: stderr '$(cat "$w/heap.err")'"
expect_crash_dump heap 6

# Off: the same crash, no dump at all.
run off segv LEAKSNAP_DUMP_ON_CRASH=0
[ "$st" = 139 ] || fail "off: status $st"
[ -z "$(files off)" ] || fail "off: files written: $(files off)"
[ -s "$w/off.err" ] && fail "off: stderr: $(cat "$w/off.err")"
# A bad value: one warning, the default (on).
run bad segv LEAKSNAP_DUMP_ON_CRASH=yes
[ "$st" = 139 ] || fail "bad value: status $st"
[ "$(cat "$w/bad.err")" = "leaksnap: LEAKSNAP_DUMP_ON_CRASH=yes: not a number from 0 to 1; using 1" ] ||
	fail "bad value: stderr '$(cat "$w/bad.err")'"
expect_crash_dump bad 11 12221

# The program's own SIGSEGV handler replaces ours: it is called, the status
# is the same, no dump (it restored the default, not ours).
run own own
[ "$st" = 139 ] || fail "own: status $st"
[ "$(cat "$w/own.out")" = "$(printf 'leaked\nown handler')" ] || fail "own: stdout '$(cat "$w/own.out")'"
[ -z "$(files own)" ] || fail "own: files written: $(files own)"
# ... and one that calls the handler it replaced gets the dump as well
# (setenv's blocks are live too).
run chain chain
[ "$st" = 139 ] || fail "chain: status $st"
[ "$(cat "$w/chain.out")" = "$(printf 'leaked\nown handler')" ] || fail "chain: stdout '$(cat "$w/chain.out")'"
expect_crash_dump chain 11

# A crash while the thread holds the dump lock: no dump (it would wait for
# itself), one line says so, the signal still ends the program.
run locked locked
[ "$st" = 139 ] || fail "locked: status $st"
[ "$(cat "$w/locked.err")" = "leaksnap: SIGSEGV (signal 11) inside the hook's own locked section: no crash dump" ] ||
	fail "locked: stderr '$(cat "$w/locked.err")'"
[ -z "$(files locked)" ] || fail "locked: files written: $(files locked)"

ls "$w" | grep -q '\.tmp' && fail "temporary files left behind"
finish
