#!/bin/sh
# leaksnap store and history on ClickHouse end to end, on a throw-away
# server (tests/clickhouse-server.sh), each answer compared with SQLite's
# for the same dumps:
#  - runs of the hook's dumps (two builds, hostile labels, a DUMP whose
#    name holds quotes, a backslash, a tab and a newline) and generated
#    ones: the same lines from store, byte-identical `history` (text,
#    --json, --by run, --by test, --where, --last) on both engines; the
#    hostile strings as the server holds them, byte for byte;
#  - leakdiff --db --run ID --json of each run: the same bytes on both
#    engines (the module bases it gives out included);
#  - the same dumps again: 'already stored', not one row more on the
#    server (every table's rows counted as they are, not merged);
#  - a store killed (kill -9) in the middle of a big ingest: history as
#    before, no completion marker more; the dump stores whole afterwards
#    and history matches SQLite's again;
#  - four stores at once into one new database (one run shared by all
#    four): nothing lost, the same history as SQLite's;
#  - a store of schema version 2 upgraded when read (ALTER TABLE ... ADD
#    COLUMN ... DEFAULT on 18.16), its history as before; six processes
#    (history, store) upgrading it at once, five times over: all exit 0,
#    version 3; a user who may only read reads it as it is (the same
#    history), does not upgrade it, cannot store into it; sampled runs stored into it give SQLite's history
#    (estimates) and leakdiff --db;
#  - each error, one line and exit 2: no server, no such database, a
#    database of something else, a newer schema, a read-only user (who may
#    still read history), a URL that is not one.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
GEN=$(cd "$B/bench" && pwd)/gendump
MKF=$(cd "$B/tests" && pwd)/mkfixture
CHS=$top/tests/clickhouse-server.sh
command -v clickhouse-server >/dev/null 2>&1 ||
	{ echo "clickhouse-server is not installed (Debian: apt-get install clickhouse-server)"; exit 77; }
for t in gcc python3 curl; do
	command -v $t >/dev/null 2>&1 || { echo "$t is not installed"; exit 77; }
done

url=$(sh "$CHS" start "$w/ch") || { echo "FAIL: the ClickHouse server did not start"; exit 1; }
trap 'sh "$CHS" stop "$w/ch" >/dev/null 2>&1; rm -rf "$w"' EXIT
hp=${url#http://}

expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}
# chq DB SQL: the server's answer (TabSeparated)
chq() {
	curl -sS --noproxy '*' "$url/?database=$1" --data-binary "$2"
}
# newdb NAME: a new empty database; its URL
newdb() {
	chq default "DROP DATABASE IF EXISTS $1" >/dev/null
	chq default "CREATE DATABASE $1" >/dev/null
	echo "clickhouse://$hp/$1"
}
# raw DB: every table's rows on the server as they are (not merged)
raw() {
	for t in runs run_labels snapshots stacks frames symbols records growth ingests; do
		printf '%s=%s ' "$t" "$(chq "$1" "SELECT count() FROM $t")"
	done
}
# same WHAT ARGS...: `leaksnap history ARGS` on s.db and on $CH, identical
same() {
	_what=$1
	shift
	"$L" history --db "$w/s.db" "$@" >"$w/h.sq" 2>&1 || fail "$_what: history on SQLite: $(cat "$w/h.sq")"
	"$L" history --db "$CH" "$@" >"$w/h.ch" 2>&1 || fail "$_what: history on ClickHouse: $(cat "$w/h.ch")"
	cmp -s "$w/h.sq" "$w/h.ch" || { fail "$_what: the engines differ"; diff "$w/h.sq" "$w/h.ch" | head -10; }
	[ -s "$w/h.sq" ] || fail "$_what: no history"
}
# store_both OUT ARGS...: `leaksnap store ARGS` into s.db and $CH, the
# same lines; OUT the ClickHouse store's
store_both() {
	_out=$1
	shift
	_st=0
	"$L" store --db "$w/s.db" "$@" >"$w/st.sq" 2>&1 || _st=$?
	expect_eq "store into SQLite: status ($(cat "$w/st.sq"))" "$_st" 0
	_st=0
	"$L" store --db "$CH" "$@" >"$_out" 2>&1 || _st=$?
	expect_eq "store into ClickHouse: status ($(cat "$_out"))" "$_st" 0
	cmp -s "$w/st.sq" "$_out" || { fail "store: the engines said different things"; diff "$w/st.sq" "$_out"; }
}

