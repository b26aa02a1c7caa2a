#!/bin/sh
# leaksnap ctl and watch where the process misbehaves, is not the one asked
# for, or is ending; and Ctrl-C.  Against the STAND-IN control server
# (tests/tools/ctlserver.py) where a state must be made on purpose, and a
# real hooked program (tests/hook/ctlprog under libleakhook.so with
# LEAKSNAP_CONTROL=1) for what must hold with the hook itself:
# - a name leaksnap.PID held by another process (a squatter): nothing sent,
#   one line, exit 2; the real hook passes the same check;
# - the version word and the stats JSON of the process shown escaped;
# - a connection closed without a byte by a process of ours is "closed
#   early", "refused" only when /proc/PID belongs to another user;
# - watch: "error dump: the process is exiting" is the process's end (the
#   leakdiff still printed or run), "error busy" asked again a bounded
#   number of times; --leakdiff with fewer than two snapshots: watch's own
#   line; a second Ctrl-C ends watch at once, no temporary left;
# - ctl dump interrupted by Ctrl-C leaves no temporary.
# Pids are shown as PID, the scratch directory as W.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
. "$(dirname "$0")/ctl-lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
SRV=$top/tests/tools/ctlserver.py
P=$T/ctlprog
spid= sleeper= ppid= bg=
cleanup() {
	for _p in $spid $sleeper $ppid $bg; do kill -9 "$_p" 2>/dev/null; done
	rm -rf "$w"
}
trap cleanup EXIT
cd "$w" || exit 1
"$L" convert "$top/testdata/diff/run1.txt" run1.dump 2>/dev/null || fail "convert run1"
"$L" convert "$top/testdata/diff/run2.txt" run2.dump 2>/dev/null || fail "convert run2"
counts() { # DUMP: "BYTES BLOCKS", as watch counts them
	"$L" show --json "$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(r["size"]*r["count"] for r in d["records"]), sum(r["count"] for r in d["records"]))'
}
b1=$(counts run1.dump) b2=$(counts run2.dump)
bytes1=${b1% *} blocks1=${b1#* } bytes2=${b2% *} blocks2=${b2#* }

norm() { # FILE: pids and the scratch directory made constant
	sed -e "s|$w|W|g" -e "s/^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]  /HH:MM:SS  /" \
		-e "s/\b${spid:-NOPID}\b/PID/g" -e "s/\b${sleeper:-NOPID}\b/SLEEPER/g" "$1"
}
no_temp() {
	ls -a "$1" | grep -q '^\.leaksnap' && fail "a temporary file was left in $1: $(ls -a "$1" | grep '^\.leaksnap')"
}
ms() { date +%s%3N; }
wait_inflight() {
	_i=0
	while [ ! -e ready.inflight ] && [ $_i -lt 200 ]; do sleep 0.05; _i=$((_i + 1)); done
	[ -e ready.inflight ] || fail "$1: no dump in flight"
}

# A squatter: leaksnap.SLEEPER bound by the stand-in, not by SLEEPER. ------
sleep 60 &
sleeper=$!
serve --name-pid "$sleeper"
t squatter 2 ctl "$sleeper" version
expect out squatter </dev/null
expect err squatter <<EOF
leaksnap: SLEEPER: the socket leaksnap.SLEEPER is held by process PID, not SLEEPER: nothing asked
EOF
[ -s log ] && fail "squatter: it was sent '$(cat log)'"
mkdir sq
t squatter-watch 2 watch "$sleeper" --out sq --count 1
expect err squatter-watch <<EOF
leaksnap: SLEEPER: the socket leaksnap.SLEEPER is held by process PID, not SLEEPER: nothing asked
EOF
[ -s log ] && fail "squatter-watch: it was sent '$(cat log)'"
kill "$sleeper"
wait "$sleeper" 2>/dev/null
sleeper=

# What the process says, escaped. -------------------------------------------
serve --mode escversion
t esc-version 0 ctl "$spid" version
expect out esc-version <<'EOF'
leaksnap 0.1\x1b]0;owned\x07, pid PID, control protocol 1
EOF
serve --mode unicodestats
t ascii-stats 0 ctl "$spid" stats --json
expect out ascii-stats <<'EOF'
{"pid":PID,"live_bytes":1,"live_blocks":1,"records":1,"capture":true,"dumps_written":0,"invalid_frees":0,"note":"caf\u00E9 \u202E"}
EOF
LC_ALL=C grep -q "$(printf '[\200-\377]')" ascii-stats.out && fail "ascii-stats: bytes outside ASCII"

# Closed without a byte: ours (closed early) or another user's (refused). ---
serve --mode drop
t drop 2 ctl "$spid" stats
expect err drop <<EOF
leaksnap: PID: connection closed early (no answer)
EOF
serve --mode refuse
t refuse 2 ctl "$spid" stats
expect err refuse <<EOF
leaksnap: PID: refused: the process belongs to another user
EOF

# watch: "the process is exiting" is the end; the leakdiff runs. -------------
mkdir ex1 ex2
serve --mode exiting --exit-after 2 --dump run1.dump --dump run2.dump
t exiting 0 watch "$spid" --out ex1 --every 0
expect out exiting <<EOF
HH:MM:SS  #1  live $bytes1  blocks $blocks1  growth +0
HH:MM:SS  #2  live $bytes2  blocks $blocks2  growth +$((bytes2 - bytes1))
leakdiff ex1/watch.PID.0001.dump ex1/watch.PID.0002.dump
EOF
expect err exiting <<EOF
leaksnap: PID: the process ended after 2 snapshots
EOF
serve --mode exiting --exit-after 2 --dump run1.dump --dump run2.dump
t exiting-diff 1 watch "$spid" --out ex2 --every 0 --leakdiff --no-symbols --fail-on 1 --top 0
"$L" diff --no-symbols --fail-on 1 --top 0 "ex2/watch.$spid.0001.dump" "ex2/watch.$spid.0002.dump" \
	>direct.out 2>direct.err
{ head -2 exiting-diff.out; cat direct.out; } | cmp -s - exiting-diff.out ||
	{ fail "exiting-diff: not the live lines and leakdiff's report"; head -5 exiting-diff.out; }

