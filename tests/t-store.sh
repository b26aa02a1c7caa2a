#!/bin/sh
# leaksnap store (and history) end to end, on dumps the hook wrote and on
# big generated ones, read back with the SQLite C API alone
# (tests/tools/storeq):
#  - a run of 4 dumps stored: one line each, the run's pid, exe, cmdline and
#    build ID from the dumps, its labels (hostile ones too) byte for byte,
#    every frame symbolized as 'leaksnap symbolize --json' says it;
#  - the same dumps again: 'already stored', not one row more;
#  - history of two builds: each build's row, grow()'s chain the suspect
#    (new in the first build, not in the second), --where, --by run --last;
#  - a reader who may not write the store (nobody, a root-owned 0444 copy)
#    reads it; one of schema version 2 too, as it is (not upgraded), the
#    same history; one of version 1 refused;
#  - the errors, one line each and exit 2: a file that is not a store, a
#    schema version newer than the tool's, a location that cannot be
#    written, a corrupt dump (its run not stored), bad labels;
#  - four store processes writing one new file at once: every row there;
#  - a store killed (kill -9) in the middle of its run: nothing of it
#    seen, and the store takes the dump whole afterwards.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
Q=$(cd "$B/tests" && pwd)/storeq
GEN=$(cd "$B/bench" && pwd)/gendump
command -v gcc >/dev/null 2>&1 || { echo "gcc is not installed"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 77; }

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}
# counts DB: the rows of every table, one line
counts() {
	for t in runs run_labels snapshots stacks frames symbols records ingests; do
		printf '%s=%s ' "$t" "$("$Q" "$1" "SELECT count(*) FROM $t")"
	done
}

cat >"$w/grow.c" <<'C'
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
char *keep[1024]; /* (not static: the stores are never dead) */
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
/* grow N: N numbered dumps, 4 KiB more before each and before the exit */
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
mkdir "$w/h"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/h/m" "$w/grow" 3 || { fail "grow 3"; finish; }
pid=$(ls "$w/h" | sed -n 's/^m\.\([0-9]*\)\.exit\.dump$/\1/p')
[ -n "$pid" ] || { fail "no exit dump"; finish; }
cd "$w/h" || exit 1
set -- m.$pid.0001.dump m.$pid.0002.dump m.$pid.0003.dump m.$pid.exit.dump

