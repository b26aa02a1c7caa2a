#!/bin/sh
# The hook's API: get_malloc_leak_info / free_malloc_leak_info as bionic
# callers use them, the capture toggle (SIGRTMAX-19), and leaksnap_dump():
# an explicit path with its maps beside it, EEXIST instead of overwriting,
# numbered dumps 1 and 2; LEAKSNAP_START_DISABLED and LEAKSNAP_DUMP_ON_EXIT;
# edge cases of odd programs (tests/hook/edge.c); a dlclose()d library's blocks.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"

out="$w/api"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$out" "$T/apiuser" "$w/explicit.dump" >"$w/api.stdout" 2>&1
st=$?
[ $st = 0 ] || { fail "apiuser: exit status $st"; cat "$w/api.stdout"; }
cat >"$w/api.expected" <<'X'
get_malloc_leak_info: 3 x 1201 found
after free: 2 x 1201
toggle: off then on
leaksnap_dump: path, EEXIST, two numbered
X
cmp -s "$w/api.expected" "$w/api.stdout" || { fail "apiuser output"; cat "$w/api.stdout"; }
[ -f "$w/explicit.dump" ] && [ -f "$w/explicit.maps" ] || fail "explicit dump or maps missing"
pid=$(ls "$out".*.exit.dump | sed 's/.*\.\([0-9]*\)\.exit\.dump$/\1/')
for n in 0001 0002; do
	[ -f "$out.$pid.$n.dump" ] && [ -f "$out.$pid.$n.maps" ] || fail "numbered dump $n missing"
done
[ -f "$out.$pid.0003.dump" ] && fail "a third numbered dump appeared"
expect_meta "$w/explicit.dump" "trigger=api"
expect_meta "$out.$pid.exit.dump" "trigger=exit"
"$SC" "$w/explicit.dump" >"$w/e.txt"
expect_record "$w/e.txt" "1201 1 app api_leak main"
expect_record "$w/e.txt" "1203 1 app api_leak main"
no_record "$w/e.txt" '^1202 '

# A path without .dump gets PATH.maps beside it; no overwrite of a maps file.
: >"$w/taken.maps"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$out-2" LEAKSNAP_DUMP_ON_EXIT=0 \
	"$T/apiuser" "$w/taken.dump" >"$w/api2.stdout" 2>&1
grep -q "leaksnap_dump($w/taken.dump): File exists" "$w/api2.stdout" ||
	fail "existing maps file: not refused"
[ -s "$w/taken.maps" ] && fail "taken.maps was overwritten"
[ -f "$w/taken.dump" ] && fail "taken.dump written although its maps name was taken"
ls "$out-2".*.exit.dump >/dev/null 2>&1 && fail "LEAKSNAP_DUMP_ON_EXIT=0 still wrote an exit dump"

# Start disabled: nothing the program allocates is recorded until toggled.
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$out-3" LEAKSNAP_START_DISABLED=1 "$T/leaks" >/dev/null 2>&1
d=$(ls "$out-3".*.exit.dump)
"$SC" "$d" >"$d.txt"
no_record "$d.txt" '^100[0-9] '
expect_meta "$d" "capture=off"

# Bad settings: one warning each on stderr, defaults used, program unchanged.
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$out-4" LEAKSNAP_FRAMES=999 "$T/leaks" >"$w/bad.out" 2>"$w/bad.err"
[ $? = 7 ] || fail "LEAKSNAP_FRAMES=999: status"
grep -q -x 'leaksnap: LEAKSNAP_FRAMES=999: not a number from 1 to 256; using 16' "$w/bad.err" ||
	{ fail "LEAKSNAP_FRAMES=999: no warning"; cat "$w/bad.err"; }
d=$(ls "$out-4".*.exit.dump)
"$L" show "$d" | grep -q -x 'backtrace size:  16' || fail "LEAKSNAP_FRAMES=999: not 16 frames"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$out-5" LEAKSNAP_FRAMES=3 "$T/leaks" >/dev/null 2>&1
d=$(ls "$out-5".*.exit.dump)
"$SC" "$d" >"$d.txt"
expect_record "$d.txt" "1001 3 app level8 level7 level6"
no_record "$d.txt" '^1001 3 app level8 level7 level6 level5'

