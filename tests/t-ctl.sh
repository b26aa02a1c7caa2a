#!/bin/sh
# leaksnap ctl, end to end, against REAL hooked processes: tests/hook/ctlprog
# under build/lib/libleakhook.so with LEAKSNAP_CONTROL=1 (its heap known to
# the byte: 524288 + 5 x 3001 + 2 x 3002 at start): every command's exact
# output (version with the hook's VERSION and the pid, stats with the exact
# live bytes, blocks and records, the --json line), dump -o streamed into a
# file that never replaces one and leaves no temporary behind, read back by
# `leaksnap show` with its records, trigger=control and control=@leaksnap.PID,
# capture off and on changing what is recorded, dump --reachability, a path
# socket, a forked child answering from its own socket (abstract and path),
# and the errors a real process gives: no such process, no control socket
# (naming the variable that opens it), refused (another uid, when root),
# busy (a ninth client), a dump asked for while the process is in exit()
# (tests/hook/libexitwait.so holds it there).
# The STAND-IN server (tests/tools/ctlserver.py) is kept only for what a
# real hook never sends: a connection closed mid-line or mid-body, malformed
# answers, garbage bodies, an error text with control bytes, and a dump
# streamed slowly enough for a file to appear meanwhile.  Pids are shown as PID, the scratch directory as W.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
. "$(dirname "$0")/ctl-lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
SRV=$top/tests/tools/ctlserver.py
VERSION=$("$L" --version | sed -n '1s/^leaksnap //p')
spid=
tpid=
PIDS=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	for _p in $PIDS; do kill -9 "$_p" 2>/dev/null; done
	rm -rf "$w"
}
trap cleanup EXIT
cd "$w" || exit 1

# start NAME FD ENV...: ctlprog under the hook (ctl_run; LD_PRELOAD is
# $PRELOAD when set); PID is its pid once ready.
start() {
	_sn=$1 _sfd=$2
	shift 2
	ctl_run "$_sn" "$_sfd" LD_PRELOAD="${PRELOAD:-$HOOK}" "$@" -- "$T/ctlprog"
}

# t NAME STATUS ARGS...: leaksnap ARGS; stdout and stderr normalized ($tpid
# -> PID, the scratch directory -> W) in NAME.nout, NAME.nerr.
t() {
	_n=$1 _want=$2
	shift 2
	"$L" "$@" >"$_n.out" 2>"$_n.err"
	_st=$?
	[ "$_st" = "$_want" ] || { fail "$_n: exit status $_st, expected $_want"; sed 's/^/    /' "$_n.err"; }
	for _k in out err; do
		if [ -n "$tpid" ]; then
			sed -e "s|$w|W|g" -e "s/\b$tpid\b/PID/g" "$_n.$_k" >"$_n.n$_k"
		else
			sed -e "s|$w|W|g" "$_n.$_k" >"$_n.n$_k"
		fi
	done
}
# expect out|err NAME: the normalized output is stdin, exactly.
expect() {
	cat >expected
	if ! cmp -s expected "$2.n$1"; then
		fail "$2: std$1 differs"
		diff -u expected "$2.n$1" | sed 's/^/    /' | head -20
	fi
}
# err1 NAME LINE ARGS...: exit status 2, exactly LINE on stderr, nothing
# on stdout.
err1() {
	_n=$1 _line=$2
	shift 2
	t "$_n" 2 "$@"
	echo "$_line" | expect err "$_n"
	expect out "$_n" </dev/null
}
# no_temp DIR: no temporary file of leaksnap's left in DIR
no_temp() {
	ls -a "$1" | grep -q '^\.leaksnap' && fail "a temporary file was left in $1: $(ls -a "$1" | grep '^\.leaksnap')"
}
# stats_is NAME BYTES BLOCKS RECORDS CAPTURE DUMPS: `ctl $tpid stats`, exactly
stats_is() {
	t "$1" 0 ctl "$tpid" stats
	printf 'pid: PID\nlive_bytes: %s\nlive_blocks: %s\nrecords: %s\ncapture: %s\ndumps_written: %s\ninvalid_frees: 0\n' \
		"$2" "$3" "$4" "$5" "$6" | expect out "$1"
	expect err "$1" </dev/null
}

# The commands, on a real process. -------------------------------------------
start p1 3 LEAKSNAP_CONTROL=1
P1=$PID tpid=$PID
t version 0 ctl "$P1" version
echo "leaksnap $VERSION, pid PID, control protocol 1" | expect out version
expect err version </dev/null
# (ctlprog at start: 524288 + 5 x 3001 + 2 x 3002 bytes, 8 blocks, 3 records)
stats_is stats 545297 8 3 on 0
t stats-json 0 ctl "$P1" stats --json
echo '{"pid":PID,"live_bytes":545297,"live_blocks":8,"records":3,"capture":true,"dumps_written":0,"invalid_frees":0}' |
	expect out stats-json
