#!/bin/sh
# leaksnap watch and record --control / --watch, end to end, against REAL
# hooked processes: tests/hook/ctlwatch ("steady": a live heap of exactly
# 4 x 1000 bytes; "leak": 64 KiB more from leak_step every 20 ms) and
# tests/hook/ctlprog, under build/lib/libleakhook.so with LEAKSNAP_CONTROL=1.
# The live lines and the files (watch.PID.NNNN.dump, numbered from 0001,
# readable LEAKSNAP dumps with trigger=control, a taken name skipped and
# never replaced), --count, the CI one-liner (--every 1 --count 3
# --leakdiff --fail-on 1M: 1 with leak_step's stack for the leaking
# program, 0 for the other), the end when the process exits (also when it
# is held in exit(), where the hook answers dumps "error dump: the process
# is exiting": tests/hook/libexitwait.so), Ctrl-C finishing the snapshot in
# flight,
# leakdiff's own usage error; record --control (ctl on the program it
# started) and record --watch SEC (its numbered files in record's
# directory).  The STAND-IN server (tests/tools/ctlserver.py) is kept only
# for a dump error that does not end watching (a real hook's other one is
# out of memory).
# Times are shown as HH:MM:SS, pids as PID, the scratch directory as W.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
. "$(dirname "$0")/ctl-lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
SRV=$top/tests/tools/ctlserver.py
spid=
tpid=
PIDS=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	[ -n "${wpid:-}" ] && kill "$wpid" 2>/dev/null
	for _p in $PIDS; do kill -9 "$_p" 2>/dev/null; done
	rm -rf "$w"
}
trap cleanup EXIT
cd "$w" || exit 1

# start NAME FD ENV... -- PROG [ARGS...]: PROG under the hook with its
# control socket (ctl_run; LD_PRELOAD is $PRELOAD when set); PID and tpid
# its pid once ready.
start() {
	_sn=$1 _sfd=$2
	shift 2
	ctl_run "$_sn" "$_sfd" LD_PRELOAD="${PRELOAD:-$HOOK}" LEAKSNAP_CONTROL=1 "$@"
	tpid=$PID
}

# ended PID: wait until the process is gone (20 s at most)
ended() {
	_i=0
	while kill -0 "$1" 2>/dev/null && [ $_i -lt 400 ]; do sleep 0.05; _i=$((_i + 1)); done
}

norm() { # FILE: times, pids and the scratch directory made constant
	sed -e "s|$w|W|g" -e "s/^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]  /HH:MM:SS  /" \
		-e "s/\b${tpid:-NOPID}\b/PID/g" "$1"
}
# readable NAME FILE...: each a LEAKSNAP dump show reads, trigger=control
readable() {
	_n=$1
	shift
	for _f in "$@"; do
		"$L" show "$_f" >show.tmp 2>&1 || { fail "$_n: show cannot read $_f: $(head -2 show.tmp)"; continue; }
		grep -q -x 'format:          leaksnap 1' show.tmp || fail "$_n: $_f: $(grep '^format:' show.tmp)"
		grep -q -x '  trigger=control' show.tmp || fail "$_n: $_f: no trigger=control"
	done
}
no_temp() { # DIR
	ls -a "$1" | grep -q '^\.leaksnap' && fail "a temporary file was left in $1: $(ls -a "$1" | grep '^\.leaksnap')"
}
# lines_files NAME OUT DIR: OUT's live lines #1..#N are DIR's N files, the
# leakdiff line lists them all
lines_files() {
	_n=$1 _o=$2 _d=$3
	_k=$(grep -c '  #[0-9]*  live ' "$_o")
	_f=$(ls "$_d" | grep -c "^watch\.$tpid\.[0-9]*\.dump\$")
	[ "$_k" -ge 1 ] && [ "$_k" = "$_f" ] || fail "$_n: $_k live lines, $_f files in $_d"
	_want=$(seq 1 "$_k" | sed 's/^/#/' | tr '\n' ' ')
	_got=$(sed -n 's/.*  \(#[0-9]*\)  live .*/\1/p' "$_o" | tr '\n' ' ')
	[ "$_want" = "$_got" ] || fail "$_n: the snapshots numbered $_got"
	_files=$(ls "$_d" | grep "^watch\.$tpid\.[0-9]*\.dump\$" | sed "s|^|$_d/|" | tr '\n' ' ')
	grep -q -x "leakdiff ${_files% }" "$_o" ||
		grep -q -x "leaksnap: compare them: leakdiff ${_files% }" "$_o" ||
		fail "$_n: no leakdiff line for ${_files% }: $(grep leakdiff "$_o")"
}