# An unwritable prefix: one line on stderr, the program is unaffected.
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/no/such/dir/x" "$T/leaks" >"$w/nw.out" 2>"$w/nw.err"
[ $? = 7 ] || fail "unwritable prefix: status"
[ "$(wc -l <"$w/nw.err")" = 1 ] && grep -q "^leaksnap: cannot write $w/no/such/dir/x\..*exit.dump: No such file or directory\$" "$w/nw.err" ||
	{ fail "unwritable prefix: message"; cat "$w/nw.err"; }

# Never through a symlink, never over anything.
ln -s "$w/target" "$w/sym.dump"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/s1" "$T/apiuser" "$w/sym.dump" >"$w/sym.out" 2>&1
grep -q "leaksnap_dump($w/sym.dump): File exists" "$w/sym.out" || fail "symlink path: not refused"
[ -e "$w/target" ] && fail "written through a symlink"
# Numbered and exit names planted before the program starts (exec keeps
# the pid): the numbered dumps move on to 2 and 3, the exit dump is refused.
sh -c 'ln -s "$1/target" "$2.$$.0001.dump"; echo keep >"$2.$$.exit.dump"; echo $$ >"$1/pl.pid"
	exec env LD_PRELOAD="$3" LEAKSNAP_OUT="$2" "$4" "$1/pl-explicit.dump"' \
	sh "$w" "$w/pl" "$HOOK" "$T/apiuser" >"$w/pl.out" 2>"$w/pl.err"
pid=$(cat "$w/pl.pid")
[ -L "$w/pl.$pid.0001.dump" ] && [ ! -e "$w/target" ] || fail "planted symlink changed"
[ "$(cat "$w/pl.$pid.exit.dump")" = keep ] || fail "planted exit dump overwritten"
[ -f "$w/pl.$pid.0002.dump" ] && [ -f "$w/pl.$pid.0003.dump" ] || fail "numbered dumps did not move on"
grep -q -x "leaksnap: cannot write $w/pl.$pid.exit.dump: File exists" "$w/pl.err" ||
	{ fail "planted exit dump: message"; cat "$w/pl.err"; }
# exit() from a signal handler that interrupts the allocator: never a hang.
hung=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/se" timeout 10 "$T/edge" sigexit 2>/dev/null
	[ $? = 124 ] && hung=$((hung + 1))
done
[ "$hung" = 0 ] || fail "exit() from a signal handler: $hung of 10 runs hung"

# main() ends by pthread_exit(), a thread goes on, then ends: the process
# ends (the dump thread does not keep it alive), and the exit dump, written
# after the main thread is gone, has both blocks with their functions (its
# maps are read from /proc/thread-self: /proc/self's are a zombie's, empty).
timeout 20 env LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/px" "$T/edge" pexit
st=$?
[ $st = 0 ] || fail "pthread_exit from main: exit status $st (124: the process never ended)"
d=$(ls "$w"/px.*.exit.dump 2>/dev/null | head -1)
if [ -n "$d" ]; then
	"$SC" "$d" >"$d.txt"
	expect_record "$d.txt" "10 1 app main"
	expect_record "$d.txt" "4242 1 app pexit_late"
	[ -s "${d%.dump}.maps" ] || fail "pthread_exit from main: the exit maps are empty"
else
	fail "pthread_exit from main: no exit dump"