t stats-json-first 0 ctl --json "$P1" stats
cmp -s stats-json.nout stats-json-first.nout || fail "stats --json before PID: $(cat stats-json-first.out)"

# dump: streamed into the file, read back by show with its records
mkdir out
t dump 0 ctl "$P1" dump -o out/a.dump
echo "wrote out/a.dump: 3 records, 545297 bytes in 8 allocations" | expect out dump
expect err dump </dev/null
[ "$(ls -a out | grep -c .)" = 3 ] || fail "dump: other files in out/: $(ls -a out)"
no_temp out
"$L" show out/a.dump >a.show 2>&1 || fail "dump: show cannot read it: $(head -3 a.show)"
grep -q -x 'records:         3 (8 allocations, 545297 bytes)' a.show || fail "dump: show reads $(grep '^records:' a.show)"
grep -q -x "pid:             $P1" a.show || fail "dump: show's pid: $(grep '^pid:' a.show)"
expect_meta out/a.dump "trigger=control"
expect_meta out/a.dump "control=@leaksnap.$P1"
"$SC" out/a.dump >a.sc 2>&1
expect_record a.sc "3001 5 app keep_a main"
expect_record a.sc "3002 2 app keep_b main"
expect_record a.sc "524288 1 app main"
[ "$(grep -c . a.sc)" = 3 ] || fail "dump: records other than ctlprog's: $(cat a.sc)"
stats_is stats-after-dump 545297 8 3 on 1

# known allocations: exact counts
[ "$(ask p1 3 'alloc 10 5000')" = ok ] || fail "alloc"
stats_is stats-alloc 595297 18 4 on 1

# capture off: nothing recorded; on again: recorded
t capture-off 0 ctl "$P1" capture off
echo "capture off" | expect out capture-off
t capture-off2 0 ctl "$P1" capture off
echo "capture off" | expect out capture-off2
[ "$(ask p1 3 'alloc 4 6000')" = ok ] || fail "alloc while off"
stats_is stats-off 595297 18 4 off 1
t dump-off 0 ctl "$P1" dump -o out/off.dump
echo "wrote out/off.dump: 4 records, 595297 bytes in 18 allocations" | expect out dump-off
expect_meta out/off.dump "capture=off"
t capture-on 0 ctl "$P1" capture on
echo "capture on" | expect out capture-on
[ "$(ask p1 3 'alloc 3 6001')" = ok ] || fail "alloc while on"
stats_is stats-on 613300 21 5 on 2
t dump-on 0 ctl "$P1" dump -o out/on.dump
echo "wrote out/on.dump: 5 records, 613300 bytes in 21 allocations" | expect out dump-on
"$SC" out/on.dump >on.sc 2>&1
expect_record on.sc "5000 10 app alloc_n main"
expect_record on.sc "6001 3 app alloc_n main"
no_record on.sc '^6000 '
expect_meta out/on.dump "capture=on"

# dump --reachability: every block classified
t dump-reach 0 ctl "$P1" dump --reachability -o out/b.dump
echo "wrote out/b.dump: 5 records, 613300 bytes in 21 allocations" | expect out dump-reach
"$L" show out/b.dump 2>&1 | grep -q '^unreachable: ' || fail "dump --reachability: no reachability section"
"$L" show out/a.dump 2>&1 | grep -q '^unreachable: ' && fail "plain dump: a reachability section"

# dump -o never overwrites: refused before the process is asked (its
# dumps_written stays).
echo precious >out/keep.dump
err1 dump-exists "leaksnap: out/keep.dump: already exists (leaksnap never overwrites a file)" \
	ctl "$P1" dump -o out/keep.dump
[ "$(cat out/keep.dump)" = precious ] || fail "dump-exists: the file changed"
ln -s nowhere out/link.dump
err1 dump-symlink "leaksnap: out/link.dump: already exists (leaksnap never overwrites a file)" \
	ctl "$P1" dump -o out/link.dump
err1 dump-no-dir "leaksnap: none/a.dump: No such file or directory" ctl "$P1" dump -o none/a.dump
stats_is stats-not-asked 613300 21 5 on 4
no_temp out

# A ninth client: the process's own "error busy" (eight connections held
# open by a helper, each answered once so that the hook serves them).
mkfifo hold8.in
python3 -c '
import socket, sys
held = []
for i in range(8):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0leaksnap." + sys.argv[1])
    s.sendall(b"version\n")
    b = b""
    while not b.endswith(b"\n"):
        b += s.recv(100)
    held.append(s)