# 1. A run stored ---------------------------------------------------------------
# (the frames of the dumps: each new frame is said once, with the first dump)
nframes=$("$L" show --json m.$pid.exit.dump | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(len({f["pc"] for r in j["records"] for f in r["frames"]}))')
nstacks=$("$L" show --json m.$pid.exit.dump | python3 -c '
import json, sys
print(len(json.load(sys.stdin)["records"]))')
hostile=$(printf "x'); DROP TABLE runs; --\n\"two\"\tlines \377\376")
st=0
"$L" store --db "$w/s.db" --label build=4711 --label branch=main --label "test=$hostile" \
	--label device= "$@" >"$w/out" 2>"$w/err" || st=$?
expect_eq "store: status" "$st" 0
expect_eq "store: stderr" "$(cat "$w/err")" ""
expect_eq "store: stdout" "$(cat "$w/out")" "m.$pid.0001.dump: stored 2 records (2 stacks, $nframes new frames)
m.$pid.0002.dump: stored 2 records (2 stacks, 0 new frames)
m.$pid.0003.dump: stored 2 records (2 stacks, 0 new frames)
m.$pid.exit.dump: stored 2 records (2 stacks, 0 new frames)"
expect_eq "store: rows" "$(counts "$w/s.db")" \
	"runs=1 run_labels=4 snapshots=4 stacks=$nstacks frames=$nframes symbols=$("$Q" "$w/s.db" 'SELECT count(*) FROM symbols') records=8 ingests=1 "
bid=$("$L" show --json m.$pid.exit.dump | python3 -c '
import json, sys
j = json.load(sys.stdin)
print([m["value"].split()[0] for m in j["metadata"] if m["key"] == "build_id" and m["value"].split()[1] == sys.argv[1]][0])' "$w/grow")
expect_eq "store: the run" "$("$Q" "$w/s.db" 'SELECT pid, exe, cmdline, build_id FROM runs')" \
	"$pid|$w/grow|$w/grow 3|$bid"
expect_eq "store: labels" "$("$Q" "$w/s.db" 'SELECT name, value FROM run_labels ORDER BY name')" \
	"branch|main
build|4711
device|
test|x'); DROP TABLE runs; --\x0a\"two\"\x09lines \xff\xfe"
expect_eq "store: snapshots in capture order" \
	"$("$Q" "$w/s.db" 'SELECT source, seq, total_bytes, record_count FROM snapshots ORDER BY time_ns, seq')" \
	"m.$pid.0001.dump|1|4196|2
m.$pid.0002.dump|2|8292|2
m.$pid.0003.dump|3|12388|2
m.$pid.exit.dump|0|16484|2"
# every frame symbolized as symbolize says it (a symbol-table name without
# the offset symbolize shows after it)
"$L" symbolize --json m.$pid.exit.dump | python3 -c '
import json, re, sys
j = json.load(sys.stdin)
seen = {}
for r in j["records"]:
    depth = {}
    for f in r["frames"]:
        key = (f["module"], int(f["rel_pc"], 16))
        d = depth.get(key, 0)
        depth[key] = d + 1
        fn = re.sub(r"\+0x[0-9a-f]+$", "", f.get("function") or "")
        seen[(key, d)] = "%s|%d|%d|%s|%s|%d|%d|%d" % (key[0], key[1], d, fn, f.get("file") or "",
            f.get("line") or 0, f.get("column") or 0, 1 if f.get("inlined") else 0)
for k in sorted(seen):
    print(seen[k])' >"$w/sym.want"
"$Q" "$w/s.db" 'SELECT f.module, f.rel_pc, s.depth, s.function, s.file, s.line, s.col, s.inlined
	FROM frames f JOIN symbols s ON s.frame_id = f.frame_id' | sort >"$w/sym.got"
sort "$w/sym.want" >"$w/sym.want.sorted"
if ! cmp -s "$w/sym.want.sorted" "$w/sym.got"; then
	fail "stored symbols differ from leaksnap symbolize --json"
	diff "$w/sym.want.sorted" "$w/sym.got" | head -10
fi
grep -q '|grow|' "$w/sym.got" || fail "no frame of grow() stored"

# 2. The same dumps again: nothing added ------------------------------------------
before=$(counts "$w/s.db")
st=0
"$L" store --db "$w/s.db" --label build=other "$@" >"$w/out" 2>"$w/err" || st=$?
expect_eq "again: status" "$st" 0
expect_eq "again: stdout" "$(cat "$w/out")" "m.$pid.0001.dump: already stored
m.$pid.0002.dump: already stored
m.$pid.0003.dump: already stored
m.$pid.exit.dump: already stored"
expect_eq "again: rows" "$(counts "$w/s.db")" "$before"
expect_eq "again: labels kept" "$("$Q" "$w/s.db" "SELECT value FROM run_labels WHERE name = 'build'")" 4711

# 2b. History: a second build, its run growing less -----------------------------------
mkdir "$w/h2"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/h2/m" "$w/grow" 1 || fail "grow 1"
pid2=$(ls "$w/h2" | sed -n 's/^m\.\([0-9]*\)\.exit\.dump$/\1/p')
"$L" store --db "$w/s.db" --label build=4712 --label test=other "$w/h2/m.$pid2.0001.dump" \
	"$w/h2/m.$pid2.exit.dump" >/dev/null || fail "store of build 4712"
# the suspect's chain: grow()'s record, its first three functions outside
# the C library (a wrapper module, as leakdiff --by site has it)
chain=$("$L" symbolize --json m.$pid.exit.dump | python3 -c '
import json, re, sys
j = json.load(sys.stdin)
r = [r for r in j["records"] if r["size"] == 1024][0]
fr = [f for f in r["frames"] if not re.search(r"/(libc\.so|ld-linux)", f.get("module") or "")]
print(" < ".join(re.sub(r"\+0x[0-9a-f]+$", "", f["function"] or "?") for f in fr[:3]))')
case $chain in "grow < main < "*) ;; *) fail "grow's chain: $chain" ;; esac
st=0
"$L" history --db "$w/s.db" >"$w/hist" 2>"$w/hist.err" || st=$?
expect_eq "history: status" "$st" 0
expect_eq "history: stderr" "$(cat "$w/hist.err")" ""
expect_eq "history" "$(sed 's/ from [0-9TZ:.-]*:/ from T:/' "$w/hist")" \
	"build 4711: 1 run from T: memory 16484 bytes, growth +12288, definite 0
             +12288  $chain
build 4712: 1 run from T: memory 8292 bytes, growth +4096, definite 0
              +4096  $chain"
expect_eq "history --where test=other --json" \
	"$("$L" history --db "$w/s.db" --where test=other --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["by"], [(r["key"], r["runs"], r["memory"], r["growth"], r["definite"],
	[(" < ".join(x["chain"]), x["growth"], x["new"]) for x in r["suspects"]], r["gone"]) for r in j["rows"]])')" \
	"build [('4712', 1, 8292, 4096, 0, [('$chain', 4096, False)], [])]"
