#!/bin/sh
# A sampled process (LEAKSNAP_SAMPLE, LEAKSNAP_SAMPLE_SEED: the same draws
# each run) as the live commands report it: `ctl PID stats` gives the
# estimates, marked (≈ in a UTF-8 locale, ~ else), with the sampled counts
# beside them, the sample interval, and no count of double frees (none
# looked for); its --json line says sample_interval and the estimates and
# has no invalid_frees; the estimates are the ones show gives for a dump
# taken at the same moment; `ctl PID dump`, `watch` (record --watch prints
# its lines) and record's "wrote" line give estimates the same way.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
. "$(dirname "$0")/ctl-lib.sh"
PIDS=
cleanup() {
	for _p in $PIDS; do kill -9 "$_p" 2>/dev/null; done
	rm -rf "$w"
}
trap cleanup EXIT
cd "$w" || exit 1
unset LC_ALL LC_CTYPE

# same NAME FILE: FILE (pid -> PID, times -> HH:MM:SS) is stdin, exactly
same() {
	cat >"$1.want"
	sed -e "s/\b$PID\b/PID/g" -e 's/^\(leaksnap: \)\{0,1\}[0-9][0-9]:[0-9][0-9]:[0-9][0-9]  /\1HH:MM:SS  /' \
		"$2" >"$1.got"
	cmp -s "$1.want" "$1.got" || { fail "$1: differs"; diff -u "$1.want" "$1.got" | sed 's/^/    /' | head -20; }
}

# ctlprog at start: 524288 + 5 x 3001 + 2 x 3002 bytes; at 4096 with seed
# 3, the big block and 6 of the 7 others sampled.
ctl_run p 3 LD_PRELOAD="$HOOK" LEAKSNAP_CONTROL=1 LEAKSNAP_SAMPLE=4096 LEAKSNAP_SAMPLE_SEED=3 \
	-- "$T/ctlprog"
LANG=C.UTF-8 "$L" ctl "$PID" stats >stats.out 2>stats.err || fail "stats: status $?"
same stats stats.out <<'OUT'
pid: PID
live_bytes: ≈558957 (542296 sampled)
live_blocks: ≈13 (7 sampled)
records: 3
capture: on
dumps_written: 0
sample_interval: 4096
invalid_frees: not looked for (sampled)
OUT
[ -s stats.err ] && fail "stats: $(cat stats.err)"
LANG=C "$L" ctl "$PID" stats >stats-c.out || fail "stats (C locale): status $?"
same stats-c stats-c.out <<'OUT'
pid: PID
live_bytes: ~558957 (542296 sampled)
live_blocks: ~13 (7 sampled)
records: 3
capture: on
dumps_written: 0
sample_interval: 4096
invalid_frees: not looked for (sampled)
OUT
"$L" ctl "$PID" stats --json >json.out || fail "stats --json: status $?"
same json json.out <<'OUT'
{"pid":PID,"live_bytes":542296,"live_blocks":7,"records":3,"capture":true,"dumps_written":0,"sample_interval":4096,"estimated_live_bytes":558957,"estimated_live_blocks":13}
OUT

# a dump now: show's estimates are the stats' (the same records, the same
# rounding)
LANG=C.UTF-8 "$L" ctl "$PID" dump -o now.dump >dump.out || fail "dump: status $?"
same dump dump.out <<'OUT'
wrote now.dump: 3 records, ≈558957 bytes in ≈13 allocations (sampled: 542296 bytes in 7 allocations)
OUT
LANG=C.UTF-8 "$L" show now.dump | grep -x '                 are of sampled blocks; estimated ≈558957 bytes in ≈13 allocations' >/dev/null ||
	fail "show's estimates are not the stats': $(grep -A1 '^sampled:' now.dump)"

# watch: the live lines
mkdir wd
LANG=C.UTF-8 "$L" watch "$PID" --count 2 --every 0 --out wd >watch.out || fail "watch: status $?"
same watch watch.out <<'OUT'
HH:MM:SS  #1  live ≈558957 (542296 sampled)  blocks ≈13 (7 sampled)  growth ≈+0
HH:MM:SS  #2  live ≈558957 (542296 sampled)  blocks ≈13 (7 sampled)  growth ≈+0
leakdiff wd/watch.PID.0001.dump wd/watch.PID.0002.dump
OUT
# 20 blocks of 100 bytes more: the growth is of the estimates
ask p 3 "alloc 20 100" >/dev/null
LANG=C "$L" watch "$PID" --count 1 --every 0 --out wd >watch2.out || fail "watch 2: status $?"
grep -q -E '^[0-9:]{8}  #3  live ~[0-9]+ \(54[0-9]+ sampled\)  blocks ~[0-9]+ \([0-9]+ sampled\)  growth ~\+0$' watch2.out ||
	fail "watch 2: $(cat watch2.out)"
kill "$PID"

# record: the line of each dump written, sampled and not
PID=x
LANG=C.UTF-8 LEAKSNAP_SAMPLE_SEED=3 "$L" record --out rec --sample 4096 -- "$T/sampleleak" big 2>rec.err ||
	fail "record: status $?"
sed 's/rec\.[0-9]*\.exit/rec.PID.exit/' rec.err >rec.nerr
same rec rec.nerr <<'OUT'
leaksnap: wrote rec.PID.exit.dump: 4 records, ≈1243970 bytes in ≈1229 allocations (sampled: 1166752 bytes in 22 allocations)
OUT
LANG=C "$L" record --out full -- "$T/sampleleak" big 2>full.err || fail "record (full): status $?"
sed 's/full\.[0-9]*\.exit/full.PID.exit/' full.err >full.nerr
same full full.nerr <<'OUT'
leaksnap: wrote full.PID.exit.dump: 4 records, 1229536 bytes in 1003 allocations
OUT
finish