open(sys.argv[2] + ".tmp", "w").write("held\n")
__import__("os").rename(sys.argv[2] + ".tmp", sys.argv[2])
sys.stdin.read()
' "$P1" "$w/hold8.ready" <hold8.in &
hold8=$!
exec 7>hold8.in
wait_for hold8.ready '^held$'
err1 busy "leaksnap: PID: error from the process: busy" ctl "$P1" stats
exec 7>&-
wait "$hold8"
t after-busy 0 ctl "$P1" version
echo "leaksnap $VERSION, pid PID, control protocol 1" | expect out after-busy

# A forked child answers from its own socket, with its own heap (the
# parent's and child_alloc's 3003 bytes).
start p2 4 LEAKSNAP_CONTROL=1
P2=$PID
CH=$(ask p2 4 fork | sed -n 's/^child //p')
[ -n "$CH" ] || fail "fork: no child"
PIDS="$PIDS $CH"
tpid=$CH
stats_is child-stats 548300 9 4 on 0
t child-dump 0 ctl "$CH" dump -o out/child.dump
echo "wrote out/child.dump: 4 records, 548300 bytes in 9 allocations" | expect out child-dump
expect_meta out/child.dump "control=@leaksnap.$CH"
"$SC" out/child.dump >child.sc 2>&1
expect_record child.sc "3003 1 zygote child_alloc main"
tpid=$P2
stats_is parent-stats 545297 8 3 on 0
kill "$CH"
echo exit >&4

# A path socket (LEAKSNAP_CONTROL=PATH), and its forked child's PATH.CHILDPID.
start p3 4 LEAKSNAP_CONTROL="$w/ctl.sock"
P3=$PID tpid=$PID
t path-version 0 ctl "$w/ctl.sock" version
echo "leaksnap $VERSION, pid PID, control protocol 1" | expect out path-version
t path-dump 0 ctl "$w/ctl.sock" dump -o out/p.dump
echo "wrote out/p.dump: 3 records, 545297 bytes in 8 allocations" | expect out path-dump
expect_meta out/p.dump "control=$w/ctl.sock"
expect_meta out/p.dump "trigger=control"
CH=$(ask p3 4 fork | sed -n 's/^child //p')
PIDS="$PIDS $CH"
_i=0
until [ -S "$w/ctl.sock.$CH" ] || [ $_i -gt 400 ]; do _i=$((_i + 1)); sleep 0.05; done
tpid=$CH
t path-child 0 ctl "$w/ctl.sock.$CH" stats --json
echo '{"pid":PID,"live_bytes":548300,"live_blocks":9,"records":4,"capture":true,"dumps_written":0,"invalid_frees":0}' |
	expect out path-child
kill "$CH"
echo exit >&4
_i=0
while [ -e "$w/ctl.sock" ] && [ $_i -lt 400 ]; do _i=$((_i + 1)); sleep 0.05; done
tpid=$P3
err1 path-gone "leaksnap: W/ctl.sock: no control socket (start the program with LEAKSNAP_CONTROL=1)" \
	ctl "$w/ctl.sock" version

# Another user is refused: the hook closes the connection without a byte.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	tpid=$P1
	(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups "$L" ctl "$P1" stats) >refused.out 2>refused.err
	st=$?
	[ "$st" = 2 ] || fail "refused: exit status $st, expected 2"
	echo "leaksnap: $P1: refused: the process belongs to another user" | cmp -s - refused.err ||
		fail "refused: stderr: $(cat refused.err)"
	[ -s refused.out ] && fail "refused: stdout: $(cat refused.out)"
	t after-refused 0 ctl "$P1" version
	echo "leaksnap $VERSION, pid PID, control protocol 1" | expect out after-refused
else
	echo "skipped: ctl as another user (needs root and setpriv)"
fi

# Only the stand-in can do these: a dump streamed slowly enough for a file
# to appear at FILE meanwhile, which is not replaced either.
tpid=
serve --dump out/a.dump --slow 1
"$L" ctl "$spid" dump -o out/late.dump >late.out 2>late.err &
cpid=$!
_i=0
while [ ! -e ready.inflight ] && [ $_i -lt 400 ]; do sleep 0.05; _i=$((_i + 1)); done
echo precious >out/late.dump
wait "$cpid"
st=$?
[ "$st" = 2 ] || fail "dump-late: exit status $st, expected 2"
echo "leaksnap: out/late.dump: already exists (leaksnap never overwrites a file)" | cmp -s - late.err ||
	fail "dump-late: stderr: $(cat late.err)"
[ "$(cat out/late.dump)" = precious ] || fail "dump-late: the file was replaced"
rm out/late.dump
no_temp out
stop