# watch: "error busy" asked again, a bounded number of times. ----------------
mkdir bz1 bz2
serve --busy 3 --dump run1.dump
t busy 0 watch "$spid" --out bz1 --every 0 --count 2
expect err busy </dev/null
[ "$(ls bz1 | grep -c '^watch\.')" = 2 ] || fail "busy: $(ls bz1) written, 2 expected"
serve --busy 1000 --dump run1.dump
t0=$(ms)
t busy-always 2 watch "$spid" --out bz2 --every 0 --count 2
t1=$(ms)
expect err busy-always <<EOF
leaksnap: PID: error from the process: busy
EOF
[ $((t1 - t0)) -ge 3000 ] && [ $((t1 - t0)) -le 20000 ] ||
	fail "busy-always: gave up after $((t1 - t0)) ms, about 5 s expected"

# watch --leakdiff with fewer than two snapshots: watch's own line. ---------
mkdir one
serve --exit-after 1 --dump run1.dump
t one-snapshot 2 watch "$spid" --out one --every 0 --leakdiff --fail-on 1
expect err one-snapshot <<EOF
leaksnap: PID: the process ended after 1 snapshot
leaksnap: PID: --leakdiff: 1 snapshot taken, the diff needs two or more
EOF

# A second Ctrl-C ends watch at once, its temporary removed. ----------------
mkdir int2
serve --dump run2.dump --slow 8
t0=$(ms)
"$L" watch "$spid" --out int2 --every 0 >int2.out 2>int2.err &
bg=$!
wait_inflight int2
kill -INT "$bg"
sleep 0.3
kill -INT "$bg"
wait "$bg"
st=$?
bg=
t1=$(ms)
[ "$st" = 130 ] || fail "int2: exit status $st, 130 (SIGINT) expected"
[ $((t1 - t0)) -lt 5000 ] || fail "int2: ended after $((t1 - t0)) ms, not at once"
[ -z "$(ls int2)" ] || fail "int2: $(ls int2) written"
no_temp int2

# ctl dump interrupted: no temporary left (SIGINT not ignored, as from a
# terminal: a job in the background of a script ignores it). ---------------
mkdir cd
serve --dump run2.dump --slow 8
python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$L" ctl "$spid" dump -o cd/x.dump >cdi.out 2>cdi.err &
bg=$!
wait_inflight ctl-dump-int
sleep 0.2
ls -a cd | grep -q '^\.leaksnap' || fail "ctl-dump-int: no temporary while receiving"
kill -INT "$bg"
wait "$bg"
st=$?
bg=
[ "$st" = 130 ] || fail "ctl-dump-int: exit status $st, 130 (SIGINT) expected"
[ -e cd/x.dump ] && fail "ctl-dump-int: cd/x.dump written"
no_temp cd
stop

# The real hook passes the client's check (its pid is its socket's). -------
mkfifo p.in
env LD_PRELOAD="$HOOK" LEAKSNAP_CONTROL=1 LEAKSNAP_OUT="$w/p" LEAKSNAP_DUMP_ON_EXIT=1 "$P" \
	<p.in >p.out 2>p.err &
ppid=$!
exec 3>p.in
_i=0
while ! grep -q '^ready ' p.out && [ $_i -lt 200 ]; do sleep 0.05; _i=$((_i + 1)); done
ppid_was=$ppid
VERSION=$("$L" --version | sed -n '1s/^leaksnap //p')
t real-version 0 ctl "$ppid" version
echo "leaksnap $VERSION, pid $ppid, control protocol 1" | cmp -s - real-version.out ||
	fail "real-version: $(cat real-version.out real-version.err)"
mkdir real
t real-watch 0 watch "$ppid" --out real --every 0 --count 2
[ "$(ls real | grep -c "^watch\.$ppid\.")" = 2 ] || fail "real-watch: $(ls real)"
# A real process that exits while watched, its exit dump large enough to
# take a while (20,000 records): a dump asked for meanwhile is answered
# "the process is exiting" (not every run: the stand-in's exiting mode above
# is the sure case), or the socket is gone; either way watch ends normally
# and runs the diff.
echo "allocvar 20000 16" >&3
_i=0
while [ "$(grep -c '^ok' p.out)" -lt 1 ] && [ $_i -lt 400 ]; do sleep 0.05; _i=$((_i + 1)); done
mkdir realexit
"$L" watch "$ppid" --out realexit --every 0 --leakdiff --no-symbols --top 0 >rx.out 2>rx.err &
bg=$!
_i=0
while [ "$(ls realexit | grep -c '^watch\.')" -lt 2 ] && [ $_i -lt 400 ]; do sleep 0.05; _i=$((_i + 1)); done
echo exit >&3
exec 3>&-
wait "$ppid"
ppid=
wait "$bg"
st=$?
bg=
[ "$st" = 0 ] || { fail "real-exit: exit status $st"; cat rx.err; }
tail -1 rx.err | grep -q "^leaksnap: $ppid_was: the process ended after [0-9]* snapshots\$" ||
	fail "real-exit: stderr ends '$(tail -1 rx.err)'"
grep -q 'suspect' rx.out || fail "real-exit: no leakdiff report: $(tail -3 rx.out)"
finish