cat >"$w/grow.c" <<'C'
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
char *keep[1024];
int nkeep;
__attribute__((noinline)) static void grow(int n)
{
	for (int k = 0; k < n && nkeep < 1024; k++) {
		keep[nkeep] = malloc(1024);
		memset(keep[nkeep++], 1, 1024);
	}
}
__attribute__((noinline)) static void other(void)
{
	keep[nkeep++] = malloc(100);
}
int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	other();
	for (int i = 0; i <= n; i++) {
		grow(4);
		if (i < n && (!dump || dump(NULL) != 0))
			return 1;
	}
	return 0;
}
C
gcc -g -O1 -o "$w/grow" "$w/grow.c" -ldl || { fail "cannot build grow"; finish; }
mkdir "$w/h" "$w/h2"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/h/m" "$w/grow" 3 || { fail "grow 3"; finish; }
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/h2/m" "$w/grow" 1 || { fail "grow 1"; finish; }
pid=$(ls "$w/h" | sed -n 's/^m\.\([0-9]*\)\.exit\.dump$/\1/p')
pid2=$(ls "$w/h2" | sed -n 's/^m\.\([0-9]*\)\.exit\.dump$/\1/p')
[ -n "$pid" ] && [ -n "$pid2" ] || { fail "no exit dumps"; finish; }
cd "$w" || exit 1
for k in 1 2; do
	"$GEN" --records 20000 --seed $k "g$k.dump" 2>/dev/null || fail "gendump $k"
done
# the same program later, a few percent of its stacks grown
"$GEN" --records 20000 --seed 1 --shared 19000 --values-seed 7 "g1b.dump" 2>/dev/null ||
	fail "gendump g1b"
weird=$(printf "we'i\\\\rd\tna\nme.dump")
cp h2/m.$pid2.exit.dump "$weird"

# 1. The same runs on both engines ------------------------------------------------------
CH=$(newdb s)
hostile=$(printf "x'); DROP TABLE runs; --\n\"two\"\tlines \377\376 \\\\N")
store_both "$w/out1" --label build=4711 --label "test=$hostile" --label device=pixel \
	h/m.$pid.0001.dump h/m.$pid.0002.dump h/m.$pid.0003.dump h/m.$pid.exit.dump
expect_eq "store: lines" "$(sed 's/ (.*//' "$w/out1")" "h/m.$pid.0001.dump: stored 2 records
h/m.$pid.0002.dump: stored 2 records
h/m.$pid.0003.dump: stored 2 records
h/m.$pid.exit.dump: stored 2 records"
store_both "$w/out2" --label build=4712 --label test=other --label device=emu \
	h2/m.$pid2.0001.dump "$weird"