fi
# The same with an atexit handler: it runs on whichever thread ends last (the
# dump thread here) as on one of the program's: recorded, with the
# program's signal mask, with room on the stack.
out=$(timeout 20 env LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/pa" "$T/edge" pexit-atexit)
st=$?
[ $st = 0 ] && [ "$out" = "atexit ok" ] || fail "pthread_exit + atexit: status $st, '$out'"
d=$(ls "$w"/pa.*.exit.dump 2>/dev/null | head -1)
[ -n "$d" ] && "$SC" "$d" >"$d.txt" && expect_record "$d.txt" "5555 1 app atexit_leak on_exit_handler"
# main cancelled rather than ended by pthread_exit(); a forked child whose
# main thread leaves after its dump thread has started: both end.
timeout 20 env LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/pc" "$T/edge" pexit-cancel
st=$?
[ $st = 0 ] || fail "main cancelled: exit status $st (124: the process never ended)"
out=$(timeout 30 env LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/pf" "$T/edge" pexit-fork)
[ "$out" = "child ended" ] || fail "forked child whose main leaves: '$out'"
rm -f "$w"/pa.* "$w"/pc.* "$w"/pf.*

# Dump signals that never stop while the process exits: it still ends, with
# its exit dump (only the requests pending when exit() began are served).
timeout 20 env LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/fl" "$T/edge" flood 2>/dev/null
st=$?
[ $st = 0 ] || fail "exit under a flood of dump signals: exit status $st (124: never ended)"
ls "$w"/fl.*.exit.dump >/dev/null 2>&1 || fail "exit under a flood of dump signals: no exit dump"
rm -f "$w"/fl.*

# A thread with the least stack there is (PTHREAD_STACK_MIN) allocates under
# every unwinder: the hook's frames and thread-local storage fit beside the
# program's.
for u in auto fp dwarf; do
	out=$(LEAKSNAP_UNWIND=$u LD_PRELOAD=$HOOK LEAKSNAP_DUMP_ON_EXIT=0 "$T/edge" smallstack 2>&1)
	[ "$out" = "smallstack ok" ] || fail "PTHREAD_STACK_MIN thread, $u: '$out'"
done

# A relative LEAKSNAP_OUT names the directory the program started in, even
# after it changes directory: every dump of the process in one place.
mkdir -p "$w/cd1" "$w/cd2"
(cd "$w/cd1" && LD_PRELOAD=$HOOK LEAKSNAP_OUT=rel "$T/edge" cd "$w/cd2") || fail "cd: status"
[ "$(cd "$w/cd1" && ls | sed 's/\.[0-9]*\./.PID./' | sort | tr '\n' ' ')" = \
	"rel.PID.0001.dump rel.PID.0001.maps rel.PID.0002.dump rel.PID.0002.maps rel.PID.exit.dump rel.PID.exit.maps " ] ||
	{ fail "cd: dumps not all in the starting directory"; ls "$w/cd1" "$w/cd2"; }
[ -z "$(ls "$w/cd2")" ] || { fail "cd: dumps in the new directory"; ls "$w/cd2"; }

# A realloc that fails leaves its block live: recorded again, stack and all.
out=$(timeout 20 env LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/rf" "$T/edge" refail)
[ "$out" = "refail ok" ] || fail "failed realloc: '$out'"
d=$(ls "$w"/rf.*.exit.dump 2>/dev/null | head -1)
[ -n "$d" ] && "$SC" "$d" >"$d.txt" && expect_record "$d.txt" "777 1 app refail_leak main"

# A forked child has one thread, as without the hook: its dump thread waits
# for a second thread of the program's (an idle worker still answers a dump
# signal: t-hook-servers.sh). With what needs the thread from the start (an
# interval here, or LEAKSNAP_DUMP_THREAD=1), the child has it from the fork
# on; the in-app build always has it.
want=1
[ -n "${LEAKSNAP_TEST_HOOK:-}" ] && want=2
out=$(LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/ch" "$T/edge" child)
[ "$out" = "child threads $want" ] || fail "forked child: '$out' (expected $want threads)"
out=$(LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/ci" LEAKSNAP_INTERVAL=1000 "$T/edge" child)
[ "$out" = "child threads 2" ] || fail "forked child, with an interval: '$out' (expected 2 threads)"
out=$(LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/cd" LEAKSNAP_DUMP_THREAD=1 "$T/edge" child)
[ "$out" = "child threads 2" ] || fail "forked child, LEAKSNAP_DUMP_THREAD=1: '$out' (expected 2 threads)"
# A process of one thread that blocks every signal still answers the dump
# signal (a dump thread would take it; without one the hook keeps it open,
# while the mask the program reads back says blocked), with one thread ...
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/mk" "$T/edge" masked >"$w/mk.out" &
mpid=$!
sleep 0.4
kill -47 "$mpid"
wait "$mpid"
want="masked asked 1 pending 0 threads 1"
[ -n "${LEAKSNAP_TEST_HOOK:-}" ] && want="masked asked 1 pending 0 threads 2"
[ "$(cat "$w/mk.out")" = "$want" ] || fail "masked: '$(cat "$w/mk.out")', expected '$want'"
d=$(ls "$w"/mk.*.0001.dump 2>/dev/null)
[ -n "$d" ] || fail "masked: no dump for the signal"
[ -n "$d" ] && expect_meta "$d" "trigger=signal"
# ... and once it makes a thread, its mask is what it asked for again: the
# dump thread takes the signal, and its one long sleep is not cut short.
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/mt" "$T/edge" masked-thread >"$w/mt.out" &
mpid=$!
sleep 0.4
kill -47 "$mpid"
wait "$mpid"
[ "$(cat "$w/mt.out")" = "masked-thread asked 1 sleep slept" ] ||
	fail "masked-thread: '$(cat "$w/mt.out")'"
ls "$w"/mt.*.0001.dump >/dev/null 2>&1 || fail "masked-thread: no dump for the signal"
# A forked child keeps its parent's wish (the parent had the signal open in
# fact), and sets it when its dump thread starts.
out=$(LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/mf" "$T/edge" masked-fork)
[ "$out" = "masked-fork child 1 1" ] || fail "masked-fork: '$out'"
# After unshare(CLONE_NEWUSER) ended the dump thread, the one thread left
# has the signal open again, and answers it.
if [ -z "${LEAKSNAP_TEST_HOOK:-}" ]; then
	LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/mu" "$T/edge" masked-unshare >"$w/mu.out" &
	mpid=$!
	i=0
	until grep -q '^masked-unshare \(ready\|skipped\)' "$w/mu.out" 2>/dev/null || [ $i -ge 200 ]; do
		i=$((i + 1))
		sleep 0.025
	done
	if grep -q ready "$w/mu.out"; then
		kill -47 "$mpid"
		wait "$mpid"
		grep -q -x 'masked-unshare pending 0 threads 1' "$w/mu.out" ||
			fail "masked-unshare: '$(cat "$w/mu.out")'"
		ls "$w"/mu.*.0001.dump >/dev/null 2>&1 || fail "masked-unshare: no dump for the signal"
	else
		wait "$mpid"
		echo "skipped: $(cat "$w/mu.out")"
	fi
fi

# ... which ends for an unshare(CLONE_NEWUSER), as that needs one thread.
out=$("$T/edge" userns)
if [ -n "${LEAKSNAP_TEST_HOOK:-}" ]; then
	: # (the in-app hook interposes nothing: docs/inapp.md)
elif [ "$out" = "userns ok" ]; then
	out=$(LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/un" "$T/edge" userns)
	[ "$out" = "userns ok" ] || fail "unshare(CLONE_NEWUSER) in a forked child: '$out'"
else
	echo "skipped: unshare(CLONE_NEWUSER) is refused here without the hook ($out)"
fi

# A live block of 3 GiB: the size cannot be written (bit 31 is the zygote
# flag), so it is clamped, counted in the metadata, and not taken for a
# zygote record; readers say so.
out=$(LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/big" "$T/edge" big)
if [ "$out" = "big ok" ]; then
	d=$(ls "$w"/big.*.exit.dump)
	"$SC" "$d" >"$d.txt"
	expect_record "$d.txt" "2147483647 1 app main"
	no_record "$d.txt" ' zygote '
	expect_meta "$d" "clamped_sizes=1"
	"$L" show "$d" >/dev/null 2>"$d.err" || fail "big: show failed"
	[ "$(cat "$d.err")" = "leaksnap: $d: warning: 1 allocation of 2 GiB or more is recorded as 2147483647 bytes (clamped_sizes=1: the size field keeps 31 bits): sizes and totals that include it are lower bounds" ] ||
		{ fail "big: show did not say the size is clamped"; cat "$d.err"; }
fi

# A library's block outlives its dlclose(): later dumps carry the
# library's mappings and build ID as unloaded= / build_id= metadata, so the
# block's frames still name it, and leakdiff matches the block across the
# unload (a dump without them makes it a new, growing stack).
out=$(LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/dg" "$T/dlgone" "$T/libleaker.so" "$w/dg-a.dump" "$w/dg-b.dump")
[ "$out" = "dlgone ok" ] || fail "dlgone: '$out'"
lib=$(cd "$T" && pwd)/libleaker.so
for d in "$w/dg-b.dump" "$w"/dg.*.exit.dump; do
	"$L" show --json "$d" >"$d.json" || { fail "dlgone: show $d"; continue; }
	python3 - "$d.json" "$lib" >"$d.meta" <<'PYEOF2' || fail "dlgone: $d: metadata"
import json, sys
d = json.load(open(sys.argv[1]))
lib = sys.argv[2]
un = [m["value"] for m in d["metadata"] if m["key"] == "unloaded"]
ids = [m["value"] for m in d["metadata"] if m["key"] == "unloaded_build_id" and m["value"].endswith(" " + lib)]
# HEX INODE PATH, the inode the unloaded lines name
assert all(v.split(" ")[1] == un[0].split()[4] for v in ids), (ids, un)
maps = [m for m in d["maps"] if m["unloaded"]]
assert un and all(v.endswith(" " + lib) for v in un), un
assert any(" r-xp " in v for v in un), un
assert len(ids) == 1, ids
assert len(maps) == len(un) and all(m["path"] == lib for m in maps), maps
# the exit dump: three more load/unload cycles add no copies of one line
assert len(set(un)) == len(un), un
print(len(un))
PYEOF2
	"$L" symbolize "$d" >"$d.sym" 2>&1 || fail "dlgone: symbolize $d"
	grep -A1 '^#[0-9]*  1234 bytes = 1234 x 1  app$' "$d.sym" | tail -1 |
		grep -q "libleaker.so+0x[0-9a-f]*  leaker_alloc  .*libleaker.c:8:12$" ||
		{ fail "dlgone: $d: the block's frame 0 is not leaker_alloc"; cat "$d.sym"; }
done
"$L" maps "$w/dg-a.dump" | grep -q "(unloaded)" && fail "dlgone: a dump before dlclose has unloaded mappings"
"$L" maps "$w/dg-b.dump" | grep -q "libleaker.so (unloaded)  \[module" ||
	fail "dlgone: maps does not mark the unloaded mappings"
"$L" diff "$w/dg-a.dump" "$w/dg-b.dump" >"$w/dg.diff" 2>&1 || fail "dlgone: diff"
grep -q "^no suspects: nothing grew$" "$w/dg.diff" ||
	{ fail "dlgone: the block was taken for a new one after dlclose"; cat "$w/dg.diff"; }
# LEAKSNAP_KEEP_UNLOADED=0: nothing kept
out=$(LD_PRELOAD=$HOOK LEAKSNAP_KEEP_UNLOADED=0 LEAKSNAP_OUT="$w/dg0" "$T/dlgone" "$T/libleaker.so" \
	"$w/dg0-a.dump" "$w/dg0-b.dump")
[ "$out" = "dlgone ok" ] || fail "dlgone, KEEP_UNLOADED=0: '$out'"
"$L" show "$w/dg0-b.dump" | grep -q "unloaded" && fail "dlgone: LEAKSNAP_KEEP_UNLOADED=0 kept mappings"
# convert --rewrite-prefix rewrites the unloaded mappings' paths too, and
# their build ID line with them
"$L" convert --rewrite-prefix "$(dirname "$lib")/=/system/lib64/" "$w/dg-b.dump" "$w/dg-rw.dump" ||
	fail "dlgone: convert --rewrite-prefix"
"$L" show "$w/dg-rw.dump" >"$w/dg-rw.txt" 2>&1
grep -q "^  unloaded=.* /system/lib64/libleaker\.so$" "$w/dg-rw.txt" &&
	grep -q "^  unloaded_build_id=[0-9a-f]* [0-9]* /system/lib64/libleaker\.so$" "$w/dg-rw.txt" &&
	! grep -q "unloaded=.*$lib" "$w/dg-rw.txt" ||
	{ fail "dlgone: --rewrite-prefix left the unloaded lines"; grep -e unloaded= -e build_id= "$w/dg-rw.txt"; }
finish