# --count: three snapshots, numbered, the live lines from the dumps. --------
start st 3 -- "$T/ctlwatch" steady
ST=$PID
mkdir s1
t count 0 watch "$ST" --out s1 --every 0.1 --count 3
expect out count <<EOF
HH:MM:SS  #1  live 4000  blocks 4  growth +0
HH:MM:SS  #2  live 4000  blocks 4  growth +0
HH:MM:SS  #3  live 4000  blocks 4  growth +0
leakdiff s1/watch.PID.0001.dump s1/watch.PID.0002.dump s1/watch.PID.0003.dump
EOF
expect err count </dev/null
[ "$(ls -a s1 | grep -c .)" = 5 ] || fail "count: s1 holds $(ls -a s1 | tr '\n' ' ')"
readable count s1/watch.$ST.0001.dump s1/watch.$ST.0002.dump s1/watch.$ST.0003.dump
"$SC" "s1/watch.$ST.0003.dump" >s1.sc 2>&1
expect_record s1.sc "1000 4 app keep_start main"
[ "$(grep -c . s1.sc)" = 1 ] || fail "count: records other than keep_start's: $(cat s1.sc)"
expect_meta "s1/watch.$ST.0001.dump" "control=@leaksnap.$ST"

# A name already taken is skipped and left alone; the numbers go on.
mkdir s2
echo precious >"s2/watch.$ST.0002.dump"
t taken 0 watch --count 2 --every 0 "$ST" --out s2//
expect out taken <<EOF
HH:MM:SS  #1  live 4000  blocks 4  growth +0
HH:MM:SS  #3  live 4000  blocks 4  growth +0
leakdiff s2/watch.PID.0001.dump s2/watch.PID.0003.dump
EOF
[ "$(cat "s2/watch.$ST.0002.dump")" = precious ] || fail "taken: the file was replaced"
no_temp s2

# The CI one-liner: a program that leaks fails, one that does not passes. ---
mkdir ci-steady ci-leak
t ci-steady 0 watch "$ST" --every 1 --count 3 --out ci-steady --leakdiff --fail-on 1M
head -3 ci-steady.nout >ci-steady.lines
sed -n '4,$p' ci-steady.nout >ci-steady.diff
grep -c -x 'HH:MM:SS  #[123]  live 4000  blocks 4  growth +0' ci-steady.lines | grep -q -x 3 ||
	fail "ci-steady: live lines: $(cat ci-steady.lines)"
grep -q -x 'no suspects: nothing grew' ci-steady.diff || fail "ci-steady: $(cat ci-steady.diff)"
expect err ci-steady </dev/null
start lk 4 -- "$T/ctlwatch" leak
LK=$PID
t ci-leak 1 watch "$LK" --every 1 --count 3 --out ci-leak --leakdiff --fail-on 1M
# the growth since the first snapshot goes up at each
g2=$(sed -n 's/^HH:MM:SS  #2  live [0-9]*  blocks [0-9]*  growth +\([0-9]*\)$/\1/p' ci-leak.nout)
g3=$(sed -n 's/^HH:MM:SS  #3  live [0-9]*  blocks [0-9]*  growth +\([0-9]*\)$/\1/p' ci-leak.nout)
[ "${g2:-0}" -gt 0 ] && [ "${g3:-0}" -gt "$g2" ] && [ "$g3" -ge 1048576 ] ||
	fail "ci-leak: the growth: $(head -3 ci-leak.nout)"
grep -q -x '1 suspect grew by [0-9]* bytes, +[0-9]* allocations' ci-leak.out ||
	fail "ci-leak: $(grep suspect ci-leak.out)"
# the suspect's stack: leak_step called by main, in ctlwatch.c
grep -A1 '^  > #00 ' ci-leak.out >ci-leak.stack
grep -q -E "^  > #00 0x[0-9a-f]+  .*/ctlwatch\+0x[0-9a-f]+  leak_step  $top/tests/hook/ctlwatch\.c:[0-9]+:[0-9]+\$" ci-leak.stack &&
	grep -q -E "^    #01 0x[0-9a-f]+  .*/ctlwatch\+0x[0-9a-f]+  main  " ci-leak.stack ||
	{ fail "ci-leak: the suspect's stack"; sed 's/^/    /' ci-leak.stack; }
