#!/bin/sh
# The control socket (LEAKSNAP_CONTROL, docs/control.md) with the real hook,
# through a client of the tests' own (tests/hook/ctlclient.c) and a program
# driven line by line (tests/hook/ctlprog.c): the answers exactly, a socket
# dump equal to a file dump of the same state, capture off and on, quit,
# garbage, 1,000 connections, a 9th client, two dumps at once, a client that
# reads nothing (dropped after 10 s, a third dump waiting its turn, the
# program's allocations never held up), a slow reader dropped at its dump's
# whole bound, stats rate-limited, a held reachability dump no root of the
# next, a fork during a dump, a grandchild of a child that forked before
# allocating (its stdin, its socket), forks under a connection flood,
# exec, another user, the overflow uid of a user namespace, path sockets
# (stale, a file left alone, unconnectable, unlinked at exit, children's
# PATH.<pid>: stale ones removed, an exec'd image's silent), the in-app
# build, and nothing of the control thread in any dump.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
. "$(dirname "$0")/ctl-lib.sh"
C=$T/ctlclient
P=$T/ctlprog
INAPP=$(cd "$B/lib" && pwd)/libleakhook-inapp.so
VERSION=$("$L" --version | sed -n '1s/^leaksnap //p')
PIDS=""
trap 'for p in $PIDS; do kill -9 "$p" 2>/dev/null; done; rm -rf "$w"' EXIT

# start NAME FD ENV...: ctlprog (ctl_run), ENV its environment (LD_PRELOAD
# included) or a command that runs it.
start() {
	_sn=$1 _sfd=$2
	shift 2
	ctl_run "$_sn" "$_sfd" -- "$@" "$P"
}

# expect WHAT WANT GOT
expect() {
	[ "$2" = "$3" ] || { fail "$1: got '$3', expected '$2'"; }
}

# stat_field JSON KEY: a number (or true/false) of a stats line
stat_field() {
	echo "$1" | sed -n "s/.*\"$2\":\\([a-z0-9]*\\)[,}].*/\\1/p"
}

# records FILE: the record section of `leaksnap show` (10,000 at most)
records() {
	"$L" show --top 10000 "$1" 2>&1 | sed -n '/^records by total bytes/,$p'
}

showline() { # FILE PREFIX: that line of show's header
	"$L" show "$1" 2>&1 | grep "^$2"
}

# Answers, stats, a socket dump against a file dump --------------------------------
start p1 3 LD_PRELOAD="$HOOK" LEAKSNAP_CONTROL=1
P1=$PID
expect "version" "leaksnap-control 1 $VERSION $P1" "$("$C" "$P1" version)"
s0=$("$C" "$P1" stats)
echo "$s0" | grep -q -x -E "\\{\"pid\":$P1,\"live_bytes\":[0-9]+,\"live_blocks\":[0-9]+,\"records\":[0-9]+,\"capture\":true,\"dumps_written\":0,\"invalid_frees\":0\\}" ||
	fail "stats: '$s0'"
