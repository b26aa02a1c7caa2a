#!/bin/sh
# leaksnap ctl, end to end, against the STAND-IN control server
# (tests/tools/ctlserver.py, which answers the protocol of docs/control.md
# as the hook does and serves real LEAKSNAP dumps as dump bodies; to be
# pointed at a hooked process once the hook has its socket): every
# command's exact output, dump -o streamed into a file that never replaces
# one and leaves no temporary behind, and each error as one exact line with
# exit status 2: no such process, no control socket (naming the variable
# that opens it), refused, closed early (mid-line, mid-body with the byte
# counts), malformed answers, the process's own errors (escaped), a body
# that is not a dump.  Pids are shown as PID, the scratch directory as W.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
SRV=$top/tests/tools/ctlserver.py
spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	[ -n "${sleeper:-}" ] && kill "$sleeper" 2>/dev/null
	rm -rf "$w"
}
trap cleanup EXIT
cd "$w" || exit 1

# The dumps the stand-in serves: testdata's text dumps as LEAKSNAP v1.
"$L" convert "$top/testdata/diff/run1.txt" run1.dump 2>/dev/null || fail "convert run1"
"$L" convert "$top/testdata/diff/run2.txt" run2.dump 2>/dev/null || fail "convert run2"

# serve ARGS...: a stand-in server in the background, listening once this
# returns; its pid in $spid.
serve() {
	stop
	rm -f ready log
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

# t NAME STATUS ARGS...: leaksnap ARGS; stdout and stderr normalized (the
# server's pid -> PID, the scratch directory -> W) in NAME.nout, NAME.nerr.
t() {
	_n=$1 _want=$2
	shift 2
	"$L" "$@" >"$_n.out" 2>"$_n.err"
	_st=$?
	[ "$_st" = "$_want" ] || { fail "$_n: exit status $_st, expected $_want"; sed 's/^/    /' "$_n.err"; }
	for _k in out err; do
		if [ -n "$spid" ]; then
			sed -e "s|$w|W|g" -e "s/\b$spid\b/PID/g" "$_n.$_k" >"$_n.n$_k"
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

# The commands. --------------------------------------------------------------
serve --dump run1.dump
t version 0 ctl "$spid" version
echo "leaksnap 0.1.0, pid PID, control protocol 1" | expect out version
expect err version </dev/null
t stats 0 ctl "$spid" stats
expect out stats <<'EOF'
pid: PID
live_bytes: 4096
live_blocks: 7
records: 3
capture: on
dumps_written: 0
invalid_frees: 0
EOF
t stats-json 0 ctl "$spid" stats --json
echo '{"pid":PID,"live_bytes":4096,"live_blocks":7,"records":3,"capture":true,"dumps_written":0,"invalid_frees":0}' |
	expect out stats-json
t capture-off 0 ctl "$spid" capture off
echo "capture off" | expect out capture-off
t stats-off 0 ctl --json "$spid" stats
grep -q '"capture":false' stats-off.out || fail "stats after capture off: $(cat stats-off.out)"
t capture-on 0 ctl "$spid" capture on
echo "capture on" | expect out capture-on
printf '%s\n' version stats stats 'capture off' stats 'capture on' | cmp -s - log ||
	{ fail "the commands sent"; sed 's/^/    /' log; }

# dump: streamed into the file, byte for byte, and what show reads.
mkdir out
t dump 0 ctl "$spid" dump -o out/a.dump
"$L" show run1.dump >show1 2>&1
recs=$(sed -n 's/^Records: *//p' show1 | head -1)
echo "wrote out/a.dump: $(
	"$L" show --json run1.dump | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%d records, %d bytes in %d allocations" % (len(d["records"]), sum(r["size"]*r["count"] for r in d["records"]), sum(r["count"] for r in d["records"])))'
)" | expect out dump
expect err dump </dev/null
cmp -s run1.dump out/a.dump || fail "dump: the file is not the dump served"
[ "$(ls -a out | grep -c .)" = 3 ] || fail "dump: other files in out/: $(ls -a out)"
no_temp out
t dump-reach 0 ctl "$spid" dump --reachability -o out/b.dump
tail -1 log | grep -q -x 'dump reachability' || fail "dump --reachability sent '$(tail -1 log)'"

# dump -o never overwrites: refused before the process is asked.
echo precious >out/keep.dump
: >log
err1 dump-exists "leaksnap: out/keep.dump: already exists (leaksnap never overwrites a file)" \
	ctl "$spid" dump -o out/keep.dump
[ "$(cat out/keep.dump)" = precious ] || fail "dump-exists: the file changed"
[ -s log ] && fail "dump-exists: the process was asked: $(cat log)"
ln -s nowhere out/link.dump
err1 dump-symlink "leaksnap: out/link.dump: already exists (leaksnap never overwrites a file)" \
	ctl "$spid" dump -o out/link.dump
no_temp out
err1 dump-no-dir "leaksnap: none/a.dump: No such file or directory" ctl "$spid" dump -o none/a.dump
# a file that appears while the dump streams is not replaced either
serve --dump run1.dump --slow 1
"$L" ctl "$spid" dump -o out/late.dump >late.out 2>late.err &
cpid=$!
_i=0
while [ ! -e ready.inflight ] && [ $_i -lt 200 ]; do sleep 0.05; _i=$((_i + 1)); done
echo precious >out/late.dump
wait "$cpid"
st=$?
[ "$st" = 2 ] || fail "dump-late: exit status $st, expected 2"
echo "leaksnap: out/late.dump: already exists (leaksnap never overwrites a file)" | cmp -s - late.err ||
	fail "dump-late: stderr: $(cat late.err)"
[ "$(cat out/late.dump)" = precious ] || fail "dump-late: the file was replaced"
rm out/late.dump
no_temp out

# A dump the hook itself wrote (a real process's exit dump) streams as well,
# and reads back as the same snapshot.
mkdir h
LD_PRELOAD=$HOOK LEAKSNAP_OUT=$w/h/x "$T/leaks" >/dev/null 2>&1
hdump=$(ls h/x.*.exit.dump 2>/dev/null | head -1)
if [ -z "$hdump" ]; then
	fail "the hook wrote no exit dump"
else
	serve --dump "$hdump"
	t hook-dump 0 ctl "$spid" dump -o out/h.dump
	cmp -s "$hdump" out/h.dump || fail "hook-dump: the file is not the hook's dump"
	# (but for the first line, the file's name)
	"$L" show "$hdump" 2>&1 | tail -n +2 >h.show1
	"$L" show out/h.dump 2>&1 | tail -n +2 >h.show2
	grep -q '^records: ' h.show1 && cmp -s h.show1 h.show2 || fail "hook-dump: show reads another snapshot"
fi

# A path socket (LEAKSNAP_CONTROL=PATH).
serve --path "$w/ctl.sock" --dump run2.dump
t path-version 0 ctl "$w/ctl.sock" version
echo "leaksnap 0.1.0, pid PID, control protocol 1" | expect out path-version
t path-dump 0 ctl "$w/ctl.sock" dump -o out/p.dump
cmp -s run2.dump out/p.dump || fail "path-dump: the file is not the dump served"
stop
rm -f ctl.sock

# Errors: one line, exit status 2. ------------------------------------------
err1 no-process "leaksnap: 99999999: no such process" ctl 99999999 stats
sleep 30 &
sleeper=$!
t no-socket 2 ctl "$sleeper" stats
echo "leaksnap: $sleeper: no control socket (start the program with LEAKSNAP_CONTROL=1)" | expect err no-socket
kill "$sleeper"
err1 no-socket-path "leaksnap: W/ctl.sock: no control socket (start the program with LEAKSNAP_CONTROL=1)" \
	ctl "$w/ctl.sock" version
serve --mode refuse
err1 refused "leaksnap: PID: refused: the process belongs to another user" ctl "$spid" stats
serve --mode closeline
err1 closed-line "leaksnap: PID: connection closed early (after 12 bytes of an answer line)" \
	ctl "$spid" version
serve --mode closebody --dump run1.dump
size=$(wc -c <run1.dump)
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
serve --mode errordump
err1 error-dump "leaksnap: PID: error from the process: dump: cannot read /proc/self/maps" \
	ctl "$spid" dump -o out/e.dump
serve --mode escape
err1 error-escaped 'leaksnap: PID: error from the process: \x1b[31mred\x07 text' ctl "$spid" capture on
serve --mode garbage
err1 not-a-dump "leaksnap: PID: the dump received is not readable: byte offset 0: unrecognized format: not a LEAKSNAP dump (bad magic), Android text dump or NHGT payload; a raw bionic buffer needs opts.pointer_size and opts.frames" \
	ctl "$spid" dump -o out/g.dump
[ -e out/g.dump ] && fail "not-a-dump: a file was left"
no_temp out
stop
[ -d out ] && [ "$(ls out)" = "$(printf 'a.dump\nb.dump\nh.dump\nkeep.dump\nlink.dump\np.dump')" ] ||
	fail "out/ holds: $(ls out | tr '\n' ' ')"

# Usage.
err1 usage-no-command "leaksnap: ctl: missing command: version, stats, dump or capture (see 'leaksnap ctl --help')" ctl 1
err1 usage-unknown "leaksnap: ctl: unknown command 'quit' (version, stats, dump or capture) (see 'leaksnap ctl --help')" ctl 1 quit
err1 usage-json "leaksnap: ctl: option '--json' is not for 'dump' (see 'leaksnap ctl --help')" ctl 1 dump -o x --json
err1 usage-no-output "leaksnap: ctl: dump: -o FILE is required (see 'leaksnap ctl --help')" ctl 1 dump
err1 usage-capture "leaksnap: ctl: capture: 'on' or 'off' expected (see 'leaksnap ctl --help')" ctl 1 capture maybe
finish
