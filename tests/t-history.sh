#!/bin/sh
# leaksnap history end to end on mkfixture's hist-*.dump runs (three builds,
# the second of two runs, tests "alpha" and "beta"), outputs compared with
# the golden files in tests/history/:
#  - --fail-on-regression: one row (no build before it) is no regression;
#    the newest build's growth and definite bytes each compared with the
#    build before's, one line each on stderr and exit 1 only when one
#    exceeds it by more than BYTES (not when equal); a smaller one passes;
#    a bad BYTES and a DB that is not a store: one line, exit 2.
set -u
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
L=$(cd "$B/bin" && pwd)/leaksnap
G=$top/tests/history
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-history.XXXXXX")
trap 'rm -rf "$w"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; }
# golden NAME FILE: FILE is tests/history/NAME (UPDATE=1 rewrites it)
golden() {
	[ "${UPDATE:-}" = 1 ] && cp "$2" "$G/$1"
	cmp -s "$G/$1" "$2" || { fail "$1 differs"; diff -u "$G/$1" "$2" | head -20; }
}
# run NAME WANT-STATUS ARGS...: leaksnap ARGS, stdout and stderr to
# $w/NAME.out and $w/NAME.err, the exit status checked
run() {
	_n=$1 _want=$2
	shift 2
	_st=0
	"$L" "$@" >"$w/$_n.out" 2>"$w/$_n.err" || _st=$?
	expect_eq "$_n: exit status" "$_st" "$_want"
}

"$B/tests/mkfixture" "$w/fx" || { echo "FAIL: mkfixture"; exit 1; }
cd "$w/fx" || exit 1
store() { "$L" store --db "$w/h.db" "$@" >/dev/null || fail "store $*"; }

# 1. --fail-on-regression ------------------------------------------------------------
store --label build=1 --label test=alpha hist-1-1.dump hist-1-2.dump
run one 0 history --db "$w/h.db" --fail-on-regression 0
expect_eq "one row: stderr" "$(cat "$w/one.err")" ""
store --label build=2 --label test=alpha hist-2a-1.dump hist-2a-2.dump
store --label build=2 --label test=beta hist-2b-1.dump hist-2b-2.dump
# build 2 against build 1: growth +3216 against +1320 (1896 more), definite
# 704 against 160 (544 more)
run gate-both 1 history --db "$w/h.db" --fail-on-regression 500
golden gate-both.out "$w/gate-both.out"
golden gate-both.err "$w/gate-both.err"
"$L" history --db "$w/h.db" >"$w/plain.out" || fail "history"
cmp -s "$w/plain.out" "$w/gate-both.out" || fail "--fail-on-regression changed the table"
run gate-growth 1 history --db "$w/h.db" --fail-on-regression 1895
golden gate-growth.err "$w/gate-growth.err"
run gate-equal 0 history --db "$w/h.db" --fail-on-regression 1896
expect_eq "gate at the limit: stderr" "$(cat "$w/gate-equal.err")" ""
run gate-json 1 history --db "$w/h.db" --json --fail-on-regression 1K
"$L" history --db "$w/h.db" --json >"$w/plain.json" || fail "history --json"
cmp -s "$w/plain.json" "$w/gate-json.out" || fail "--fail-on-regression changed the JSON"
golden gate-json.err "$w/gate-json.err"
# --where chooses the runs: alpha's build 2 (growth +1216: no more than
# build 1's +1320; definite 704) after build 1 (160): the definite line only
run gate-where 1 history --db "$w/h.db" --where test=alpha --fail-on-regression 0
golden gate-where.err "$w/gate-where.err"
store --label build=3 --label test=alpha hist-3-1.dump hist-3-2.dump
run gate-less 0 history --db "$w/h.db" --fail-on-regression 0
expect_eq "build 3 less than build 2: stderr" "$(cat "$w/gate-less.err")" ""
# --last 1: no build before it, whatever the store holds
run gate-last 0 history --db "$w/h.db" --by run --last 1 --fail-on-regression 0
expect_eq "--last 1: stderr" "$(cat "$w/gate-last.err")" ""
run gate-run 1 history --db "$w/h.db" --by run --fail-on-regression 0
golden gate-run.err "$w/gate-run.err"
run gate-bad 2 history --db "$w/h.db" --fail-on-regression 12x
expect_eq "bad BYTES" "$(cat "$w/gate-bad.err")" \
	"leaksnap: history: --fail-on-regression needs a byte count (e.g. 1048576 or 1M), not '12x' (see 'leaksnap history --help')"
printf 'not a store at all, just text long enough for SQLite to read a header.\n' >"$w/text.db"
run gate-notstore 2 history --db "$w/text.db" --fail-on-regression 0
expect_eq "not a store" "$(cat "$w/gate-notstore.err")" \
	"leaksnap: $w/text.db: not a leaksnap store (not a SQLite database)"

[ $fails = 0 ] || { echo "$fails failed"; exit 1; }
echo ok