out=$("$C" -o "$w/s" "$P1" dump)
size=$(stat -c %s "$w/s.1" 2>/dev/null)
expect "socket dump line" "dump $size" "$out"
expect "file dump" ok "$(ask p1 3 "dump $w/f.dump")"
"$L" show "$w/s.1" >"$w/s.show" 2>&1 || { fail "socket dump: show failed"; head -3 "$w/s.show"; }
records "$w/s.1" >"$w/s.rec"
records "$w/f.dump" >"$w/f.rec"
cmp -s "$w/s.rec" "$w/f.rec" || { fail "socket dump and file dump differ"; diff "$w/f.rec" "$w/s.rec" | head; }
expect "total" "$(showline "$w/f.dump" 'total memory:')" "$(showline "$w/s.1" 'total memory:')"
expect "records" "$(showline "$w/f.dump" 'records:')" "$(showline "$w/s.1" 'records:')"
expect_meta "$w/s.1" "trigger=control"
expect_meta "$w/s.1" "control=@leaksnap.$P1"
expect_meta "$w/f.dump" "trigger=api"
expect_meta "$w/f.dump" "control=@leaksnap.$P1"
"$SC" "$w/s.1" >"$w/s.sc" 2>&1
expect_record "$w/s.sc" "3001 5 app keep_a main"
expect_record "$w/s.sc" "3002 2 app keep_b main"
no_record "$w/s.sc" ' (control_[a-z_]*|serve|client_[a-z_]*|dumps_start|answer[a-z_]*|open_and_start|dump_take) '
# stats: the same totals as the dump of that state
rl=$(showline "$w/s.1" 'records:')
expect "stats live_bytes" "$(showline "$w/s.1" 'total memory:' | sed 's/[^0-9]//g')" "$(stat_field "$s0" live_bytes)"
expect "stats records" "$(echo "$rl" | sed 's/^records: *\([0-9]*\) .*/\1/')" "$(stat_field "$s0" records)"
expect "stats live_blocks" "$(echo "$rl" | sed 's/.*(\([0-9]*\) allocations.*/\1/')" "$(stat_field "$s0" live_blocks)"
s1=$("$C" "$P1" stats)
expect "dumps_written" 2 "$(stat_field "$s1" dumps_written)"

# stats are rate-limited: one snapshot per 100 ms, the next answered once
# that time has passed (20 in a row: 1.9 s at least)
t0=$(date +%s%N)
"$C" "$P1" stats stats stats stats stats stats stats stats stats stats \
	stats stats stats stats stats stats stats stats stats stats >"$w/stats20" 2>&1
t1=$(date +%s%N)
expect "20 stats" 20 "$(grep -c '^{"pid":' "$w/stats20")"
[ $(((t1 - t0) / 1000000)) -ge 1900 ] || fail "20 stats in $(((t1 - t0) / 1000000)) ms: not rate-limited"

# exact deltas
expect alloc ok "$(ask p1 3 'alloc 10 5000')"
s2=$("$C" "$P1" stats)
expect "live_bytes +50000" $(($(stat_field "$s1" live_bytes) + 50000)) "$(stat_field "$s2" live_bytes)"
expect "live_blocks +10" $(($(stat_field "$s1" live_blocks) + 10)) "$(stat_field "$s2" live_blocks)"
expect "records +1" $(($(stat_field "$s1" records) + 1)) "$(stat_field "$s2" records)"

# capture off: nothing recorded (and idempotent); on again
printf 'ok capture off\nok capture off\n' >"$w/cap.want"
"$C" "$P1" "capture off" "capture off" >"$w/cap.got"
cmp -s "$w/cap.want" "$w/cap.got" || fail "capture off: $(cat "$w/cap.got")"
expect "capture false" false "$(stat_field "$("$C" "$P1" stats)" capture)"
ask p1 3 'alloc 4 6000' >/dev/null
s3=$("$C" "$P1" stats)
expect "capture off: live_bytes" "$(stat_field "$s2" live_bytes)" "$(stat_field "$s3" live_bytes)"
expect "capture on" "ok capture on" "$("$C" "$P1" "capture on")"
expect "capture true" true "$(stat_field "$("$C" "$P1" stats)" capture)"
ask p1 3 'alloc 3 6001' >/dev/null
ask p1 3 'doublefree' >/dev/null
"$C" -o "$w/cap" "$P1" dump >/dev/null
"$SC" "$w/cap.1" >"$w/cap.sc" 2>&1
expect_record "$w/cap.sc" "6001 3 app alloc_n main"
expect_record "$w/cap.sc" "5000 10 app alloc_n main"
no_record "$w/cap.sc" '^6000 '
expect "invalid_frees" 1 "$(stat_field "$("$C" "$P1" stats)" invalid_frees)"

# dump reachability (LEAKSNAP_REACHABILITY is off: this dump classifies all the same)
"$C" -o "$w/r" "$P1" "dump reachability" >/dev/null
"$L" show "$w/r.1" 2>&1 | grep -q '^unreachable: ' || fail "dump reachability: no reachability section"
"$L" show "$w/r.1" 2>&1 | grep -q '^  reachability=failed' && fail "dump reachability: failed"
"$L" show "$w/s.1" 2>&1 | grep -q '^unreachable: ' && fail "plain dump: a reachability section"

