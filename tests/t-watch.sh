#!/bin/sh
# leaksnap watch and record --control / --watch, end to end, against the
# STAND-IN control server (tests/tools/ctlserver.py: the protocol of
# docs/control.md, real LEAKSNAP dumps as bodies; to be pointed at a hooked
# process once the hook has its socket): the live lines and the files
# (watch.PID.NNNN.dump, numbered from 0001, a taken name skipped and never
# replaced), --count, the end when the process ends, Ctrl-C finishing the
# snapshot in flight, the leakdiff command printed, --leakdiff running the
# diff with leakdiff's exit status (--fail-on), the errors; record --control
# setting LEAKSNAP_CONTROL=1 and record --watch watching the program it
# started.  Times are shown as HH:MM:SS, pids as PID, the scratch
# directory as W.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
SRV=$top/tests/tools/ctlserver.py
spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	[ -n "${wpid:-}" ] && kill "$wpid" 2>/dev/null
	rm -rf "$w"
}
trap cleanup EXIT
cd "$w" || exit 1
"$L" convert "$top/testdata/diff/run1.txt" run1.dump 2>/dev/null || fail "convert run1"
"$L" convert "$top/testdata/diff/run2.txt" run2.dump 2>/dev/null || fail "convert run2"
b1=$("$L" show --json run1.dump | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(r["size"]*r["count"] for r in d["records"]), sum(r["count"] for r in d["records"]))')
b2=$("$L" show --json run2.dump | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(r["size"]*r["count"] for r in d["records"]), sum(r["count"] for r in d["records"]))')
bytes1=${b1% *} blocks1=${b1#* } bytes2=${b2% *} blocks2=${b2#* }
growth=$((bytes2 - bytes1))

serve() {
	stop
	rm -f ready ready.inflight log
	python3 "$SRV" --ready "$w/ready" --log "$w/log" "$@" &
	spid=$!
	_i=0
	while [ ! -s ready ] && [ $_i -lt 200 ]; do sleep 0.05; _i=$((_i + 1)); done
	[ -s ready ] || fail "the stand-in server did not start"
}
stop() {
	[ -n "$spid" ] && { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }
	spid=
}
norm() { # FILE: times, pids and the scratch directory made constant
	sed -e "s|$w|W|g" -e "s/^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]  /HH:MM:SS  /" \
		-e "s/\b${spid:-NOPID}\b/PID/g" "$1"
}
t() { # NAME STATUS ARGS...
	_n=$1 _want=$2
	shift 2
	"$L" "$@" >"$_n.out" 2>"$_n.err"
	_st=$?
	[ "$_st" = "$_want" ] || { fail "$_n: exit status $_st, expected $_want"; sed 's/^/    /' "$_n.err"; }
	norm "$_n.out" >"$_n.nout"
	norm "$_n.err" >"$_n.nerr"
}
expect() { # out|err NAME: the normalized output is stdin, exactly
	cat >expected
	if ! cmp -s expected "$2.n$1"; then
		fail "$2: std$1 differs"
		diff -u expected "$2.n$1" | sed 's/^/    /' | head -20
	fi
}

# --count: three snapshots, numbered, the live lines from the dumps. --------
mkdir s1
serve --dump run1.dump --dump run2.dump
t count 0 watch "$spid" --out s1 --every 0.1 --count 3
expect out count <<EOF
HH:MM:SS  #1  live $bytes1  blocks $blocks1  growth +0
HH:MM:SS  #2  live $bytes2  blocks $blocks2  growth +$growth
HH:MM:SS  #3  live $bytes2  blocks $blocks2  growth +$growth
leakdiff s1/watch.PID.0001.dump s1/watch.PID.0002.dump s1/watch.PID.0003.dump
EOF
expect err count </dev/null
cmp -s run1.dump "s1/watch.$spid.0001.dump" && cmp -s run2.dump "s1/watch.$spid.0002.dump" &&
	cmp -s run2.dump "s1/watch.$spid.0003.dump" || fail "count: the files are not the dumps served"
[ "$(ls -a s1 | grep -c .)" = 5 ] || fail "count: s1 holds $(ls -a s1 | tr '\n' ' ')"
printf '%s\n' version dump dump dump | cmp -s - log || { fail "count: commands sent"; sed 's/^/    /' log; }

# A name already taken is skipped and left alone; the numbers go on.
mkdir s2
echo precious >"s2/watch.$spid.0002.dump"
t taken 0 watch --count 2 --every 0 "$spid" --out s2//
expect out taken <<EOF
HH:MM:SS  #1  live $bytes2  blocks $blocks2  growth +0
HH:MM:SS  #3  live $bytes2  blocks $blocks2  growth +0
leakdiff s2/watch.PID.0001.dump s2/watch.PID.0003.dump
EOF
[ "$(cat "s2/watch.$spid.0002.dump")" = precious ] || fail "taken: the file was replaced"
ls -a s2 | grep -q '^\.leaksnap' && fail "taken: a temporary was left"

# The process ends: watching ends, the files so far listed. ------------------
mkdir s3
serve --dump run1.dump --dump run2.dump --exit-after 2
t ended 0 watch "$spid" --out s3 --every 0.1
expect out ended <<EOF
HH:MM:SS  #1  live $bytes1  blocks $blocks1  growth +0
HH:MM:SS  #2  live $bytes2  blocks $blocks2  growth +$growth
leakdiff s3/watch.PID.0001.dump s3/watch.PID.0002.dump
EOF
echo "leaksnap: PID: the process ended after 2 snapshots" | expect err ended

# --leakdiff: the diff of the snapshots, run here, with leakdiff's status. --
mkdir s4 s5
serve --dump run1.dump --dump run2.dump
t leakdiff-hit 1 watch "$spid" --out s4 --every 0 --count 2 --leakdiff --no-symbols --fail-on 1 --top 0
"$L" diff --no-symbols --fail-on 1 --top 0 "s4/watch.$spid.0001.dump" "s4/watch.$spid.0002.dump" >direct.out 2>direct.err
[ $? = 1 ] || fail "leakdiff on the files: not status 1"
{ head -2 leakdiff-hit.out; cat direct.out; } | cmp -s - leakdiff-hit.out ||
	{ fail "leakdiff-hit: not the live lines and leakdiff's report"; diff direct.out leakdiff-hit.out | head; }
cmp -s direct.err leakdiff-hit.err || { fail "leakdiff-hit: stderr is not leakdiff's"; cat leakdiff-hit.err; }
grep -q '^leakdiff ' leakdiff-hit.out && fail "leakdiff-hit: the command was printed, not run"
serve --dump run1.dump --dump run2.dump
t leakdiff-below 0 watch "$spid" --out s5 --every 0 --count 2 --leakdiff --no-symbols --fail-on 1G
t leakdiff-bad 2 watch "$spid" --out s5 --every 0 --count 1 --leakdiff --by nothing
grep -q "^HH:MM:SS  #3  " leakdiff-bad.nout || fail "leakdiff-bad: no snapshot #3"
grep -q "by" leakdiff-bad.err || fail "leakdiff-bad: leakdiff's usage error not said"

# Ctrl-C finishes the snapshot in flight, then ends. -----------------------
mkdir s6
serve --dump run2.dump --slow 1.5
"$L" watch "$spid" --out s6 --every 0.1 >int.out 2>int.err &
wpid=$!
_i=0
while [ ! -e ready.inflight ] && [ $_i -lt 200 ]; do sleep 0.05; _i=$((_i + 1)); done
[ -e ready.inflight ] || fail "sigint: no dump in flight"
kill -INT "$wpid"
wait "$wpid"
st=$?
wpid=
[ "$st" = 0 ] || fail "sigint: exit status $st"
norm int.out >int.nout
norm int.err >int.nerr
expect out int <<EOF
HH:MM:SS  #1  live $bytes2  blocks $blocks2  growth +0
leakdiff s6/watch.PID.0001.dump
EOF
expect err int </dev/null
cmp -s run2.dump "s6/watch.$spid.0001.dump" || fail "sigint: the snapshot in flight is not whole"
[ "$(grep -c '^dump$' log)" = 1 ] || fail "sigint: $(grep -c '^dump$' log) dumps asked, 1 expected"

# Errors. -------------------------------------------------------------------
t no-process 2 watch 99999999 --out s6
echo "leaksnap: 99999999: no such process" | expect err no-process
expect out no-process </dev/null
stop
t no-socket 2 watch "$w/ctl.sock" --out s6
echo "leaksnap: W/ctl.sock: no control socket (start the program with LEAKSNAP_CONTROL=1)" | expect err no-socket
t no-out 2 watch 1
echo "leaksnap: watch: --out DIR is required (see 'leaksnap watch --help')" | expect err no-out
t out-missing 2 watch 1 --out none
echo "leaksnap: none: No such file or directory" | expect err out-missing
t bad-every 2 watch 1 --out s6 --every -1
echo "leaksnap: watch: --every must be seconds from 0 to 86400, e.g. 0.5 (see 'leaksnap watch --help')" |
	expect err bad-every
serve --mode errordump
t error-dump 2 watch "$spid" --out s6
echo "leaksnap: PID: error from the process: dump: cannot read /proc/self/maps" | expect err error-dump
stop

# record --control: the program gets LEAKSNAP_CONTROL=1; without it, not.
mkdir r
t record-control 0 record --out "$w/r/d" --no-exit-dump --control -- sh -c 'echo "[$LEAKSNAP_CONTROL]"'
echo "[1]" | expect out record-control
t record-nocontrol 0 record --out "$w/r/d" --no-exit-dump -- sh -c 'echo "[${LEAKSNAP_CONTROL:-}]"'
echo "[]" | expect out record-nocontrol

# record --watch SEC: watch on the program record started (the stand-in,
# which starts only when record set LEAKSNAP_CONTROL=1), into record's
# directory, the lines on stderr.
mkdir rw
# (--only: the hook stays inert in the stand-in, which is python3, and
# opens no socket of its own under the same name)
"$L" record --out "$w/rw/d" --no-exit-dump --only not-this-program --watch 0.1 -- python3 "$SRV" --require-env \
	--dump run1.dump --dump run2.dump --exit-after 2 >rw.out 2>rw.err
st=$?
[ "$st" = 0 ] || { fail "record --watch: exit status $st"; cat rw.err; }
rpid=$(ls rw | sed -n 's/^watch\.\([0-9]*\)\.0001\.dump$/\1/p')
[ -n "$rpid" ] || fail "record --watch: no rw/watch.PID.0001.dump: $(ls rw)"
sed -e "s/\b$rpid\b/PID/g" -e "s|$w|W|g" -e "s/^leaksnap: [0-9][0-9]:[0-9][0-9]:[0-9][0-9]  /leaksnap: HH:MM:SS  /" \
	rw.err | head -3 >rw.nerr
expect err rw <<EOF
leaksnap: HH:MM:SS  #1  live $bytes1  blocks $blocks1  growth +0
leaksnap: HH:MM:SS  #2  live $bytes2  blocks $blocks2  growth +$growth
leaksnap: compare them: leakdiff W/rw/watch.PID.0001.dump W/rw/watch.PID.0002.dump
EOF
# (then record's own lines: no dumps written, as --no-exit-dump asked)
sed -n '4,$p' rw.err | grep -q '^leaksnap: no dumps written' || fail "record --watch: record's own lines: $(sed -n '4,$p' rw.err)"
cmp -s run1.dump "rw/watch.$rpid.0001.dump" && cmp -s run2.dump "rw/watch.$rpid.0002.dump" ||
	fail "record --watch: the files are not the dumps served"
finish
