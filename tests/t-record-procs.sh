#!/bin/sh
# record and the processes of a run, with the real hook: --only GLOB records
# only the processes whose executable's file name matches (a matching
# grandchild under a non-matching parent too; the others are inert: no
# dumps, no handler, so the dump signal sent to record does not kill them);
# kill -47 sent to record reaches every recorded process, grandchildren
# too; dumps are listed while the program still runs (--interval), each
# once, with a count at the end.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
# Whatever fails, nothing started here outlives the test.
started=""
trap 'for p in $started; do kill -KILL "$p" 2>/dev/null || :; done; rm -rf "$w"' EXIT
unset LEAKSNAP_OUT LEAKSNAP_FRAMES LEAKSNAP_UNWIND LEAKSNAP_INTERVAL LEAKSNAP_DUMP_ON_EXIT \
	LEAKSNAP_ONLY LEAKSNAP_RUN LD_PRELOAD
export LEAKSNAP_HOOK="$HOOK"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
sig_dump=47 # SIGRTMAX-17 with glibc
cd "$w"
# Two copies of one program under two names: the executable's file name is
# what --only looks at.
sleep_bin=$(command -v sleep)
cp "$sleep_bin" leaksleep
cp "$sleep_bin" othersleep
cp "$(command -v cat)" leakcat

# wait_until CMD...: poll up to 10 s for CMD to succeed.
wait_until() {
	_i=0
	until "$@"; do
		_i=$((_i + 1))
		[ $_i -lt 200 ] || return 1
		sleep 0.05
	done
}
# catching PID: the process catches the dump signal (the hook's handler).
catching() {
	_m=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$_m" ] && [ $(((0x$_m >> (sig_dump - 1)) & 1)) = 1 ]
}
# dumps PREFIX: the dump files written under PREFIX, sorted.
dumps() { (cd "$w" && ls "$1".*.dump 2>/dev/null | sort); }
# listed FILE: record's "wrote" lines without their counts.
listed() { sed -n 's/^leaksnap: wrote \([^:]*\): .*/\1/p' "$1"; }

# 1. --only: two matching processes (one a grandchild under a shell), one
#    that does not match; the shells do not match either.  Without --only
#    the other one dumps too.
prog='./leaksleep 0 & echo $! > p1; wait; ./othersleep 0 & echo $! > p2; wait
sh -c "./leaksleep 0 & echo \$! > p3; wait"'
"$L" record --only 'leaks*' --out "$w/o" -- sh -c "$prog" 2>o.err || fail "--only: status $?"
p1=$(cat p1) p2=$(cat p2) p3=$(cat p3)
[ "$(dumps o)" = "$(printf 'o.%s.exit.dump\no.%s.exit.dump' "$p1" "$p3" | sort)" ] ||
	fail "--only 'leaks*': dumps $(dumps o | tr '\n' ' ') (want $p1 and $p3 only)"
[ "$(listed o.err | sort)" = "$(printf '%s/o.%s.exit.dump\n%s/o.%s.exit.dump' "$w" "$p1" "$w" "$p3" | sort)" ] ||
	{ fail "--only: listing"; cat o.err; }
"$L" record --out "$w/a" -- sh -c "$prog" 2>/dev/null
[ -f "a.$(cat p2).exit.dump" ] || fail "without --only, othersleep wrote no dump"
# Nothing matched: said, with the name that was matched (a script's is its
# interpreter's, symbolic links resolved).
"$L" record --only nomatch --only 'x*' --out "$w/z" -- ./leaksleep 0 2>err
[ "$(cat err)" = "leaksnap: no dumps written (the file name of CMD's executable, 'leaksleep', matches no --only pattern ('nomatch:x*'); the processes it starts are recorded when theirs match)" ] ||
	fail "--only nomatch: $(cat err)"
ln -s leaksleep sleeplink
printf '#!%s/sleeplink\n' "$w" > script
chmod +x script
"$L" record --only nomatch --out "$w/z" -- ./script 2>err
grep -q "CMD's executable, 'leaksleep', matches no" err || fail "--only nomatch, a script: $(cat err)"
# Repeated --only: either pattern; '?' and '[...]' work.
"$L" record --only 'nomatch' --only 'oth?rs[a-z]eep' --out "$w/r" -- ./othersleep 0 2>/dev/null
[ "$(dumps r | wc -l)" = 1 ] || fail "--only nomatch --only 'oth?rs[a-z]eep': $(dumps r)"
# The variable reaches the hook as set; an inherited one is kept.
out=$("$L" record --only 'a*' --only b --out "$w/e" -- sh -c 'echo "$LEAKSNAP_ONLY"' 2>/dev/null)
[ "$out" = "a*:b" ] || fail "LEAKSNAP_ONLY=$out"
out=$(LEAKSNAP_ONLY=x "$L" record --out "$w/e" -- sh -c 'echo "$LEAKSNAP_ONLY"' 2>/dev/null)
[ "$out" = "x" ] || fail "inherited LEAKSNAP_ONLY=$out"
for bad in '' 'a:b' 'bin/sleep'; do
	"$L" record --only "$bad" -- ./leaksleep 0 2>err && fail "--only '$bad' accepted"
	grep -q "^leaksnap: record: --only takes a pattern for an executable's file name" err ||
		fail "--only '$bad': $(cat err)"