# a "dump reachability" held while it streams (its blocks' addresses,
# its records) is no root of the next one: the same blocks unreachable
expect leak ok "$(ask p1 3 'leak 3 7007')"
"$C" -o "$w/r0" "$P1" "dump reachability" >/dev/null
u0=$("$L" show "$w/r0.1" 2>&1 | grep '^unreachable: ')
case "$u0" in "unreachable: 0 "* | "") fail "leak: not unreachable: '$u0'" ;; esac
mkfifo "$w/rhold.in"
"$C" --hold "$w/rhold" "$P1" "dump reachability" <"$w/rhold.in" >"$w/rhold.got" 2>&1 &
rhold=$!
exec 9>"$w/rhold.in"
wait_for "$w/rhold.got" '^started$'
"$C" -o "$w/r1" "$P1" "dump reachability" >/dev/null
expect "held dump not a root" "$u0" "$("$L" show "$w/r1.1" 2>&1 | grep '^unreachable: ')"
echo go >&9
exec 9>&-
wait "$rhold"
grep -q -x -E 'dump [0-9]+' "$w/rhold.got" || fail "held reachability dump: $(cat "$w/rhold.got")"

# quit: answered, then closed (the next line is not)
printf 'quit\nversion\n' >"$w/quit.in"
printf 'ok quit\nclosed\n' >"$w/quit.want"
"$C" -t 5 -r "$w/quit.in" "$P1" >"$w/quit.got"
cmp -s "$w/quit.want" "$w/quit.got" || fail "quit: $(cat "$w/quit.got")"

# garbage: an error each, the connection still usable
{
	head -c 3000 /dev/urandom | tr -d '\n'
	printf '\n'
	head -c 300 /dev/zero | tr '\0' 'y'
	printf '\r\n\0\0\0\n\n\r\nstats please\nversion\r\n'
} >"$w/garbage.in"
printf 'error line too long\nerror line too long\nerror unknown command\nerror unknown command\nleaksnap-control 1 %s %s\nopen\n' \
	"$VERSION" "$P1" >"$w/garbage.want"
"$C" -t 2 -r "$w/garbage.in" "$P1" >"$w/garbage.got"
cmp -s "$w/garbage.want" "$w/garbage.got" || { fail "garbage"; diff "$w/garbage.want" "$w/garbage.got"; }

# 1,000 connections opened and dropped; a 9th client at once is turned away
expect "flood" "flood 1000" "$("$C" --flood 1000 "$P1")"
expect "after the flood" "leaksnap-control 1 $VERSION $P1" "$("$C" "$P1" version)"
printf 'error busy\nclosed\neight answered\n' >"$w/busy.want"
"$C" --busy "$P1" >"$w/busy.got" 2>&1
cmp -s "$w/busy.want" "$w/busy.got" || fail "9th client: $(cat "$w/busy.got")"

# Big dumps (5,000 records, past the socket buffers) -------------------------------
expect allocvar ok "$(ask p1 3 'allocvar 5000 20000')"
# a dump asked for while another streams
"$C" --overlap "$w/ov" "$P1" >"$w/ov.got" 2>&1 || fail "overlap: $(cat "$w/ov.got")"
records "$w/ov.a" >"$w/ov.a.rec"
records "$w/ov.b" >"$w/ov.b.rec"
grep -q '^#5000 ' "$w/ov.a.rec" || fail "overlap: dump a has not the records"
cmp -s "$w/ov.a.rec" "$w/ov.b.rec" || fail "overlap: the two dumps differ"

