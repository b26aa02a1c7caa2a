#!/bin/sh
# Dump triggers with the real hook: LEAKSNAP_INTERVAL dumps numbered 1, 2, 3 ...
# without gaps, each trigger=interval; `leaksnap record` forwards SIGRTMAX-17
# to the program and lists every dump it wrote, the exit dump last;
# --no-exit-dump and --frames reach the hook; dump signals in a process of
# one thread, and of three.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"

# Interval: an idle program (sleep allocates little and never wakes up
# between dumps) still gets its periodic dumps from the dump thread.
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/iv" LEAKSNAP_INTERVAL=0.2 sleep 1.1
n=$(ls "$w"/iv.*.[0-9]*.dump 2>/dev/null | wc -l)
[ "$n" -ge 3 ] && [ "$n" -le 6 ] || fail "interval 0.2 s over 1.1 s: $n dumps"
pid=$(ls "$w"/iv.*.exit.dump | sed 's/.*\.\([0-9]*\)\.exit\.dump$/\1/')
i=1
while [ "$i" -le "$n" ]; do
	f="$w/iv.$pid.$(printf %04d "$i").dump"
	[ -f "$f" ] || { fail "interval dump $i missing (numbering has a gap)"; break; }
	"$L" show "$f" >"$f.show" 2>&1 || fail "$f: not readable"
	grep -q -x '  trigger=interval' "$f.show" || fail "$f: trigger"
	i=$((i + 1))
done

# record forwards the dump signal and lists the dumps.
"$L" record --out "$w/rec" --frames 8 -- sleep 1 2>"$w/rec.err" &
rpid=$!
sleep 0.4
kill -47 "$rpid" # SIGRTMAX-17 with glibc
wait "$rpid"
st=$?
[ $st = 0 ] || { fail "record: status $st"; cat "$w/rec.err"; }
grep -c '^leaksnap: wrote ' "$w/rec.err" | grep -q -x 2 || { fail "record: not two dumps listed"; cat "$w/rec.err"; }
sed -n '1s/^leaksnap: wrote \(.*\): .*/\1/p' "$w/rec.err" | grep -q '\.0001\.dump$' || fail "record: first listed is not dump 1"
sed -n '2s/^leaksnap: wrote \(.*\): .*/\1/p' "$w/rec.err" | grep -q '\.exit\.dump$' || fail "record: exit dump not last"
d=$(ls "$w"/rec.*.0001.dump)
expect_meta "$d" "trigger=signal"
"$L" show "$d" | grep -q -x 'backtrace size:  8' || fail "record --frames 8 did not reach the hook"

# The hook's thread waits for the program's second thread (docs/hook.md,
# "The hook's thread"). A process of one thread gets 200 dump signals 1-3 ms
# apart, landing anywhere (inside malloc, free and the hook's tables): each
# one is answered by a dump, written by the process's one thread (in the
# handler, or as it leaves the tables), and it still has one thread at the
# end. With a thread of the program's (started first), the dump thread is
# there too and answers them; with LEAKSNAP_DUMP_THREAD=1, from the start.
# (The in-app build has its thread from the start.)
for mode in full sampled threads forced; do
	o="$w/ss-$mode"
	mkdir "$o"
	arg=
	set --
	case $mode in
	sampled) set -- LEAKSNAP_SAMPLE=65536 ;;
	threads) arg=threads ;;
	forced) set -- LEAKSNAP_DUMP_THREAD=1 ;;
	esac
	out=$(env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$o/s" LEAKSNAP_DUMP_ON_EXIT=0 "$@" \
		timeout 60 "$T/sigstorm" "$o" 200 $arg)
	if [ "$mode" = threads ]; then
		want="dumps 200 threads 3"
	elif [ -n "${LEAKSNAP_TEST_HOOK:-}" ] || [ "$mode" = forced ]; then
		want="dumps 200 threads 2"
	else
		want="dumps 200 threads 1"
	fi
	[ "$out" = "$want" ] || fail "sigstorm $mode: '$out', expected '$want'"
	d=$(ls "$o"/s.*.0200.dump 2>/dev/null)
	[ -n "$d" ] && expect_meta "$d" "trigger=signal"
done

# --no-exit-dump: nothing written, and record says so.
"$L" record --out "$w/none" --no-exit-dump -- true 2>"$w/none.err"
ls "$w"/none.*.dump >/dev/null 2>&1 && fail "--no-exit-dump: a dump was written"
grep -q '^leaksnap: no dumps written' "$w/none.err" || { fail "--no-exit-dump: message"; cat "$w/none.err"; }
finish