store_both "$w/out3" --label build=4713 --label test=big --label device=pixel g1.dump g1b.dump
# (g2.dump: the generator's process again, a third snapshot of g1's run)
store_both "$w/out4" --label build=4714 --label test=big --label device=emu g2.dump
same "history"
same "history --json" --json
same "history --by run --json" --by run --json
same "history --by test --json" --by test --json
same "history --by device" --by device
same "history --where build=4712 --json" --where build=4712 --json
same "history --where test=HOSTILE --json" --where "test=$hostile" --json
same "history --by run --last 2 --json" --by run --last 2 --json
"$L" history --db "$CH" --json >"$w/hj" || fail "history --json"
python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert [(r["key"], r["runs"]) for r in rows] == [("4713", 1), ("4711", 1), ("4712", 1)], rows
assert rows[0]["suspects"], rows[0]
assert rows[1]["growth"] == 12288 and rows[1]["suspects"], rows[1]
' "$w/hj" || fail "history --json: not the rows expected"
# leakdiff --db of each run of more than one snapshot: the same bytes on
# both engines (the PCs it makes up for the modules included)
LD=$(dirname "$L")/leakdiff
nd=0
for id in $("$L" history --db "$w/s.db" --by run --json | python3 -c '
import json, sys
for r in json.load(sys.stdin)["rows"]:
    print(r["key"])'); do
	"$LD" --db "$w/s.db" --run "$id" --json >"$w/d.sq" 2>"$w/e.sq" || continue
	"$LD" --db "$CH" --run "$id" --json >"$w/d.ch" 2>"$w/e.ch" || fail "leakdiff --db CH --run $id: $(cat "$w/e.ch")"
	cmp -s "$w/d.sq" "$w/d.ch" || { fail "leakdiff --db --run $id --json: the engines differ"; diff "$w/d.sq" "$w/d.ch" | head -6; }
	cmp -s "$w/e.sq" "$w/e.ch" || fail "leakdiff --db --run $id --json: the engines warn differently"
	grep -q '"pc"' "$w/d.sq" || fail "leakdiff --db --run $id --json: no pc"
	nd=$((nd + 1))
done
[ "$nd" -ge 2 ] || fail "leakdiff --db: only $nd runs compared"
# the hostile strings as the server holds them
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n' | tr a-f A-F; }
expect_eq "hostile label on the server" "$(chq s "SELECT hex(value) FROM run_labels WHERE name = 'test' AND value NOT IN ('other', 'big')")" "$(hex "$hostile")"
expect_eq "hostile source on the server" "$(chq s "SELECT hex(source) FROM snapshots WHERE source LIKE 'we%'")" "$(hex "$weird")"

# 2. The same dumps again: nothing added ----------------------------------------------------
before=$(raw s)
st=0
"$L" store --db "$CH" --label build=other h/m.$pid.0001.dump h/m.$pid.exit.dump "$weird" g1.dump >"$w/again" 2>&1 || st=$?
expect_eq "again: status" "$st" 0
expect_eq "again: stdout" "$(cat "$w/again")" "h/m.$pid.0001.dump: already stored
h/m.$pid.exit.dump: already stored
$weird: already stored
g1.dump: already stored"
expect_eq "again: rows on the server" "$(raw s)" "$before"
expect_eq "again: labels kept" "$(chq s "SELECT DISTINCT value FROM run_labels WHERE name = 'build' ORDER BY value" | tr '\n' ' ')" "4711 4712 4713 "

# 3. Killed in the middle of a big ingest ------------------------------------------------------
"$GEN" --records 600000 --seed 9 big.dump 2>/dev/null || fail "gendump big"
"$L" history --db "$CH" --by run --json >"$w/before.json" || fail "history before the kill"
markers=$(chq s "SELECT count() FROM ingests")
recs=$(chq s "SELECT count() FROM records")
"$L" store --db "$CH" --label build=4715 big.dump >"$w/kill.out" 2>&1 &
kp=$!
n=0
while [ $n -lt 600 ]; do
	[ "$(chq s "SELECT count() FROM records")" -gt "$recs" ] && break
	kill -0 $kp 2>/dev/null || break
	n=$((n + 1))
	sleep 0.05
done
kill -9 $kp 2>/dev/null || fail "the store ended before it was killed: make its dump bigger"
wait $kp 2>/dev/null
expect_eq "killed: its output" "$(cat "$w/kill.out")" ""
[ "$(chq s "SELECT count() FROM records")" -gt "$recs" ] || fail "killed: it had written nothing"
expect_eq "killed: no marker" "$(chq s "SELECT count() FROM ingests")" "$markers"
"$L" history --db "$CH" --by run --json >"$w/after.json" || fail "history after the kill"
cmp -s "$w/before.json" "$w/after.json" || fail "killed: history changed"
st=0
"$L" store --db "$CH" --label build=4715 big.dump >"$w/kill2.out" 2>&1 || st=$?
expect_eq "after the kill: status" "$st" 0
expect_eq "after the kill: stdout" "$(sed 's/ (.*//' "$w/kill2.out")" "big.dump: stored 600000 records"
expect_eq "after the kill: records" \
	"$(chq s "SELECT uniqExact(idx), max(idx) FROM records WHERE snapshot_id = (SELECT any(snapshot_id) FROM snapshots WHERE source = 'big.dump')")" \
	"600000	599999"
"$L" store --db "$w/s.db" --label build=4715 big.dump >/dev/null || fail "big.dump into SQLite"
same "history after the kill --by run --json" --by run --json
same "history after the kill" --json

# 4. Four stores at once ---------------------------------------------------------------------------
for k in 3 4 5 6; do
	"$GEN" --records 30000 --seed $k "g$k.dump" 2>/dev/null || fail "gendump $k"
done
CH=$(newdb four)
rm -f "$w/s.db" "$w/s.db-wal" "$w/s.db-shm"
pids=""
k=0
for n in 0001 0002 0003 exit; do
	k=$((k + 1))
	"$L" store --db "$CH" --label "writer=$k" g$((k + 2)).dump h/m.$pid.$n.dump \
		>"$w/four$k.out" 2>&1 &
	pids="$pids $!"
done
k=0
for p in $pids; do
	k=$((k + 1))
	st=0
	wait "$p" || st=$?
	expect_eq "writer $k: status ($(cat "$w/four$k.out"))" "$st" 0
done
for k in 1 2 3 4; do # (the same runs into SQLite, one writer after the other)
	case $k in 1) n=0001 ;; 2) n=0002 ;; 3) n=0003 ;; 4) n=exit ;; esac
	"$L" store --db "$w/s.db" --label "writer=$k" g$((k + 2)).dump h/m.$pid.$n.dump >/dev/null ||
		fail "writer $k into SQLite"
