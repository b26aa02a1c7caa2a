#!/bin/sh
# leaksnap history end to end on mkfixture's hist-*.dump runs (three builds,
# the second of two runs, tests "alpha" and "beta"), outputs compared with
# the golden files in tests/history/:
#  - --fail-on-regression: one row (no build before it) is no regression;
#    the newest build's growth and definite bytes each compared with the
#    build before's, one line each on stderr and exit 1 only when one
#    exceeds it by more than BYTES (not when equal); a smaller one passes;
#    a bad BYTES and a DB that is not a store: one line, exit 2;
#  - the table and --json --series (golden);
#  - sampled runs (hists-*.dump): estimates in the table (marked) and in
#    --json (sample_interval, estimated_*), a build of two intervals said,
#    --fail-on-regression gating on the estimates (golden);
#  - --html: the page embeds the --json --series test document, each
#    suspect with its whole stack; self-contained (tests/tools/pagecheck.py);
#    stdout unchanged ('-': the page instead); an earlier page replaced, a
#    file of the user's, a symlink and --html - with --json refused (one
#    line, exit 2, nothing changed);
#  - in a real browser (tests/tools/browser.py; skipped without one), a
#    store of fixtures and of tests/report/grow.c run under the hook with a
#    function named with markup, a build and a test label named with markup:
#    one line per test value, points per build, the metric buttons, a click
#    on a build's label and on a point opening its suspects with their whole
#    symbolized stacks (function, file:line, module), no script run.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
G=$top/tests/history
PC="python3 $top/tests/tools/pagecheck.py"
BROWSER="python3 $top/tests/tools/browser.py --timeout 60"
json() {
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
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

"$B/tests/mkfixture" "$w/fx" || { fail "mkfixture"; finish; }
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
# --last 1: the newest row is still compared with the one before it
run gate-last 1 history --db "$w/h.db" --by run --last 1 --fail-on-regression 0
expect_eq "--last 1: stdout rows" "$(grep -c '^run ' "$w/gate-last.out")" 1
expect_eq "--last 1: stderr" "$(cat "$w/gate-last.err")" "$(cat "$w/gate-run.err" 2>/dev/null ||
	"$L" history --db "$w/h.db" --by run --fail-on-regression 0 2>&1 >/dev/null)"
# a gate that matches no run compares nothing: an error, not a pass
run gate-none 2 history --db "$w/h.db" --where test=nosuch --fail-on-regression 0
expect_eq "no run: stderr" "$(cat "$w/gate-none.err")" \
	"leaksnap: $w/h.db: no run matches the --where labels to compare for --fail-on-regression"
expect_eq "no run: stdout" "$(cat "$w/gate-none.out")" ""
run gate-run 1 history --db "$w/h.db" --by run --fail-on-regression 0
golden gate-run.err "$w/gate-run.err"
run gate-bad 2 history --db "$w/h.db" --fail-on-regression 12x
expect_eq "bad BYTES" "$(cat "$w/gate-bad.err")" \
	"leaksnap: history: --fail-on-regression needs a byte count (e.g. 1048576 or 1M), not '12x' (see 'leaksnap history --help')"
printf 'not a store at all, just text long enough for SQLite to read a header.\n' >"$w/text.db"
run gate-notstore 2 history --db "$w/text.db" --fail-on-regression 0
expect_eq "not a store" "$(cat "$w/gate-notstore.err")" \
	"leaksnap: $w/text.db: not a leaksnap store (not a SQLite database)"

# 2. The table and --json --series -------------------------------------------------------
run table 0 history --db "$w/h.db"
golden table.out "$w/table.out"
run series 0 history --db "$w/h.db" --json --series test
python3 -m json.tool --sort-keys "$w/series.out" >"$w/series.json" || fail "--json --series: not JSON"
golden series.json "$w/series.json"
# without --series: no points, the rest the same
run noseries 0 history --db "$w/h.db" --json
expect_eq "--json without --series" "$(python3 -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
a.pop("series")
for r in a["rows"]:
    r.pop("points")
print(a == b)' "$w/series.out" "$w/noseries.out")" True

# 2b. Sampled runs (mkfixture's hists-*.dump, sample_interval=4096; build
# 2's test beta every 65536) --------------------------------------------------------------
# (in a UTF-8 locale: the estimates marked with U+2248)
srun() {
	_n=$1 _want=$2
	shift 2
	_st=0
	LC_ALL=C.UTF-8 "$L" "$@" >"$w/$_n.out" 2>"$w/$_n.err" || _st=$?
	expect_eq "$_n: exit status" "$_st" "$_want"
}
"$L" store --db "$w/s.db" --label build=1 --label test=alpha hists-1-1.dump hists-1-2.dump >/dev/null &&
	"$L" store --db "$w/s.db" --label build=2 --label test=alpha hists-2a-1.dump hists-2a-2.dump >/dev/null ||
	fail "store the sampled fixtures"