# two clients that read nothing hold both dump slots: a third dump waits
# its turn; both are dropped after 10 s without progress; the program
# allocates meanwhile, never held up
"$C" --stall 2 13 "$P1" >"$w/stall1.got" 2>&1 &
st1=$!
"$C" --stall 1 13 "$P1" >"$w/stall2.got" 2>&1 &
st2=$!
sleep 1
t0=$(date +%s)
"$C" -t 30 -o "$w/third" "$P1" dump >"$w/third.got" 2>&1 &
th=$!
spin=$(ask p1 3 'spin 3000')
wait "$th"
t1=$(date +%s)
wait "$st1" "$st2"
grep -q -x -E 'got [0-9]+ bytes, closed' "$w/stall1.got" || fail "staller 1 not dropped: $(cat "$w/stall1.got")"
grep -q -x -E 'got [0-9]+ bytes, closed' "$w/stall2.got" || fail "staller 2 not dropped: $(cat "$w/stall2.got")"
[ "$(sed 's/got \([0-9]*\) .*/\1/' "$w/stall1.got")" -lt "$(stat -c %s "$w/ov.a")" ] ||
	fail "staller 1 got a whole dump"
grep -q -x -E 'dump [0-9]+' "$w/third.got" || fail "third dump: $(cat "$w/third.got")"
[ $((t1 - t0)) -ge 7 ] || fail "third dump did not wait its turn ($((t1 - t0)) s)"
turns=$(echo "$spin" | cut -d' ' -f2)
gap=$(echo "$spin" | cut -d' ' -f3)
[ "${turns:-0}" -gt 10000 ] || fail "spin: $spin (too few turns)"
# (a send that waited for the client would hold a thread 10 s; 1 s leaves
# room for a loaded machine's scheduling)
[ "${gap:-9999999}" -lt 1000000 ] || fail "spin: the program stalled ${gap} us (spin: $spin)"

# a client that takes a few bytes now and then (never 10 s without
# progress) is dropped all the same once the dump's whole bound (10 s and
# 1 s per MiB) has passed
dsize=$(stat -c %s "$w/ov.a")
[ "$dsize" -lt 1048576 ] || fail "the big dump is $dsize bytes: its bound is past 11 s"
t0=$(date +%s)
"$C" --trickle 4096 100 25 "$P1" >"$w/trickle.got" 2>&1
t1=$(date +%s)
grep -q -x -E 'got [0-9]+ bytes, closed' "$w/trickle.got" || fail "trickle not dropped: $(cat "$w/trickle.got")"
[ $((t1 - t0)) -ge 10 ] || fail "trickle dropped after $((t1 - t0)) s, before its bound"

# Fork during a dump ---------------------------------------------------------------
mkfifo "$w/hold.in"
"$C" --hold "$w/hold" "$P1" <"$w/hold.in" >"$w/hold.got" 2>&1 &
hold=$!
exec 7>"$w/hold.in"
wait_for "$w/hold.got" '^started$'
CH=$(ask p1 3 fork | sed -n 's/^child //p')
PIDS="$PIDS $CH"
[ -n "$CH" ] || fail "fork: no child"
i=0
until "$C" "$CH" version >"$w/child.ver" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 100 ] && break
	sleep 0.05
done
expect "child's socket" "leaksnap-control 1 $VERSION $CH" "$(cat "$w/child.ver")"
# no socket of the parent's among the child's descriptors
sockets() { ls -l "/proc/$1/fd" 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]/\1/p' | sort; }
sockets "$P1" >"$w/p.sock"
sockets "$CH" >"$w/c.sock"
[ -n "$(comm -12 "$w/p.sock" "$w/c.sock")" ] && fail "the child holds the parent's sockets: $(comm -12 "$w/p.sock" "$w/c.sock" | tr '\n' ' ')"
[ "$(wc -l <"$w/c.sock")" = 1 ] || fail "child: $(wc -l <"$w/c.sock") sockets, expected its listener only"
"$C" -o "$w/child" "$CH" dump >/dev/null
"$SC" "$w/child.1" >"$w/child.sc" 2>&1
expect_record "$w/child.sc" "3003 1 zygote child_alloc main"
expect_meta "$w/child.1" "control=@leaksnap.$CH"
echo go >&7
wait "$hold"
grep -q -x -E 'dump [0-9]+' "$w/hold.got" || fail "fork during a dump: $(cat "$w/hold.got")"
records "$w/hold.1" >"$w/hold.rec"
grep -q '^#5000 ' "$w/hold.rec" || { fail "fork during a dump: the parent's dump is not whole"; head -3 "$w/hold.rec"; }
kill "$CH"
expect free ok "$(ask p1 3 free)"