done
expect_eq "four writers: snapshots" "$(chq four "SELECT uniqExact(snapshot_id) FROM snapshots WHERE ingest_id IN (SELECT ingest_id FROM ingests)")" 8
expect_eq "four writers: markers" "$(chq four "SELECT count() FROM ingests")" 8
expect_eq "four writers: records" "$(chq four "SELECT uniqExact(snapshot_id, idx) FROM records")" "$((4 * 30000 + 4 * 2))"
same "four writers: history --by run --json" --by run --json
# (both runs are shared by the four: which writer's labels each keeps is
# a race on either engine; one each)
expect_eq "four writers: the runs' labels" \
	"$("$L" history --db "$CH" --by writer --json | python3 -c 'import json, sys; print(sum(r["runs"] for r in json.load(sys.stdin)["rows"] if r["key"]))')" \
	2
expect_eq "four writers: one label each" "$(chq four "SELECT uniqExact(run_id, name) FROM run_labels")" 2

# 4b. The check after the marker fails ---------------------------------------------------------
# (a proxy, tests/tools/fake-ch.py marker, fails the request after each
# completion marker: the run is stored, said with a warning, exit 0)
MK=$(newdb mk)
rm -f "$w/mkport"
python3 "$top/tests/tools/fake-ch.py" marker "$w/mkport" "$hp" &
mkpid=$!
n=0
while [ ! -s "$w/mkport" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
MKP="clickhouse://127.0.0.1:$(cat "$w/mkport")/mk"
st=0
"$L" store --db "$MKP" h/m.$pid.0001.dump h/m.$pid.exit.dump >"$w/mk.out" 2>"$w/mk.err" || st=$?
kill $mkpid 2>/dev/null
wait $mkpid 2>/dev/null
expect_eq "after the marker: status" "$st" 0
expect_eq "after the marker: stderr" "$(cat "$w/mk.err")" \
	"leaksnap: $MKP: warning: stored, but the growth of the run was not checked against other writes of it: cannot read the store: injected after the marker"
MKR=$(newdb mkref)
"$L" store --db "$MKR" h/m.$pid.0001.dump h/m.$pid.exit.dump >"$w/mkr.out" 2>&1 || fail "store into mkref"
expect_eq "after the marker: stdout" "$(sed 's/ (.*//' "$w/mk.out")" "$(sed 's/ (.*//' "$w/mkr.out")"
[ -s "$w/mk.out" ] || fail "after the marker: no stdout"
expect_eq "after the marker: growth as written without the proxy" \
	"$(chq mk "SELECT stack_id, bytes FROM growth ORDER BY stack_id FORMAT TabSeparated" | md5sum)" \
	"$(chq mkref "SELECT stack_id, bytes FROM growth ORDER BY stack_id FORMAT TabSeparated" | md5sum)"
expect_eq "after the marker: the run is there" "$(chq mk "SELECT count() FROM ingests")" 1
st=0
"$L" store --db "$MK" h/m.$pid.0001.dump h/m.$pid.exit.dump >"$w/mk2.out" 2>&1 || st=$?
expect_eq "after the marker, again: status" "$st" 0
expect_eq "after the marker, again" "$(cat "$w/mk2.out")" "h/m.$pid.0001.dump: already stored
h/m.$pid.exit.dump: already stored"

# 5. Errors ---------------------------------------------------------------------------------------
# expect_error WHAT STDERR ARGS...: exit 2, that one line, nothing on stdout
expect_error() {
	_what=$1 _want=$2
	shift 2
	_st=0
	"$L" "$@" >"$w/eout" 2>"$w/eerr" || _st=$?
	expect_eq "$_what: status" "$_st" 2
	expect_eq "$_what: stderr" "$(cat "$w/eerr")" "$_want"
	expect_eq "$_what: stdout" "$(cat "$w/eout")" ""
}
expect_error "no server" "leaksnap: clickhouse://127.0.0.1:1/x: cannot reach the server: Connection refused" \
	store --db clickhouse://127.0.0.1:1/x g1.dump
expect_error "no server (history)" "leaksnap: clickhouse://127.0.0.1:1/x: cannot reach the server: Connection refused" \
	history --db clickhouse://127.0.0.1:1/x
expect_error "no such database" "leaksnap: clickhouse://$hp/nodb: no database 'nodb' on the server" \
	store --db "clickhouse://$hp/nodb" g1.dump
expect_error "no such database (history)" "leaksnap: clickhouse://$hp/nodb: no database 'nodb' on the server" \
	history --db "clickhouse://$hp/nodb"
OTHER=$(newdb other)
chq other "CREATE TABLE t (x UInt8) ENGINE = Memory" >/dev/null
expect_error "another database" "leaksnap: $OTHER: not a leaksnap store (a database without its tables)" \
	store --db "$OTHER" g1.dump
EMPTY=$(newdb empty)
expect_error "history of an empty database" "leaksnap: $EMPTY: not a leaksnap store (empty)" \
	history --db "$EMPTY"
NEWER=$(newdb newer)
"$L" store --db "$NEWER" h/m.$pid.0001.dump >/dev/null || fail "store into newer"
chq newer "INSERT INTO store_info VALUES ('schema_version', '4')" >/dev/null
expect_error "newer schema" \
	"leaksnap: $NEWER: schema version 4 is newer than this leaksnap's (3): a newer leaksnap wrote it" \
	store --db "$NEWER" g1.dump
expect_error "newer schema (history)" \
	"leaksnap: $NEWER: schema version 4 is newer than this leaksnap's (3): a newer leaksnap wrote it" \
	history --db "$NEWER"
expect_error "read-only user" \
	"leaksnap: clickhouse://reader@$hp/four: read-only: cannot write the store (the user may only read)" \
	store --db "clickhouse://reader@$hp/four" g1.dump
"$L" history --db "clickhouse://reader@$hp/four" --by writer >"$w/h.ro" 2>&1 || fail "history as the reader: $(cat "$w/h.ro")"
"$L" history --db "$CH" --by writer >"$w/h.rw" || fail "history as the writer"
cmp -s "$w/h.ro" "$w/h.rw" || fail "history as the reader differs"
expect_error "a URL without its database" \
	"leaksnap: clickhouse://$hp: no /DATABASE in the URL (clickhouse://HOST[:PORT]/DATABASE)" \
	store --db "clickhouse://$hp" g1.dump
expect_error "a database name that is not one" \
	"leaksnap: clickhouse://$hp/a-b: a DATABASE name is letters, digits and '_', not starting with a digit" \
	store --db "clickhouse://$hp/a-b" g1.dump

# 4c. A store of schema version 2, upgraded; sampled runs -----------------------------------------
# (version 2 made of a store of this version: the columns version 3 added
# dropped, and its version row 2)
"$MKF" "$w/fx" >/dev/null || fail "mkfixture"
UP=$(newdb up)
for db in "$UP" "$w/up.db"; do
	"$L" store --db "$db" --label build=1 "$w/fx/hist-1-1.dump" "$w/fx/hist-1-2.dump" >/dev/null &&
		"$L" store --db "$db" --label build=2 "$w/fx/hist-2a-1.dump" "$w/fx/hist-2a-2.dump" >/dev/null ||
		fail "store the history fixtures into $db"
done
"$L" history --db "$UP" --json >"$w/up.before" 2>&1 || fail "history before: $(cat "$w/up.before")"
v3cols="'sample_interval', 'estimated_bytes', 'estimated_unreachable_bytes'"
# to_v2 DB: the store in DB made one of version 2
to_v2() {
	for c in sample_interval estimated_bytes estimated_unreachable_bytes; do
		chq "$1" "ALTER TABLE snapshots DROP COLUMN $c" >/dev/null
	done
	chq "$1" "DROP TABLE store_info" >/dev/null
	chq "$1" "CREATE TABLE store_info (name String, value String) ENGINE = ReplacingMergeTree() ORDER BY (name)" >/dev/null
	chq "$1" "INSERT INTO store_info VALUES ('schema_version', '2')" >/dev/null
	expect_eq "version 2: without the columns of 3" \
		"$(chq "$1" "SELECT count() FROM system.columns WHERE database = '$1' AND table = 'snapshots' AND name IN ($v3cols)")" 0
}
to_v2 up
# a reader who may not write cannot upgrade it, but reads it as it is:
# the same history, the store left at version 2
"$L" history --db "clickhouse://reader@$hp/up" --json >"$w/up.ro" 2>&1 ||
	fail "version 2, a read-only user: history: $(cat "$w/up.ro")"
cmp -s "$w/up.before" "$w/up.ro" || { fail "version 2, a read-only user: history differs"; diff "$w/up.before" "$w/up.ro" | head; }
"$L" history --db "clickhouse://reader@$hp/up" --by run >"$w/up.ro-run" 2>&1 ||
	fail "version 2, a read-only user: history --by run: $(cat "$w/up.ro-run")"
"$L" history --db "$UP" --by run >"$w/up.rw-run" 2>&1 || fail "history --by run: $(cat "$w/up.rw-run")"
cmp -s "$w/up.rw-run" "$w/up.ro-run" || fail "version 2, a read-only user: history --by run differs"
# (that writer upgraded it: made version 2 again)
to_v2 up
expect_error "version 2, a read-only user storing" \
	"leaksnap: clickhouse://reader@$hp/up: schema version 2 is older than this leaksnap's (3), and only one who may write the store can upgrade it ('leaksnap store' upgrades it)" \
	store --db "clickhouse://reader@$hp/up" "$w/fx/hist-1-1.dump"
"$L" history --db "clickhouse://reader@$hp/up" >/dev/null 2>&1 || fail "version 2, a read-only user: history again"
expect_eq "version 2, a read-only user: not upgraded" "$(chq up "SELECT max(value) FROM store_info")" 2
expect_eq "version 2, a read-only user: no column added" \
	"$(chq up "SELECT count() FROM system.columns WHERE database = 'up' AND table = 'snapshots' AND name IN ($v3cols)")" 0
# several who may, at once (history and store): each upgrades or finds it
# upgraded by another, all exit 0; a few times over
for round in 1 2 3 4 5; do
	[ $round = 1 ] || to_v2 up
	pids=""
	for k in 1 2 3 4 5 6; do
		if [ $k -le 4 ]; then
			"$L" history --db "$UP" >"$w/par$k.out" 2>&1 &
		else
			"$L" store --db "$UP" --label build=1 "$w/fx/hist-1-1.dump" >"$w/par$k.out" 2>&1 &
		fi
		pids="$pids $!"
	done
	k=0
	for p in $pids; do
		k=$((k + 1))
		st=0
		wait "$p" || st=$?
		expect_eq "version 2, upgraded at once, round $round, process $k: status ($(cat "$w/par$k.out"))" "$st" 0
	done
	expect_eq "version 2, upgraded at once, round $round: version" "$(chq up "SELECT max(value) FROM store_info")" 3
	expect_eq "version 2, upgraded at once, round $round: the columns" \
		"$(chq up "SELECT count() FROM system.columns WHERE database = 'up' AND table = 'snapshots' AND name IN ($v3cols)")" 3
done
to_v2 up
# one who may: upgraded as it is read (ALTER TABLE ... ADD COLUMN ... DEFAULT),
# every old snapshot not sampled, its estimates its totals; the same history
"$L" history --db "$UP" --json >"$w/up.after" 2>&1 || fail "history after: $(cat "$w/up.after")"
cmp -s "$w/up.before" "$w/up.after" || { fail "upgraded: history differs"; diff "$w/up.before" "$w/up.after" | head; }
expect_eq "upgraded: version" "$(chq up "SELECT max(value) FROM store_info")" 3
# (the server's words for the constant default vary: its kind only)
expect_eq "upgraded: the columns" \
	"$(chq up "SELECT name, type, default_kind, if(name = 'sample_interval', '', default_expression) FROM system.columns WHERE database = 'up' AND table = 'snapshots' AND name IN ($v3cols) ORDER BY name")" \
	"$(printf 'estimated_bytes\tUInt64\tDEFAULT\ttotal_bytes\nestimated_unreachable_bytes\tUInt64\tDEFAULT\tunreachable_bytes\nsample_interval\tUInt64\tDEFAULT\t')"
expect_eq "upgraded: old snapshots" \
	"$(chq up "SELECT count(), sum(sample_interval != 0 OR estimated_bytes != total_bytes OR estimated_unreachable_bytes != unreachable_bytes) FROM snapshots")" \
	"$(printf '4\t0')"
"$L" history --db "$UP" >/dev/null 2>&1 || fail "history of the upgraded store, again"
# sampled runs into the upgraded store: the same history as SQLite's (the
# estimates, marked), the same leakdiff --db
for db in "$UP" "$w/up.db"; do
	"$L" store --db "$db" --label build=3 "$w/fx/sampled1.dump" "$w/fx/sampled2.dump" >/dev/null ||
		fail "store the sampled fixtures into $db"
done
expect_eq "sampled: stored" "$(chq up "SELECT sample_interval, estimated_bytes, total_bytes FROM snapshots WHERE sample_interval != 0 ORDER BY estimated_bytes")" \
	"$(printf '4096\t29520\t9856\n4096\t62545\t10368')"
for a in "" "--json" "--by run"; do
	# (word splitting wanted: the options)
	"$L" history --db "$w/up.db" $a >"$w/up.sq" 2>&1 || fail "history $a on SQLite"
	"$L" history --db "$UP" $a >"$w/up.ch" 2>&1 || fail "history $a on ClickHouse"
	cmp -s "$w/up.sq" "$w/up.ch" || { fail "sampled: history $a differs"; diff "$w/up.sq" "$w/up.ch" | head; }
done
expect_eq "sampled: the estimates in history" "$(LC_ALL=C.UTF-8 "$L" history --db "$UP" --where build=3)" \
	"build 3: 1 run from 2025-11-21T10:22:33.123456789Z: memory ≈62545 bytes, growth ≈+33025, definite ≈24997 (sampled every 4096 bytes: estimates)
            ≈+33025  libfoo.so+0x1100 < libfoo.so+0x1200"
sid=$("$L" history --db "$UP" --by run | sed -n 's/^run \([0-9a-f]*\): .*sampled every.*/\1/p')
"$LD" --db "$UP" --run "$sid" --json >"$w/up-diff.ch" 2>&1 || fail "leakdiff --db of the sampled run on ClickHouse"
"$LD" --db "$w/up.db" --run "$sid" --json >"$w/up-diff.sq" 2>&1 || fail "leakdiff --db of the sampled run on SQLite"
cmp -s "$w/up-diff.sq" "$w/up-diff.ch" || fail "sampled: leakdiff --db differs between the engines"
expect_eq "sampled: leakdiff --db estimates" "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sample_interval"])' "$w/up-diff.ch")" 4096

finish