# the gate on the estimates: build 2's growth ~+139873 against ~+45736, its
# definite ~86368 against ~20560 -- where the sampled counts alone (+1216
# against +1320) would pass
srun sgate 1 history --db "$w/s.db" --fail-on-regression 10000
golden sampled-gate.err "$w/sgate.err"
srun sgate-pass 0 history --db "$w/s.db" --fail-on-regression 100000
expect_eq "sampled gate, above the estimates: stderr" "$(cat "$w/sgate-pass.err")" ""
"$L" store --db "$w/s.db" --label build=2 --label test=beta hists-2b-1.dump hists-2b-2.dump >/dev/null &&
	"$L" store --db "$w/s.db" --label build=3 --label test=alpha hists-3-1.dump hists-3-2.dump >/dev/null ||
	fail "store the sampled fixtures"
# the table: every figure an estimate, marked, the interval said; build 2
# of two intervals said so
srun sampled 0 history --db "$w/s.db"
golden sampled.out "$w/sampled.out"
srun sampled-json 0 history --db "$w/s.db" --json --series test
python3 -m json.tool --sort-keys "$w/sampled-json.out" >"$w/sampled.json" || fail "sampled --json: not JSON"
golden sampled.json "$w/sampled.json"
expect_eq "sampled --json: the intervals" "$(json "$w/sampled-json.out" '[(r["sample_interval"], r.get("sample_intervals"), r["estimated_growth"] == r["growth"], [s["estimated_growth"] for s in r["suspects"]]) for r in j["rows"]]')" \
	"[(4096, None, True, [41120, 4617]), (None, [4096, 65536], True, [132075, 123361, 16512]), (4096, None, True, [82241, 4120])]"
# without sampling nothing of this (the store of unsampled runs, above)
expect_eq "unsampled --json: no sampling keys" "$(json "$w/noseries.out" '[k for r in j["rows"] for k in r if "sample" in k or "estimated" in k]')" "[]"
# a locale without U+2248: '~'
LC_ALL=C "$L" history --db "$w/s.db" --where build=3 >"$w/sampled-c.out"
expect_eq "sampled, C locale" "$(head -1 "$w/sampled-c.out")" \
	"build 3: 1 run from 2025-11-21T10:25:53.000000000Z: memory ~156825 bytes, growth ~+86361, definite ~41120 (sampled every 4096 bytes: estimates)"
# the page of them: the --json --series test document (its estimates and
# intervals) embedded; drawn in a browser below
run spage 0 history --db "$w/s.db" --html "$w/s.html"
expect_eq "sampled page: static checks" "$($PC static "$w/s.html")" ok
$PC data "$w/s.html" leaksnap-data >"$w/s-embedded.json" || fail "sampled page: no leaksnap-data"
expect_eq "sampled page: the --json document" "$(python3 -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for r in a["rows"]:
    for x in r["suspects"] + r["gone"]:
        x.pop("frames")
print(a == b)' "$w/s-embedded.json" "$w/sampled-json.out")" True

# 3. --html ------------------------------------------------------------------------------
# the --json --series test document, each suspect with its whole stack
# (frames, leakdiff's frame objects without the symbol file)
run page 0 history --db "$w/h.db" --html "$w/h.html"
golden table.out "$w/page.out"
expect_eq "--html: stderr" "$(cat "$w/page.err")" ""
$PC data "$w/h.html" leaksnap-data >"$w/embedded.json" || fail "no leaksnap-data"
expect_eq "embedded document" "$(python3 -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
frames = [x.pop("frames") for r in b["rows"] for x in r["suspects"] + r["gone"]]
print(a == b, sorted({len(f) for f in frames}))' "$w/series.out" "$w/embedded.json")" "True [1, 2]"
expect_eq "embedded frames" "$(json "$w/embedded.json" '[(f["module"], f["build_id"], f["rel_pc"], f["pc"], f["function"]) for f in j["rows"][1]["suspects"][1]["frames"]]')" \
	"[('/system/lib64/libfoo.so', '0123abcd', '0x1100', None, None), ('/system/lib64/libfoo.so', '0123abcd', '0x1200', None, None)]"
expect_eq "static checks" "$($PC static "$w/h.html")" ok
run page-series 0 history --db "$w/h.db" --series build --html "$w/series.html"
$PC data "$w/series.html" leaksnap-data >"$w/series-embedded.json"
expect_eq "--series build" "$(json "$w/series-embedded.json" '(j["series"], [[p["value"] for p in r["points"]] for r in j["rows"]])')" \
	"('build', [['1'], ['2'], ['3']])"