# A child that forks before its first allocation: the grandchild has its
# stdin and a socket of its own (a double-forked daemon)
GC=$(ask p1 3 gfork)
GCP=$(echo "$GC" | sed -n 's/^grandchild \([0-9]*\) .*/\1/p')
PIDS="$PIDS $GCP"
expect "grandchild's stdin" "grandchild $GCP fd0 open" "$GC"
i=0
until "$C" "$GCP" version >"$w/gchild.ver" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 100 ] && break
	sleep 0.05
done
expect "grandchild's socket" "leaksnap-control 1 $VERSION $GCP" "$(cat "$w/gchild.ver")"
[ -n "$GCP" ] && kill "$GCP"
# forks while connections come and go: no child gets a connection of the
# parent's, nor loses its stdin (a connection accepted as the fork happens)
"$C" --flood 100000 "$P1" >/dev/null 2>&1 &
fl=$!
expect "fork storm" "storm 400 bad 0" "$(ask p1 3 'storm 400')"
kill "$fl" 2>/dev/null
wait "$fl" 2>/dev/null

# exec closes it
start p2 4 LD_PRELOAD="$HOOK" LEAKSNAP_CONTROL=1
P2=$PID
expect "p2" "leaksnap-control 1 $VERSION $P2" "$("$C" "$P2" version)"
echo exec >&4
i=0
while [ "$(cat "/proc/$P2/comm" 2>/dev/null)" != sleep ] && [ $i -lt 100 ]; do
	i=$((i + 1))
	sleep 0.05
done
sockets "$P2" | grep -q . && fail "exec: a socket is still open"
"$C" "$P2" version >/dev/null 2>&1 && fail "exec: the socket still answers"
kill "$P2"

# Another user is refused without a byte
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	d=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-ctl.XXXXXX")
	chmod 755 "$d"
	cp "$C" "$d/ctlclient"
	got=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$d/ctlclient" -t 5 --silent "$P1" 2>&1)
	rm -rf "$d"
	expect "another uid" "closed after 0 bytes" "$got"
	expect "root" "open after $((${#VERSION} + ${#P1} + 21)) bytes" "$("$C" -t 1 --silent "$P1")"
	# a socket another user may not connect to is said as such (not "a
	# process listens on it") and left as it is
	d=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-ctl.XXXXXX")
	chmod 755 "$d"
	cp "$P" "$HOOK" "$d/"
	start pden 9 LD_PRELOAD="$HOOK" LEAKSNAP_CONTROL="$d/den.sock"
	kill -9 "$PID"
	exec 9>&-
	chmod 755 "$d/den.sock"
	got=$(setpriv --reuid=65534 --regid=65534 --clear-groups env LD_PRELOAD="$d/$(basename "$HOOK")" \
		LEAKSNAP_CONTROL="$d/den.sock" LEAKSNAP_DUMP_ON_EXIT=0 "$d/ctlprog" </dev/null 2>&1 >/dev/null)
	expect "no permission" "leaksnap: LEAKSNAP_CONTROL: $d/den.sock: no permission to connect to the socket there; left as it is" "$got"
	[ -S "$d/den.sock" ] || fail "no permission: the socket was removed"
	rm -rf "$d"
	# in a user namespace where the process is the overflow uid (65534):
	# a user outside, unmapped, shows that uid and is refused; a peer
	# really of that uid (in the namespace) is answered
	if unshare --user --map-user=65534 --map-group=65534 true 2>/dev/null &&
		command -v nsenter >/dev/null 2>&1; then
		start p11 8 unshare --user --map-user=65534 --map-group=65534 \
			env LD_PRELOAD="$HOOK" LEAKSNAP_CONTROL=1
		P11=$PID
		d=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-ctl.XXXXXX")
		chmod 755 "$d"
		cp "$C" "$d/ctlclient"
		got=$(setpriv --reuid=1000 --regid=1000 --clear-groups "$d/ctlclient" -t 5 --silent "$P11" 2>&1)
		expect "overflow uid from outside" "closed after 0 bytes" "$got"
		got=$(nsenter --user --preserve-credentials -t "$P11" "$d/ctlclient" "$P11" version 2>&1)
		expect "overflow uid inside" "leaksnap-control 1 $VERSION $P11" "$got"
		rm -rf "$d"
		echo exit >&8
	else
		echo "skipped: a user namespace (unshare --map-user)"
	fi