grep -q -x "leaksnap: suspects grew by $g3 bytes, at or above --fail-on 1048576" ci-leak.err ||
	fail "ci-leak: stderr: $(cat ci-leak.err)"
# the same report as leakdiff on the files
"$L" diff --fail-on 1M ci-leak/watch.$LK.0001.dump ci-leak/watch.$LK.0002.dump ci-leak/watch.$LK.0003.dump \
	>direct.out 2>direct.err
[ $? = 1 ] || fail "leakdiff on the files: not status 1"
{ head -3 ci-leak.out; cat direct.out; } | cmp -s - ci-leak.out ||
	{ fail "ci-leak: not the live lines and leakdiff's report"; diff direct.out ci-leak.out | head; }
grep -q '^leakdiff ' ci-leak.out && fail "ci-leak: the command was printed, not run"
# leakdiff's own usage error: its status, 2
t leakdiff-bad 2 watch "$LK" --out ci-leak --every 0 --count 1 --leakdiff --by nothing
grep -q "^HH:MM:SS  #4  " leakdiff-bad.nout || fail "leakdiff-bad: no snapshot #4"
grep -q "by" leakdiff-bad.err || fail "leakdiff-bad: leakdiff's usage error not said"
echo exit >&4

# The process exits: watching ends by itself, the files so far listed. ------
mkdir s3
"$L" watch "$ST" --out s3 --every 0.1 >ended.out 2>ended.err &
wpid=$!
wait_for ended.out '  #2  '
echo exit >&3
wait "$wpid"
st=$?
wpid=
[ "$st" = 0 ] || fail "ended: exit status $st"
tpid=$ST
norm ended.err >ended.nerr
n=$(grep -c '  #[0-9]*  live 4000  blocks 4  growth +0$' ended.out)
echo "leaksnap: PID: the process ended after $n snapshots" | expect err ended
lines_files ended ended.out s3
readable ended s3/*
no_temp s3

# ... also when its dumps are answered "error dump: the process is exiting",
# as the hook answers once the process is in exit(): libexitwait.so, preloaded
# after the hook, holds the process there (its destructor runs after the
# hook's) until the fifo exitwait ends.
mkfifo exitwait
PRELOAD="$HOOK $T/libexitwait.so"
start ex 5 EXITWAIT_FIFO="$w/exitwait" -- "$T/ctlwatch" steady
PRELOAD=
EX=$PID
mkdir s4
timeout 120 "$L" watch "$EX" --out s4 --every 0.1 >exiting.out 2>exiting.err &
wpid=$!
wait_for exiting.out '  #2  '
echo exit >&5
wait "$wpid"
st=$?
wpid=
[ "$st" = 0 ] || fail "exiting: exit status $st: $(cat exiting.err)"
grep -q -x "leaksnap: $EX: the process ended after [0-9]* snapshots" exiting.err ||
	fail "exiting: stderr: $(cat exiting.err)"
tpid=$EX
lines_files exiting exiting.out s4
no_temp s4
# (the state watch met: a dump answered so)
t exiting-ctl 2 ctl "$EX" dump -o s4/x.dump
echo "leaksnap: PID: error from the process: dump: the process is exiting" | expect err exiting-ctl
[ -e s4/x.dump ] && fail "exiting-ctl: a file was written"
timeout 20 sh -c ': >exitwait' || fail "exiting: the program was not held in exit()"
ended "$EX"

# Ctrl-C finishes the snapshot in flight, then ends. ------------------------
# (a heap of 20,001 records: each dump takes a while; SIGINT once
# watch's temporary file of one is there)
start in 6 -- "$T/ctlwatch" steady - 20000
IN=$PID
mkdir s6
"$L" watch "$IN" --out s6 --every 0 >int.out 2>int.err &
wpid=$!
wait_for int.out '  #1  '
_i=0
while ! ls -a s6 | grep -q '^\.leaksnap' && [ $_i -lt 4000 ]; do _i=$((_i + 1)); done
ls -a s6 | grep -q '^\.leaksnap' || fail "sigint: no snapshot seen in flight"
kill -INT "$wpid"
wait "$wpid"
st=$?
wpid=
[ "$st" = 0 ] || fail "sigint: exit status $st: $(cat int.err)"
[ -s int.err ] && fail "sigint: stderr: $(cat int.err)"
tpid=$IN
lines_files sigint int.out s6
readable sigint "$(ls s6/watch.$IN.*.dump | tail -1)"
"$L" show "$(ls s6/watch.$IN.*.dump | tail -1)" |
	grep -q -x "records:         20001 (20004 allocations, 20314000 bytes)" ||
	fail "sigint: the last snapshot is not whole: $("$L" show "$(ls s6/watch.$IN.*.dump | tail -1)" | grep '^records:')"
no_temp s6
kill -0 "$IN" 2>/dev/null || fail "sigint: the program did not survive watch's Ctrl-C"
echo exit >&6

# Errors. -------------------------------------------------------------------
tpid=
t no-process 2 watch 99999999 --out s6
echo "leaksnap: 99999999: no such process" | expect err no-process
expect out no-process </dev/null
start ns 7 LEAKSNAP_CONTROL=0 -- "$T/ctlwatch" steady
t no-socket 2 watch "$PID" --out s6
echo "leaksnap: PID: no control socket (start the program with LEAKSNAP_CONTROL=1)" | expect err no-socket
echo exit >&7
tpid=
t no-socket-path 2 watch "$w/ctl.sock" --out s6
echo "leaksnap: W/ctl.sock: no control socket (start the program with LEAKSNAP_CONTROL=1)" | expect err no-socket-path
t no-out 2 watch 1
echo "leaksnap: watch: --out DIR is required (see 'leaksnap watch --help')" | expect err no-out
t out-missing 2 watch 1 --out none
echo "leaksnap: none: No such file or directory" | expect err out-missing
t bad-every 2 watch 1 --out s6 --every -1
echo "leaksnap: watch: --every must be seconds from 0 to 86400, e.g. 0.5 (see 'leaksnap watch --help')" |
	expect err bad-every
# (a real hook answers a dump error only in a race: the stand-in's on demand)
serve --mode errordump
t error-dump 2 watch "$spid" --out s6
echo "leaksnap: PID: error from the process: dump: cannot read /proc/self/maps" | expect err error-dump
stop

# record --control: the program gets LEAKSNAP_CONTROL=1 (ctl reaches the
# program record started); without it, not.
mkdir r
t record-control-env 0 record --out "$w/r/d" --no-exit-dump --control -- sh -c 'echo "[$LEAKSNAP_CONTROL]"'
echo "[1]" | expect out record-control-env
t record-nocontrol 0 record --out "$w/r/d" --no-exit-dump -- sh -c 'echo "[${LEAKSNAP_CONTROL:-}]"'
echo "[]" | expect out record-nocontrol
mkfifo rc.in
"$L" record --out "$w/r/c" --no-exit-dump --control -- "$T/ctlwatch" steady <rc.in >rc.out 2>rc.err &
rpid=$!
exec 8>rc.in
wait_for rc.out '^ready '
RC=$(sed -n 's/^ready //p' rc.out)
tpid=$RC
t record-control 0 ctl "$RC" stats --json
echo '{"pid":PID,"live_bytes":4000,"live_blocks":4,"records":1,"capture":true,"dumps_written":0,"invalid_frees":0}' |
	expect out record-control
exec 8>&-
wait "$rpid" || fail "record --control: exit status $?: $(cat rc.err)"

# record --watch SEC: watch on the program record started, into record's
# directory, the lines on stderr; the program leaks and exits by itself
# (with its exit dump).
mkdir rw
"$L" record --out "$w/rw/d" --watch 0.2 -- "$T/ctlwatch" leak 1500 >rw.out 2>rw.err
st=$?
[ "$st" = 0 ] || { fail "record --watch: exit status $st"; cat rw.err; }
tpid=$(sed -n 's/^ready //p' rw.out)
lines_files record-watch rw.err "$w/rw"
readable record-watch rw/watch.*.dump
grep -q "^leaksnap: [0-9:]*  #1  live [0-9]*  blocks [0-9]*  growth +0\$" rw.err ||
	fail "record --watch: the first live line: $(head -1 rw.err)"
[ "$(grep -c '  #[0-9]*  live ' rw.err)" -ge 2 ] || fail "record --watch: fewer than 2 snapshots: $(cat rw.err)"
norm rw.err | grep -q -x "leaksnap: wrote W/rw/d.PID.exit.dump: 2 records, [0-9]* bytes in [0-9]* allocations" ||
	fail "record --watch: record's own lines: $(grep -v '  #' rw.err)"
no_temp rw
finish