# '-': the page on standard output, instead of the table
run page-stdout 0 history --db "$w/h.db" --html -
cmp -s "$w/page-stdout.out" "$w/h.html" || fail "--html - differs from --html FILE"
# publishing: as leakdiff --html
chmod 640 "$w/h.html"
run again 0 history --db "$w/h.db" --where test=alpha --html "$w/h.html"
expect_eq "an earlier page replaced, its mode kept" "$(stat -c %a "$w/h.html") $($PC data "$w/h.html" leaksnap-data | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["rows"][1]["points"]))')" "640 1"
echo "my notes" >"$w/mine.html"
run mine 2 history --db "$w/h.db" --html "$w/mine.html"
expect_eq "a file of the user's" "$(cat "$w/mine.err")" \
	"leaksnap: $w/mine.html: already exists and is not a report leaksnap wrote: not replaced (leaksnap never overwrites a file of yours)"
expect_eq "a file of the user's: stdout" "$(cat "$w/mine.out")" ""
expect_eq "a file of the user's: kept" "$(cat "$w/mine.html")" "my notes"
ln -s "$w/h.html" "$w/link.html"
run link 2 history --db "$w/h.db" --html "$w/link.html"
expect_eq "a symlink" "$(cat "$w/link.err")" \
	"leaksnap: $w/link.html: is a symbolic link: not replaced (leaksnap never writes through one)"
run stdout-json 2 history --db "$w/h.db" --json --html -
expect_eq "--html - --json" "$(cat "$w/stdout-json.err")" \
	"leaksnap: history: --html - writes the page on standard output: not with --json (see 'leaksnap history --help')"
run db-page 2 history --db "$w/h.db" --html "$w/h.db"
expect_eq "the store as the page" "$(cat "$w/db-page.err")" \
	"leaksnap: $w/h.db: already exists and is not a report leaksnap wrote: not replaced (leaksnap never overwrites a file of yours)"
ls "$w" | grep -q '\.tmp\|XXXX' && fail "a temporary file left: $(ls "$w")"

# 4. In a real browser: a store with names and labels made of markup ------------------------
HOSTILE_FN='</script><img src=x onerror=alert(1)>'
HOSTILE_BUILD='</script><img src=x onerror=alert(5)>'
HOSTILE_TEST='<img src=x onerror=alert(6)>"&'"'"
have_hook=0
if command -v gcc >/dev/null 2>&1 && command -v objcopy >/dev/null 2>&1; then
	gcc -O1 -c -o "$w/hostile.o" "$top/tests/report/hostile.c" &&
		objcopy --redefine-sym "hostile_leak=$HOSTILE_FN" "$w/hostile.o" &&
		gcc -g -O1 -o "$w/grow" "$top/tests/report/grow.c" "$w/hostile.o" -ldl &&
		LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/g" "$w/grow" && have_hook=1
	[ $have_hook = 1 ] || fail "tests/report/grow.c under the hook"