expect_eq "history --by run --last 1" "$("$L" history --db "$w/s.db" --by run --last 1 | grep -c '^run ')" 1
st=0
"$L" history --db "$w/none.db" >"$w/hist" 2>"$w/hist.err" || st=$?
expect_eq "history of no store: status" "$st" 2
expect_eq "history of no store" "$(cat "$w/hist.err")" "leaksnap: $w/none.db: No such file or directory"
[ -e "$w/none.db" ] && fail "history made a store"

# 2c. A reader who may not write the store still reads it (history,
# leakdiff --db): a copy owned by root, read by nobody
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	mkdir "$w/ro" && cp "$w/s.db" "$w/ro/s.db" && chmod 755 "$w" "$w/ro" && chmod 444 "$w/ro/s.db"
	"$L" history --db "$w/ro/s.db" >"$w/ro.want" || fail "history as root"
	st=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$L" history --db "$w/ro/s.db" \
		>"$w/ro.out" 2>"$w/ro.err" || st=$?
	expect_eq "history, read-only store: status" "$st" 0
	expect_eq "history, read-only store: stderr" "$(cat "$w/ro.err")" ""
	cmp -s "$w/ro.want" "$w/ro.out" || fail "history, read-only store: not the same table"
	ls "$w/ro" >"$w/ro.ls"
	expect_eq "history, read-only store: no file made" "$(cat "$w/ro.ls")" "s.db"
	# a store of schema version 2 (the columns 3 added dropped): read as
	# it is, the same table as its upgraded copy's, left at version 2; one
	# of version 1 (no growth table either) refused
	cp "$w/s.db" "$w/v2.db"
	"$Q" --write "$w/v2.db" "ALTER TABLE snapshots DROP COLUMN sample_interval;
		ALTER TABLE snapshots DROP COLUMN estimated_bytes;
		ALTER TABLE snapshots DROP COLUMN estimated_unreachable_bytes;
		UPDATE store_info SET value = '2' WHERE name = 'schema_version';
		PRAGMA user_version = 2" || fail "cannot make a store of version 2"
	cp "$w/v2.db" "$w/ro/v2.db" && chmod 444 "$w/ro/v2.db"
	st=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$L" history --db "$w/ro/v2.db" \
		>"$w/ro2.out" 2>"$w/ro2.err" || st=$?
	expect_eq "history, read-only store of version 2: status" "$st" 0
	expect_eq "history, read-only store of version 2: stderr" "$(cat "$w/ro2.err")" ""
	cmp -s "$w/ro.want" "$w/ro2.out" || fail "history, read-only store of version 2: not the same table"
	for a in "--json" "--by run --json"; do
		# (word splitting wanted: the options)
		"$L" history --db "$w/ro/s.db" $a >"$w/ro.want" || fail "history $a as root"
		setpriv --reuid=65534 --regid=65534 --clear-groups "$L" history --db "$w/ro/v2.db" \
			$a >"$w/ro2.out" 2>&1 || fail "history $a, read-only store of version 2: $(cat "$w/ro2.out")"
		cmp -s "$w/ro.want" "$w/ro2.out" || fail "history $a, read-only store of version 2: not the same"
	done
	expect_eq "history, read-only store of version 2: left as it was" \
		"$("$Q" "$w/ro/v2.db" "SELECT value FROM store_info WHERE name = 'schema_version'") $("$Q" "$w/ro/v2.db" "SELECT count(*) FROM pragma_table_info('snapshots') WHERE name = 'estimated_bytes'")" \
		"2 0"
	cp "$w/v2.db" "$w/v1.db"
	"$Q" --write "$w/v1.db" "DROP TABLE growth;
		UPDATE store_info SET value = '1' WHERE name = 'schema_version';
		PRAGMA user_version = 1" || fail "cannot make a store of version 1"
	cp "$w/v1.db" "$w/ro/v1.db" && chmod 444 "$w/ro/v1.db"
	st=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$L" history --db "$w/ro/v1.db" \
		>"$w/ro1.out" 2>"$w/ro1.err" || st=$?
	expect_eq "history, read-only store of version 1: status" "$st" 2
	expect_eq "history, read-only store of version 1: stderr" "$(cat "$w/ro1.err")" \
		"leaksnap: $w/ro/v1.db: schema version 1 is older than this leaksnap's (3), and only one who may write the store can upgrade it ('leaksnap store' upgrades it)"
	expect_eq "history, read-only store of version 1: stdout" "$(cat "$w/ro1.out")" ""
	# (whoever may write upgrades it as it reads: the same table)
	"$L" history --db "$w/v2.db" >"$w/v2.out" 2>&1 || fail "history, store of version 2: $(cat "$w/v2.out")"
	"$L" history --db "$w/ro/s.db" >"$w/ro.want"
	cmp -s "$w/ro.want" "$w/v2.out" || fail "history, store of version 2 upgraded: not the same table"
	expect_eq "history, store of version 2: upgraded" \
		"$("$Q" "$w/v2.db" "SELECT value FROM store_info WHERE name = 'schema_version'")" 3
