#!/bin/sh
# bench/store_ch.sh [BUILD_DIR]: the store on its two engines side by side,
# in one run, on a throw-away ClickHouse server (tests/clickhouse-server.sh;
# skipped, saying why, without clickhouse-server):
#  (a) leaksnap store of the 1,000,000-record x 16-frame dump (bench/run.sh's)
#      into a new SQLite file and into a new ClickHouse database: median wall
#      time of 3, records/s, the ratio (goal: >= 500k records/s into
#      ClickHouse);
#  (b) the store's bytes per record on both engines (ClickHouse: its tables'
#      parts on disk once merged, OPTIMIZE ... FINAL) beside the dump's own;
#  (c) leaksnap history over 1,000 stored runs of 10,000 records a snapshot
#      (bench/storegen: 100 builds x 10 runs, 2-3 snapshots each, 3% of the
#      stacks growing, offsets changing between builds), then the unfriendly
#      shape where every stack grows: median of 3, --json, the same answer
#      from both engines (goal: <= 1 s on each); the unfriendly shape on a
#      tenth of the runs (10M growth rows would take minutes to write).
# BENCH_STORE_BUILDS=N scales (c) down (N builds of 10 runs; default 100).
set -eu
. "$(dirname "$0")/lib.sh"

B=${1:-build}
LS=$B/bin/leaksnap
GEN=$B/bench/gendump
SGEN=$B/bench/storegen
MAXRSS=$B/bench/maxrss
DATA=$B/bench/data
RESULTS=$B/bench/results-store-ch.txt
CHS=$(dirname "$0")/../tests/clickhouse-server.sh
RECORDS=1000000
FRAMES=16
RUNS=3
BUILDS=${BENCH_STORE_BUILDS:-100}
GOAL_RATE=500000
GOAL_HISTORY=1.0

die() {
	echo "bench: $*" >&2
	exit 1
}
for tool in "$LS" "$GEN" "$SGEN" "$MAXRSS"; do
	[ -x "$tool" ] || die "$tool is missing: run 'make bench'"
done
if ! command -v clickhouse-server >/dev/null 2>&1; then
	echo "bench: store_ch skipped: clickhouse-server is not installed (apt-get install clickhouse-server)" |
		tee "$RESULTS" >&2
	exit 0
fi
mkdir -p "$DATA"
WORK=$B/bench/.store_ch.$$
rm -rf "$WORK"
mkdir -p "$WORK"
URL=$(sh "$CHS" start "$WORK/ch") || die "the ClickHouse server did not start"
HP=${URL#http://}
trap 'sh "$CHS" stop "$WORK/ch" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

chq() { # DB SQL
	curl -sS --noproxy '*' "$URL/?database=$1" --data-binary "$2"
}
newdb() { # NAME: a new empty database, its URL
	chq default "DROP DATABASE IF EXISTS $1" >/dev/null
	chq default "CREATE DATABASE $1" >/dev/null
	echo "clickhouse://$HP/$1"
}

A=$DATA/show-${RECORDS}x${FRAMES}-s1.dump
if [ ! -s "$A" ]; then
	echo "bench: generating $A" >&2
	rm -f "$A.tmp"
	"$GEN" --records "$RECORDS" --frames "$FRAMES" --seed 1 "$A.tmp" || die "gendump failed"
	mv "$A.tmp" "$A"
fi
A_BYTES=$(wc -c <"$A" | tr -d ' ')
DB=$WORK/store.db

: >"$WORK/results"
say() {
	printf '%s\n' "$*" | tee -a "$WORK/results"
}
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
rev=$(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
say "leaksnap benchmark: the store on SQLite and on ClickHouse ($(date -u '+%Y-%m-%d %H:%M UTC'))"
say "machine: $(nproc) CPUs, ${cpu:-$(uname -m)}, $(uname -sr); load average $(cut -d ' ' -f 1-3 /proc/loadavg)"
say "leaksnap: $rev, build dir $B; SQLite $(sqlite3 --version 2>/dev/null | cut -d ' ' -f 1 || echo '?');" \
	"ClickHouse $(chq default 'SELECT version()') (a throw-away server on this machine)"
say "input:   $A ($A_BYTES bytes)"
say "method:  warm page cache; median of $RUNS runs, the engines taking turns"
say "         (the load average matters: the ClickHouse server shares the CPUs)"
say ""

# (a) store ---------------------------------------------------------------------------
: >"$WORK/sq" && : >"$WORK/chs"
i=0
while [ "$i" -lt "$RUNS" ]; do
	rm -f "$DB" "$DB-wal" "$DB-shm"
	"$MAXRSS" -o "$WORK/sq" "$LS" store --db "$DB" "$A" >/dev/null || die "store into SQLite failed"
	CH=$(newdb store)
	"$MAXRSS" -o "$WORK/chs" "$LS" store --db "$CH" "$A" >/dev/null || die "store into ClickHouse failed"
	i=$((i + 1))
done
tsq=$(awk '{ print $1 }' "$WORK/sq" | median)
tch=$(awk '{ print $1 }' "$WORK/chs" | median)
say "(a) store of 1M records x 16 frames into a new store (symbolization of its 66k frames included)"
say "$(printf '    %-12s %9s %13s %10s' engine 'time (s)' 'records/s' 'RSS (MiB)')"
say "$(awk -v t="$tsq" -v n="$RECORDS" -v k="$(awk '{ print $2 }' "$WORK/sq" | median)" 'BEGIN {
	printf "    %-12s %9.3f %13.0f %10.1f\n", "SQLite", t, n / t, k / 1024 }')"
say "$(awk -v t="$tch" -v n="$RECORDS" -v k="$(awk '{ print $2 }' "$WORK/chs" | median)" 'BEGIN {
	printf "    %-12s %9.3f %13.0f %10.1f\n", "ClickHouse", t, n / t, k / 1024 }')"