# Errors: one line, exit status 2. ------------------------------------------
tpid=
err1 no-process "leaksnap: 99999999: no such process" ctl 99999999 stats
# a hooked process without LEAKSNAP_CONTROL
start p4 4
P4=$PID
t no-socket 2 ctl "$P4" stats
echo "leaksnap: $P4: no control socket (start the program with LEAKSNAP_CONTROL=1)" | expect err no-socket
expect out no-socket </dev/null
echo exit >&4
err1 no-socket-path "leaksnap: W/ctl.sock: no control socket (start the program with LEAKSNAP_CONTROL=1)" \
	ctl "$w/ctl.sock" version
# the process's own error: a dump asked for while it is in exit() (held
# there by libexitwait.so, preloaded after the hook, until the fifo ends)
mkfifo exitwait
PRELOAD="$HOOK $T/libexitwait.so"
start ex 4 LEAKSNAP_CONTROL=1 EXITWAIT_FIFO="$w/exitwait"
PRELOAD=
EX=$PID tpid=$PID
echo exit >&4
_i=0
while [ $_i -lt 400 ]; do
	"$L" ctl "$EX" dump -o out/e.dump >/dev/null 2>ex.try
	rm -f out/e.dump
	grep -q 'is exiting' ex.try && break
	_i=$((_i + 1))
	sleep 0.05
done
err1 error-dump "leaksnap: PID: error from the process: dump: the process is exiting" \
	ctl "$EX" dump -o out/e.dump
[ -e out/e.dump ] && fail "error-dump: a file was left"
no_temp out
timeout 20 sh -c ': >exitwait' || fail "error-dump: the program was not held in exit()"
tpid=
# The rest: answers no real hook sends, from the STAND-IN.
serve --mode closeline
err1 closed-line "leaksnap: PID: connection closed early (after 12 bytes of an answer line)" \
	ctl "$spid" version
serve --mode closebody --dump out/a.dump
size=$(wc -c <out/a.dump)
err1 closed-body "leaksnap: PID: connection closed early (after $((size / 2)) of $size bytes of the dump)" \
	ctl "$spid" dump -o out/c.dump
[ -e out/c.dump ] && fail "closed-body: a file was left"
no_temp out
serve --mode badlength
err1 bad-length "leaksnap: PID: malformed answer: 'dump 12x' (expected \"dump BYTES\")" \
	ctl "$spid" dump -o out/d.dump
serve --mode hugelength
err1 huge-length "leaksnap: PID: malformed answer: 'dump 1099511627777' (a dump of more than 2^40 bytes)" \
	ctl "$spid" dump -o out/d.dump
serve --mode nonewline
err1 no-newline "leaksnap: PID: malformed answer: no newline in the first 4096 bytes ('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'...)" \
	ctl "$spid" stats
serve --mode badstats
err1 bad-stats "leaksnap: PID: malformed answer: stats without a valid \"live_bytes\"" ctl "$spid" stats --json
serve --mode badversion
err1 bad-version "leaksnap: PID: malformed answer: 'leaksnap-control 2 9.9.9 PID' (protocol 1 expected: this leaksnap is too old for the process's hook)" \
	ctl "$spid" version
serve --mode escape
err1 error-escaped 'leaksnap: PID: error from the process: \x1b[31mred\x07 text' ctl "$spid" capture on
serve --mode garbage
err1 not-a-dump "leaksnap: PID: the dump received is not readable: byte offset 0: unrecognized format: not a LEAKSNAP dump (bad magic), Android text dump or NHGT payload; a raw bionic buffer needs opts.pointer_size and opts.frames" \
	ctl "$spid" dump -o out/g.dump
[ -e out/g.dump ] && fail "not-a-dump: a file was left"
no_temp out
stop
tpid=
[ -d out ] && [ "$(ls out)" = "$(printf 'a.dump\nb.dump\nchild.dump\nkeep.dump\nlink.dump\noff.dump\non.dump\np.dump')" ] ||
	fail "out/ holds: $(ls out | tr '\n' ' ')"
echo exit >&3

# Usage.
err1 usage-no-command "leaksnap: ctl: missing command: version, stats, dump or capture (see 'leaksnap ctl --help')" ctl 1
err1 usage-unknown "leaksnap: ctl: unknown command 'quit' (version, stats, dump or capture) (see 'leaksnap ctl --help')" ctl 1 quit
err1 usage-json "leaksnap: ctl: option '--json' is not for 'dump' (see 'leaksnap ctl --help')" ctl 1 dump -o x --json
err1 usage-no-output "leaksnap: ctl: dump: -o FILE is required (see 'leaksnap ctl --help')" ctl 1 dump
err1 usage-capture "leaksnap: ctl: capture: 'on' or 'off' expected (see 'leaksnap ctl --help')" ctl 1 capture maybe
finish