else
	echo "skipped: another user (needs root and setpriv)"
fi
expect "still answers" "leaksnap-control 1 $VERSION $P1" "$("$C" "$P1" version)"

# The control thread and its buffers are in no dump ---------------------------------
start p3 5 LD_PRELOAD="$HOOK"
expect "no socket" ok "$(ask p3 5 "dump $w/nosock.dump")"
start p4 6 LD_PRELOAD="$HOOK" LEAKSNAP_CONTROL=1
P4=$PID
"$C" "$P4" stats version >/dev/null
"$C" -o "$w/p4" "$P4" dump "dump reachability" >/dev/null
"$C" --flood 20 "$P4" >/dev/null
expect "with socket" ok "$(ask p4 6 "dump $w/sock.dump")"
"$SC" "$w/nosock.dump" | sed 's/ 0x[0-9a-f]*//g' >"$w/nosock.sc"
"$SC" "$w/sock.dump" | sed 's/ 0x[0-9a-f]*//g' >"$w/sock.sc"
cmp -s "$w/nosock.sc" "$w/sock.sc" || { fail "records differ with the socket"; diff "$w/nosock.sc" "$w/sock.sc" | head; }
expect "record count" "$(showline "$w/nosock.dump" 'records:')" "$(showline "$w/sock.dump" 'records:')"
echo exit >&5
echo exit >&6