say "$(awk -v a="$tsq" -v b="$tch" -v n="$RECORDS" -v g="$GOAL_RATE" 'BEGIN {
	printf "    ClickHouse/SQLite time %.2f; goal into ClickHouse >= %d records/s: %.0f %s\n",
		b / a, g, n / b, (n / b >= g) ? "PASS" : "FAIL" }')"
"$LS" store --db "$CH" "$A" | grep -q ': already stored$' || die "the dump stored again was not found"

# (b) size --------------------------------------------------------------------------------
db=$(wc -c <"$DB" | tr -d ' ')
[ -e "$DB-wal" ] && db=$((db + $(wc -c <"$DB-wal" | tr -d ' ')))
for t in store_info runs run_labels snapshots stacks frames symbols records growth ingests; do
	chq store "OPTIMIZE TABLE $t FINAL" >/dev/null || die "OPTIMIZE $t failed"
done
chb=$(chq store "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'store' AND active")
say ""
say "(b) size of the store of that dump, per record"
say "$(awk -v a="$A_BYTES" -v s="$db" -v c="$chb" -v n="$RECORDS" 'BEGIN {
	printf "    the dump     %11d bytes = %6.1f bytes per record\n", a, a / n
	printf "    SQLite       %11d bytes = %6.1f bytes per record (%.2f x the dump)\n", s, s / n, s / a
	printf "    ClickHouse   %11d bytes = %6.1f bytes per record (%.2f x the dump; parts on disk after OPTIMIZE ... FINAL)\n", c, c / n, c / a }')"
say "    ClickHouse by table: $(chq store "SELECT table, sum(bytes_on_disk) AS b FROM system.parts WHERE database = 'store' AND active GROUP BY table ORDER BY b DESC FORMAT TSV" | awk '{ printf "%s%s %.1f MB", (NR > 1) ? ", " : "", $1, $2 / 1e6 }')"

# (c) history ------------------------------------------------------------------------------------
# hist SHAPE BUILDS OPTIONS...: BUILDS x 10 runs written into both engines,
# then history timed
hist() {
	shape=$1 builds=$2
	shift 2
	rm -f "$DB" "$DB-wal" "$DB-shm"
	CH=$(newdb hist)
	"$SGEN" --db "$DB" --builds "$builds" "$@" >"$WORK/gen.sq" || die "storegen into SQLite failed"
	"$SGEN" --db "$CH" --builds "$builds" "$@" >"$WORK/gen.ch" || die "storegen into ClickHouse failed"
	"$LS" history --db "$DB" --json >"$WORK/h.sq" || die "history on SQLite failed"
	"$LS" history --db "$CH" --json >"$WORK/h.ch" || die "history on ClickHouse failed"
	same=identical
	cmp -s "$WORK/h.sq" "$WORK/h.ch" || same="DIFFERENT"
	: >"$WORK/hsq" && : >"$WORK/hch"
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		"$MAXRSS" -o "$WORK/hsq" "$LS" history --db "$DB" --json >/dev/null || die "history failed"
		"$MAXRSS" -o "$WORK/hch" "$LS" history --db "$CH" --json >/dev/null || die "history failed"
		i=$((i + 1))
	done
	hsq=$(awk '{ print $1 }' "$WORK/hsq" | median)
	hch=$(awk '{ print $1 }' "$WORK/hch" | median)
	growth_rows=$(chq hist "SELECT count() FROM growth")
	say "    $shape:"
	say "      $(sed 's/^storegen: //; s/ in .*//' "$WORK/gen.sq"), $growth_rows growth rows"
	say "      written by storegen in: SQLite $(sed 's/.* in //' "$WORK/gen.sq"), ClickHouse $(sed 's/.* in //' "$WORK/gen.ch")"
	say "$(awk -v a="$hsq" -v b="$hch" -v g="$GOAL_HISTORY" -v s="$same" 'BEGIN {
		printf "      history --json: SQLite %.3f s %s, ClickHouse %.3f s %s (goal <= %.1f s; ClickHouse/SQLite %.2f); answers %s\n",
			a, (a <= g) ? "PASS" : "FAIL", b, (b <= g) ? "PASS" : "FAIL", g, b / a, s }')"
}
say ""
say "(c) history over runs of 10,000 records a snapshot, 2-3 snapshots a run (storegen, --json)"
hist "CI-like, $((BUILDS * 10)) runs ($BUILDS builds x 10; 3% of the stacks grow)" "$BUILDS"
# (a tenth of the runs: every record a growth row, every stack a suspect's
# to name -- history's cost grows with them)
UB=$(((BUILDS + 9) / 10))
hist "unfriendly, $((UB * 10)) runs ($UB builds x 10; every stack grows)" "$UB" --grow-all

cp "$WORK/results" "$RESULTS"
echo "bench: results in $RESULTS" >&2