else
	echo "not root: the read-only reader is not tested"
fi

# 3. Errors -----------------------------------------------------------------------------
# expect_error WHAT STDERR ARGS...: exit 2, that one line, nothing on stdout
expect_error() {
	_what=$1 _want=$2
	shift 2
	_st=0
	"$L" store "$@" >"$w/eout" 2>"$w/eerr" || _st=$?
	expect_eq "$_what: status" "$_st" 2
	expect_eq "$_what: stderr" "$(cat "$w/eerr")" "$_want"
	expect_eq "$_what: stdout" "$(cat "$w/eout")" ""
}
printf 'just some text, long enough to be read as a file header by SQLite.\n' >"$w/text.db"
expect_error "not a store" "leaksnap: $w/text.db: not a leaksnap store (not a SQLite database)" \
	--db "$w/text.db" m.$pid.0001.dump
cp "$w/s.db" "$w/newer.db"
"$Q" --write "$w/newer.db" "UPDATE store_info SET value = '4' WHERE name = 'schema_version'" ||
	fail "cannot make a newer store"
expect_error "newer schema" \
	"leaksnap: $w/newer.db: schema version 4 is newer than this leaksnap's (3): a newer leaksnap wrote it" \
	--db "$w/newer.db" m.$pid.0001.dump