# Path sockets -----------------------------------------------------------------------
S=$w/ctl.sock
start p5 4 LD_PRELOAD="$HOOK" LEAKSNAP_CONTROL="$S"
P5=$PID
[ -S "$S" ] || fail "path: no socket at $S"
expect "path version" "leaksnap-control 1 $VERSION $P5" "$("$C" "$S" version)"
expect "path file dump" ok "$(ask p5 4 "dump $w/path.dump")"
expect_meta "$w/path.dump" "control=$S"
CH=$(ask p5 4 fork | sed -n 's/^child //p')
PIDS="$PIDS $CH"
i=0
until [ -S "$S.$CH" ] || [ $i -gt 100 ]; do i=$((i + 1)); sleep 0.05; done
expect "child's path socket" "leaksnap-control 1 $VERSION $CH" "$("$C" "$S.$CH" version 2>&1)"
kill "$CH"
# a child that _exits leaves its PATH.<pid> (no destructor runs); the next
# child's control removes it (its pid gone, nothing listening), never a
# live one's
GONE=$(ask p5 4 forkexit | sed -n 's/^gone //p')
[ -S "$S.$GONE" ] || fail "forkexit: no $S.$GONE left behind"
CH2=$(ask p5 4 fork | sed -n 's/^child //p')
PIDS="$PIDS $CH2"
i=0
while [ -e "$S.$GONE" ] && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.05; done
[ -e "$S.$GONE" ] && fail "stale $S.$GONE not removed"
expect "live sibling kept" "leaksnap-control 1 $VERSION $CH2" "$("$C" "$S.$CH2" version 2>&1)"
expect "parent kept" "leaksnap-control 1 $VERSION $P5" "$("$C" "$S" version 2>&1)"
kill "$CH2"
# an exec'd child (LEAKSNAP_CONTROL=PATH inherited, its ancestor listening
# there) takes PATH.<pid>, silently
XC=$(ask p5 4 forkexec | sed -n 's/^exec-child //p')
PIDS="$PIDS $XC"
expect "exec'd child: stderr" "" "$(cat "$w/p5.err")"
i=0
until [ -S "$S.$XC" ] || [ $i -gt 100 ]; do i=$((i + 1)); sleep 0.05; done
expect "exec'd child's socket" "leaksnap-control 1 $VERSION $XC" "$("$C" "$S.$XC" version 2>&1)"
kill -USR1 "$XC"
i=0
while [ -e "$S.$XC" ] && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.05; done
[ -e "$S.$XC" ] && fail "exec'd child: $S.$XC left at its exit"
# a live socket is left alone
start p6 5 LD_PRELOAD="$HOOK" LEAKSNAP_CONTROL="$S"
expect "live socket" "leaksnap: LEAKSNAP_CONTROL: $S: a process listens on it; left as it is" "$(cat "$w/p6.err")"
echo exit >&5
expect "first still answers" "leaksnap-control 1 $VERSION $P5" "$("$C" "$S" version)"
# killed: the socket stays, stale; the next one replaces it
kill -9 "$P5"
sleep 0.2
[ -S "$S" ] || fail "stale: no socket left behind"
start p7 4 LD_PRELOAD="$HOOK" LEAKSNAP_CONTROL="$S"
P7=$PID
[ -s "$w/p7.err" ] && fail "stale: $(cat "$w/p7.err")"
expect "stale replaced" "leaksnap-control 1 $VERSION $P7" "$("$C" "$S" version)"
echo exit >&4
i=0
while [ -e "$S" ] && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.05; done
[ -e "$S" ] && fail "exit: $S not unlinked"
# a regular file is never touched
echo keep >"$w/plain"
start p8 4 LD_PRELOAD="$HOOK" LEAKSNAP_CONTROL="$w/plain"
expect "regular file" "leaksnap: LEAKSNAP_CONTROL: $w/plain: exists and is not a socket; left as it is" "$(cat "$w/p8.err")"
expect "file kept" keep "$(cat "$w/plain")"
expect "runs on" ok "$(ask p8 4 'alloc 1 10')"
echo exit >&4
# too long for a socket address
long=/tmp/$(printf '%0120d' 0)
start p9 4 LD_PRELOAD="$HOOK" LEAKSNAP_CONTROL="$long"
expect "too long" "leaksnap: LEAKSNAP_CONTROL: $long: longer than a socket address holds (107 bytes) once made absolute; no control socket" "$(cat "$w/p9.err")"
echo exit >&4

# The in-app build: LEAKSNAP_CONTROL with LEAKSNAP_LIBS, and the option ------------------
start p10 4 LD_PRELOAD="$INAPP" LEAKSNAP_LIBS='/ctlprog$' LEAKSNAP_CONTROL=1
P10=$PID
expect "in-app version" "leaksnap-control 1 $VERSION $P10" "$("$C" "$P10" version)"
"$C" -o "$w/inapp" "$P10" dump >/dev/null
"$SC" "$w/inapp.1" >"$w/inapp.sc" 2>&1
expect_record "$w/inapp.sc" "3001 5 app keep_a main"
expect_meta "$w/inapp.1" "collector=inapp"
expect "stop" ok "$(ask p10 4 stop)"
"$C" "$P10" version >/dev/null 2>&1 && fail "in-app: the socket outlives leaksnap_stop()"
expect "start 1" ok "$(ask p10 4 'start 1')"
expect "in-app option" "leaksnap-control 1 $VERSION $P10" "$("$C" "$P10" version)"
expect "stop" ok "$(ask p10 4 stop)"
expect "start path" ok "$(ask p10 4 "start $w/inapp.sock")"
expect "in-app path" "leaksnap-control 1 $VERSION $P10" "$("$C" "$w/inapp.sock" version)"
expect "stop" ok "$(ask p10 4 stop)"
[ -e "$w/inapp.sock" ] && fail "in-app: leaksnap_stop() left $w/inapp.sock"
expect "start: control too long" "error 22" "$(ask p10 4 "start $long")"
expect "start 0" ok "$(ask p10 4 'start 0')"
"$C" "$P10" version >/dev/null 2>&1 && fail "in-app: control \"0\" opened a socket"
echo exit >&4
echo exit >&3
finish