fi
if [ $have_hook = 1 ]; then
	"$L" store --db "$w/b.db" --label build=1 --label test=alpha hist-1-1.dump hist-1-2.dump \
		>/dev/null || fail "store hist-1"
	"$L" store --db "$w/b.db" --label "build=$HOSTILE_BUILD" --label "test=$HOSTILE_TEST" \
		"$w"/g.*.0001.dump "$w"/g.*.0002.dump "$w"/g.*.0003.dump >/dev/null || fail "store grow"
	run hostile 0 history --db "$w/b.db" --html "$w/b.html"
	expect_eq "hostile page: static checks" "$($PC static "$w/b.html")" ok
	$PC data "$w/b.html" leaksnap-data >"$w/b.json"
	expect_eq "hostile labels embedded" "$(json "$w/b.json" '(j["rows"][1]["key"], j["rows"][1]["points"][0]["value"])')" \
		"('$HOSTILE_BUILD', '$(printf '%s' "$HOSTILE_TEST" | sed "s/'/\\\\'/")')"
	$BROWSER "$w/b.html" "$top/tests/report/history-steps.js" >"$w/dom.json" 2>"$w/browser.err"
	st=$?
	if [ $st = 3 ]; then
		[ "$fails" = 0 ] || finish
		echo "no browser: the page was not loaded in one (apt-get install chromium)"
		exit 77
	fi
	[ $st = 0 ] || fail "browser, history page: $(cat "$w/browser.err")"
	dom() { json "$w/dom.json" "$1"; }
	expect_eq "page drawn" "$(dom '(j["ready"], j["images"], j["title"], j["metric"])')" \
		"('1', 0, 'leaksnap history: 2 builds', 'memory')"
	# one line per test value (sorted), the markup as text; one point per
	# build with that test
	line() { # METRIC: each test value's points, as the page should draw them
		json "$w/b.json" '[[p["'"$1"'"] for r in j["rows"] for p in r["points"] if p["value"] == v] for v in sorted(p["value"] for r in j["rows"] for p in r["points"])]'
	}
	expect_eq "lines" "$(dom '(j["legend"], j["memory"])')" \
		"($(json "$w/b.json" 'sorted(p["value"] for r in j["rows"] for p in r["points"])'), $(line memory))"
	expect_eq "x axis: the builds" "$(dom '(j["x"], j["axisTitle"])')" "(['1', '$HOSTILE_BUILD'], 'build')"
	expect_eq "y axis in bytes" "$(dom 'all(t.endswith(("B", "KiB", "MiB")) for t in j["yLabels"]) and len(j["yLabels"]) > 2')" True
	expect_eq "table rows" "$(dom 'j["rows"]')" "['1', '$HOSTILE_BUILD']"
	# the click on the hostile build: its suspects (new), then build 1's
	# (gone), each with its whole stack: the three that grew most of
	# grow.c's, symbolized at ingest (the hostile function's is the fourth)
	expect_eq "build click" "$(dom '(j["open"], j["marks"])')" \
		"(['1'], ['new', 'new', 'new', 'gone', 'gone'])"
	expect_eq "suspects" "$(dom '[h.split(" ")[1] for h in j["heads"]]')" \
		"$(json "$w/b.json" '[s["chain"][0] for s in j["rows"][1]["suspects"] + j["rows"][1]["gone"]]')"
	expect_eq "stacks: functions" "$(dom '[f[:2] for f in j["stackFns"]]')" \
		"[['je_wrap', 'main'], ['leak_steady', 'main'], ['leak_hostile_file', 'main'], ['??'], ['??', '??']]"
	expect_eq "stacks: files" "$(dom '[s[0].split("/")[-1] for s in j["stackSrc"][:3]]')" \
		"$(json "$w/b.json" '[s["frames"][0]["file"].split("/")[-1] + ":" + str(s["frames"][0]["line"]) + ":" + str(s["frames"][0]["column"]) for s in j["rows"][1]["suspects"]]')"
	case $(dom 'j["stackSrc"][2][0]') in
	*"/</script><img src=x onerror=alert(3)>.c:"*) ;;
	*) fail "the hostile source file as text: $(dom 'j["stackSrc"][2][0]')" ;;
	esac
	expect_eq "stacks: modules" "$(dom '[s[0].split("+0x")[0] for s in j["stackPc"]]')" \
		"['$w/grow', '$w/grow', '$w/grow', '/system/lib64/libfoo.so', '/system/lib64/libfoo.so']"
	expect_eq "the inlined wrapper" "$(dom 'j["inlined"]')" "['leak_inline']"
	expect_eq "point click" "$(dom 'j["openAfterPoint"]')" "['0', '1']"
	expect_eq "growth" "$(dom '(j["growthMetric"], j["growth"])')" "(['growth', 'Growth'], $(line growth))"
	expect_eq "definite" "$(dom 'j["definite"]')" "$(line definite)"
fi

# the sampled runs' page in the browser: the note, the figures marked, a
# build of two intervals said so
$BROWSER "$w/s.html" "$top/tests/report/history-sampled-steps.js" >"$w/sdom.json" 2>"$w/browser.err" ||
	fail "browser, sampled history page: $(cat "$w/browser.err")"
expect_eq "sampled page: drawn" "$(json "$w/sdom.json" '(j["ready"], j["images"])')" "('1', 0)"
expect_eq "sampled page: the note" "$(json "$w/sdom.json" 'j["note"]')" \
	"Values marked ≈ are estimated: 3 of the 3 rows have runs recorded with sampling (a sampled block of size s stands for s / (1 − e^(−s/interval)) bytes); some of them at several intervals, each run's estimates summed."
expect_eq "sampled page: the figures marked" "$(json "$w/sdom.json" '[c[0][0] + c[1][0] + c[2][0] for c in j["cells"]]')" \
	"['≈≈≈', '≈≈≈', '≈≈≈']"
expect_eq "sampled page: a build of two intervals" "$(json "$w/sdom.json" '(j["detail"][0], j["heads"])')" \
	"('build 2: 2 runs, memory ≈1,457,337 bytes, growth ≈+271,948, definite ≈86,368 (mixed sampling: 4,096, 65,536)', ['≈+129 KiB', '≈+120 KiB', '≈+16.1 KiB'])"

finish