if [ -d /sys/kernel ]; then # (sysfs: no file is made there, even by root)
	expect_error "read-only location" \
		"leaksnap: /sys/kernel/leaksnap.db: cannot create the store: Permission denied" \
		--db /sys/kernel/leaksnap.db m.$pid.0001.dump
fi
expect_error "no such directory" \
	"leaksnap: $w/none/s.db: cannot create the store: No such file or directory" \
	--db "$w/none/s.db" m.$pid.0001.dump
expect_error "a directory" "leaksnap: $w: is a directory, not a store" --db "$w" m.$pid.0001.dump
if [ "$(id -u)" != 0 ]; then
	mkdir "$w/ro" && chmod 555 "$w/ro"
	expect_error "read-only directory" \
		"leaksnap: $w/ro/s.db: cannot create the store: Permission denied" \
		--db "$w/ro/s.db" m.$pid.0001.dump
	cp "$w/s.db" "$w/ro.db" && chmod 444 "$w/ro.db"
	expect_error "read-only file" "leaksnap: $w/ro.db: cannot write the store: Permission denied" \
		--db "$w/ro.db" m.$pid.0001.dump
fi
head -c 200 m.$pid.0002.dump >"$w/cut.dump"
"$L" show "$w/cut.dump" >/dev/null 2>"$w/cut.show"
expect_error "corrupt dump" "$(cat "$w/cut.show")" --db "$w/c.db" m.$pid.0001.dump "$w/cut.dump"
expect_eq "corrupt dump: its run not stored" "$(counts "$w/c.db")" \
	"runs=0 run_labels=0 snapshots=0 stacks=0 frames=0 symbols=0 records=0 ingests=0 "
expect_error "label without =" \
	"leaksnap: store: --label needs KEY=VALUE (see 'leaksnap store --help')" \
	--db "$w/c.db" --label build m.$pid.0001.dump
expect_error "label twice" \
	"leaksnap: store: --label build given twice (see 'leaksnap store --help')" \
	--db "$w/c.db" --label build=1 --label build=2 m.$pid.0001.dump
expect_error "label key" \
	"leaksnap: store: --label: a KEY is letters, digits, '_', '-' and '.' (see 'leaksnap store --help')" \
	--db "$w/c.db" --label "a b=1" m.$pid.0001.dump
expect_error "no --db" "leaksnap: store: missing --db DB (see 'leaksnap store --help')" m.$pid.0001.dump
expect_error "no dump" "leaksnap: store: missing DUMP operand (see 'leaksnap store --help')" --db "$w/c.db"

# 4. Four writers at once ------------------------------------------------------------------
# Each stores a generated dump of its own (40,000 records) and one of the
# hook's, into a file none has made yet: each its two runs in two writes.
cd "$w" || exit 1
for k in 1 2 3 4; do
	"$GEN" --records 40000 --seed $k "$w/g$k.dump" 2>"$w/gen.err" || fail "gendump $k"
done
pids=""
for k in 1 2 3 4; do
	case $k in 4) n=exit ;; *) n=000$k ;; esac
	"$L" store --db "$w/four.db" --label "writer=$k" g$k.dump h/m.$pid.$n.dump \
		>"$w/four$k.out" 2>"$w/four$k.err" &
	pids="$pids $!"
done
k=0
for p in $pids; do
	k=$((k + 1))
	case $k in 4) n=exit ;; *) n=000$k ;; esac
	st=0
	wait "$p" || st=$?
	expect_eq "writer $k: status" "$st" 0
	expect_eq "writer $k: stderr" "$(cat "$w/four$k.err")" ""
	expect_eq "writer $k: stdout" "$(sed 's/ (.*//' "$w/four$k.out")" "g$k.dump: stored 40000 records