done

# 2. kill -47 to record reaches both grandchildren, not only the shell that
#    record started.
prog='sh -c "echo \$\$ > c1; exec ./leaksleep 30" & sh -c "echo \$\$ > c2; exec ./leaksleep 30" &
echo $$ > sh.pid; wait'
rm -f c1 c2
"$L" record --out "$w/k" -- sh -c "$prog" 2>k.err &
rp=$!
started="$started $rp"
wait_until test -s c2 && wait_until test -s c1 && wait_until test -s sh.pid ||
	fail "the program did not start"
c1=$(cat c1) c2=$(cat c2) shp=$(cat sh.pid)
started="$started $c1 $c2 $shp"
wait_until catching "$c1" && wait_until catching "$c2" || fail "no handler in the children"
kill -"$sig_dump" "$rp"
wait_until sh -c "ls k.$c1.*1.dump && ls k.$c2.*1.dump" >/dev/null 2>&1 ||
	fail "kill -$sig_dump to record: not both grandchildren dumped ($(dumps k | tr '\n' ' '))"
wait_until sh -c "ls k.$shp.*1.dump" >/dev/null 2>&1 || fail "kill -$sig_dump: the shell did not dump"
kill -TERM "$c1" "$c2"
wait "$rp"
st=$?
[ "$st" = 0 ] || { fail "record's status $st"; cat k.err; }
grep -q 'killed by\|warning' k.err && { fail "kill -$sig_dump: messages"; cat k.err; }
# No process of the run catches the signal (a process left out by --only
# has no handler): said, and no one killed (once, the signal killed it).
"$L" record --only nomatch --out "$w/n" -- ./leaksleep 30 2>n.err &
rp=$!
started="$started $rp"
wait_until sh -c "pgrep -P $rp >/dev/null" || fail "leaksleep did not start"
kp=$(pgrep -P "$rp")
started="$started $kp"
wait_until test -e "/proc/$kp/exe" && [ "$(basename "$(readlink "/proc/$kp/exe")")" = leaksleep ] ||
	fail "not leaksleep"
catching "$kp" && fail "a process left out by --only catches the dump signal"
kill -"$sig_dump" "$rp"
wait_until grep -qs 'not passed on' n.err || fail "no warning: $(cat n.err)"
kill -TERM "$kp"
wait "$rp"
expect_line=$(printf 'leaksnap: warning: signal %s (dump) not passed on: no process of this run catches it (not started yet, not hooked, or left out by --only)' "$sig_dump")
[ "$(sed -n 1p n.err)" = "$expect_line" ] || fail "warning: $(cat n.err)"

# 3. Dumps listed while the program runs: the program (cat on a fifo) waits
#    until record has listed an interval dump, then ends.
mkfifo fifo
"$L" record --interval 0.2 --out "$w/iv" -- ./leakcat fifo 2>iv.err &
rp=$!
started="$started $rp"
wait_until grep -qs "^leaksnap: wrote $w/iv\.[0-9]*\.0*1\.dump: [0-9]* records, [0-9]* bytes in [0-9]* allocations\$" iv.err ||
	fail "no dump listed while the program ran: $(cat iv.err)"
: > fifo
wait "$rp" || fail "record --interval: status $?"
n=$(dumps iv | wc -l)
[ "$(listed iv.err | sort -u | wc -l)" = "$n" ] && [ "$(listed iv.err | wc -l)" = "$n" ] ||
	{ fail "each dump listed once: $n dumps"; cat iv.err; }
live=$(sed -n 's/^leaksnap: [0-9]* dumps written (\([0-9]*\) listed while the program ran)$/\1/p' iv.err)
[ "$(tail -n 1 iv.err)" = "leaksnap: $n dumps written ($live listed while the program ran)" ] &&
	[ "$live" -ge 1 ] || { fail "the count at the end"; cat iv.err; }
finish
