#!/bin/sh
# Dump triggers with the real hook: LEAKSNAP_INTERVAL dumps numbered 1, 2, 3 ...
# without gaps, each trigger=interval; `leaksnap record` forwards SIGRTMAX-17
# to the program and lists every dump it wrote, the exit dump last;
# --no-exit-dump and --frames reach the hook.
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

# --no-exit-dump: nothing written, and record says so.
"$L" record --out "$w/none" --no-exit-dump -- true 2>"$w/none.err"
ls "$w"/none.*.dump >/dev/null 2>&1 && fail "--no-exit-dump: a dump was written"
grep -q '^leaksnap: no dumps written' "$w/none.err" || { fail "--no-exit-dump: message"; cat "$w/none.err"; }
finish