h/m.$pid.$n.dump: stored 2 records"
done
expect_eq "four writers: rows" \
	"$("$Q" "$w/four.db" 'SELECT (SELECT count(*) FROM snapshots), (SELECT count(*) FROM records), (SELECT count(*) FROM ingests), (SELECT count(DISTINCT run_id) FROM snapshots), (SELECT count(*) FROM runs)')" \
	"8|$((4 * 40000 + 4 * 2))|8|$("$Q" "$w/four.db" 'SELECT count(*) FROM runs')|$("$Q" "$w/four.db" 'SELECT count(DISTINCT run_id) FROM snapshots')"
expect_eq "four writers: the hook's run" \
	"$("$Q" "$w/four.db" "SELECT count(*) FROM snapshots WHERE source LIKE 'h/%'")|$("$Q" "$w/four.db" "SELECT count(DISTINCT run_id) FROM snapshots WHERE source LIKE 'h/%'")" "4|1"
expect_eq "four writers: every record's stack" \
	"$("$Q" "$w/four.db" 'SELECT count(*) FROM records r LEFT JOIN stacks s ON s.stack_id = r.stack_id WHERE s.stack_id IS NULL')" 0
expect_eq "four writers: each snapshot's records" \
	"$("$Q" "$w/four.db" 'SELECT count(*) FROM snapshots s WHERE record_count != (SELECT count(*) FROM records r WHERE r.snapshot_id = s.snapshot_id)')" 0
expect_eq "four writers: the same as one writer" \
	"$(for k in 1 2 3 4; do "$L" store --db "$w/one.db" g$k.dump >/dev/null; done; "$Q" "$w/one.db" 'SELECT count(*), sum(size * count) FROM records') $("$Q" "$w/one.db" 'SELECT count(*) FROM stacks')" \
	"$("$Q" "$w/four.db" "SELECT count(*), sum(size * count) FROM records WHERE snapshot_id IN (SELECT snapshot_id FROM snapshots WHERE source LIKE 'g%')") $("$Q" "$w/four.db" "SELECT count(DISTINCT stack_id) FROM records WHERE snapshot_id IN (SELECT snapshot_id FROM snapshots WHERE source LIKE 'g%')")"

# 5. Killed in the middle of its run ------------------------------------------------------
# A store of 300,000 records, killed once it holds the write lock (its
# run's transaction begun) and has written for a while: nothing of it is
# seen, and the next store takes the dump whole.
"$GEN" --records 300000 --seed 9 "$w/big.dump" 2>"$w/gen.err" || fail "gendump big"
"$L" store --db "$w/kill.db" h/m.$pid.0001.dump >/dev/null || fail "kill.db: first store"
before=$(counts "$w/kill.db")
"$L" store --db "$w/kill.db" big.dump >"$w/kill.out" 2>&1 &
kp=$!
n=0
while [ $n -lt 400 ]; do
	st=0
	"$Q" --busy "$w/kill.db" || st=$?
	[ $st = 3 ] && break
	n=$((n + 1))
	sleep 0.05
done
[ $n -lt 400 ] || fail "the store never held the write lock"
sleep 0.3
kill -9 $kp 2>/dev/null || fail "the store ended before it was killed: make its dump bigger"
wait $kp 2>/dev/null
expect_eq "killed: its output" "$(cat "$w/kill.out")" ""
expect_eq "killed: rows as before" "$(counts "$w/kill.db")" "$before"
expect_eq "killed: nothing half written" \
	"$("$Q" "$w/kill.db" "SELECT count(*) FROM snapshots WHERE source = 'big.dump'")" 0
st=0
"$L" store --db "$w/kill.db" big.dump >"$w/kill2.out" 2>&1 || st=$?
expect_eq "after the kill: status" "$st" 0
expect_eq "after the kill: stdout" "$(sed 's/ (.*//' "$w/kill2.out")" "big.dump: stored 300000 records"
expect_eq "after the kill: records" \
	"$("$Q" "$w/kill.db" "SELECT count(*) FROM records WHERE snapshot_id = (SELECT snapshot_id FROM snapshots WHERE source = 'big.dump')")" 300000

finish
