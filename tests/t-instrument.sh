#!/bin/sh
# LEAKSNAP_UNWIND=instrument on this machine: tests/hook/instr (built with
# -finstrument-functions and frame pointers) gives, for every leak, exactly
# the stack expected (a longjmp's, one from past the shadow stack's end, a
# signal handler's on the thread's stack and on a sigaltstack mapped near
# it, a cancelled thread's cleanup's, a fresh thread's, a gap for code not
# instrumented),
# and the very same return addresses, as module offsets, as the fp walk of
# the same program; the dump says unwinder=instrument; a program not
# instrumented gets frame 0 alone; record --unwind instrument reaches the
# hook; the in-app hook refuses the mode.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"

run() { # NAME MODE PROG: the exit dump of PROG, by stackcheck (and --rel)
	LEAKSNAP_UNWIND=$2 LEAKSNAP_OUT="$w/$1" LD_PRELOAD="$HOOK" "$3" >"$w/$1.out" 2>"$w/$1.err"
	_st=$?
	[ $_st = 0 ] || [ "$3" = "$T/leaks" ] || fail "$1: status $_st"
	[ -s "$w/$1.err" ] && { fail "$1: stderr"; cat "$w/$1.err"; }
	_d=$(ls "$w/$1".*.exit.dump)
	"$SC" "$_d" >"$w/$1.txt" || fail "$1: stackcheck"
	"$SC" --rel "$_d" | grep '^30[01][0-9] ' >"$w/$1.rel"
}

run in instrument "$T/instr"
run fp fp "$T/instr"
expect_meta "$(ls "$w"/in.*.exit.dump)" "unwinder=instrument"
grep '^30[01][0-9] ' "$w/in.txt" >"$w/in.300"
# (the frame after main's is in the C library: "?")
cat >"$w/want" <<'EOF'
3001 1 app chain5 chain4 chain3 chain2 chain1 main ?
3001 1 app chain5 chain4 chain3 chain2 chain1 main ?
3002 1 app after_jump jump_root main ?
3003 1 app on_signal ? sig1 main ?
3004 1 app cleanup cancel_thread ?
3005 1 app deeper after_jump jump_root main ?
3006 1 app bare_thread ?
3007 1 app plain_alloc ?
3008 1 app with_inline main ?
3009 1 app deep deep deep deep deep deep deep deep deep deep deep deep deep deep deep deep
3010 1 app after_deep main ?
3011 1 app deep_c2 deep_c1 deep_root main ?
EOF
cmp -s "$w/want" "$w/in.300" || { fail "instrument: stacks"; diff "$w/want" "$w/in.300"; }
# a sigaltstack mapped near the thread's stack is another stack
expect_record "$w/in.txt" "3020 1 app alt_handler ? alt_c1 alt_thread ?"
# bit for bit the fp walk's return addresses
[ -s "$w/in.rel" ] && cmp -s "$w/fp.rel" "$w/in.rel" ||
	{ fail "instrument and fp differ"; diff "$w/fp.rel" "$w/in.rel"; }

# C++: an exception thrown three calls down and caught, then an allocation
# from the catching function; a destructor that allocates while the
# exception unwinds its frame.
run xx instrument "$T/instrxx"
run xxfp fp "$T/instrxx"
grep '^310[0-9] ' "$w/xx.txt" >"$w/xx.310"
printf '%s\n' '3101 1 app _Z11after_catchv _Z7catcherv.cold main ?' \
	'3102 1 app _ZN5guardD2Ev _Z6throw2v.cold _Z6throw1v _Z7catcherv main ?' >"$w/want.xx"
cmp -s "$w/want.xx" "$w/xx.310" || { fail "instrument, C++: stacks"; diff "$w/want.xx" "$w/xx.310"; }
"$SC" --rel "$(ls "$w"/xx.*.exit.dump)" | grep '^310' >"$w/xx.rel"
"$SC" --rel "$(ls "$w"/xxfp.*.exit.dump)" | grep '^310' >"$w/xxfp.rel"
[ -s "$w/xx.rel" ] && cmp -s "$w/xxfp.rel" "$w/xx.rel" ||
	{ fail "instrument and fp differ, C++"; diff "$w/xxfp.rel" "$w/xx.rel"; }

# Not instrumented: the allocation's own caller, and nothing else.
run plain instrument "$T/leaks"
expect_record "$w/plain.txt" "1001 3 app level8"
no_record "$w/plain.txt" '^1001 3 app level8 level7'

# record passes the mode on; the in-app build refuses it.
"$L" record --out "$w/rec" --unwind instrument -- "$T/instr" >/dev/null 2>"$w/rec.err" ||
	fail "record --unwind instrument: status $?"
expect_meta "$(ls "$w"/rec.*.exit.dump)" "unwinder=instrument"
"$L" record --unwind frames -- true 2>"$w/bad.err"
[ $? = 2 ] || fail "record --unwind frames: not refused"
grep -q -x "leaksnap: record: --unwind must be auto, fp, dwarf or instrument (see 'leaksnap record --help')" \
	"$w/bad.err" || { fail "record --unwind frames: message"; cat "$w/bad.err"; }
LEAKSNAP_UNWIND=bogus LEAKSNAP_OUT="$w/bogus" LD_PRELOAD="$HOOK" "$T/instr" >/dev/null 2>"$w/bogus.err"
grep -q -x 'leaksnap: LEAKSNAP_UNWIND=bogus: not auto, fp, dwarf or instrument; using auto' "$w/bogus.err" ||
	{ fail "LEAKSNAP_UNWIND=bogus: warning"; cat "$w/bogus.err"; }
INAPP=$(cd "$B/lib" && pwd)/libleakhook-inapp.so
LEAKSNAP_UNWIND=instrument LEAKSNAP_LIBS= LEAKSNAP_OUT="$w/ia" LD_PRELOAD="$INAPP" "$T/instr" \
	>/dev/null 2>"$w/ia.err"
grep -q 'LEAKSNAP_UNWIND=instrument: not auto, fp or dwarf; using auto' "$w/ia.err" ||
	{ fail "in-app: instrument not refused"; cat "$w/ia.err"; }

finish
