#!/bin/sh
# The HTML reports (leakdiff --html, symbolize --html) end to end, on dumps of
# tests/report/grow.c run under the hook: growth of known size per snapshot,
# a function named '</script><img src=x onerror=alert(1)>' (objcopy), a source
# file named with markup (#line), a program file named with markup, and an
# inlined allocation wrapper above a site.
#  - the page embeds exactly the --json document and the flame data (the
#    stacks that grew most, their exact bytes, --html-stacks);
#  - the page is self-contained: parsed as HTML it has only our elements, a
#    CSP naming the hashes of its script and style, no reference outside it;
#  - publishing: an earlier report is replaced (mode kept); a file of the
#    user's (checked before any work: nothing printed), a symlink,
#    a directory or an unwritable place are refused with one line and exit 2,
#    nothing is left behind; '-' is standard output;
#  - in a real browser (tests/tools/browser.py; skipped without one): the
#    curve has one point per snapshot on each line, the tables the JSON's
#    rows and sites, a row click shows the stack, sorting, a flame graph
#    click narrows it, search, hover, and the hostile names run no script;
#  - reachability: definite leaks marked in the suspects table and detail,
#    the one-off leaks' table (mkfixture's reach-diff series).
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
for tool in gcc objcopy python3; do
	command -v $tool >/dev/null 2>&1 || { echo "$tool is not installed"; exit 77; }
done
D=$(cd "$B/bin" && pwd)/leakdiff
PC="python3 $top/tests/tools/pagecheck.py"
BROWSER="python3 $top/tests/tools/browser.py --timeout 60"

json() {
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}
# status WANT CMD...: run, expect the exit status
status() {
	_want=$1
	shift
	"$@"
	_st=$?
	[ "$_st" = "$_want" ] || fail "$*: exit $_st, expected $_want"
}

# The program: three snapshots, hostile names.
gcc -O1 -c -o "$w/hostile.o" "$top/tests/report/hostile.c" || fail "cannot build hostile.o"
objcopy --redefine-sym 'hostile_leak=</script><img src=x onerror=alert(1)>' "$w/hostile.o" ||
	fail "objcopy --redefine-sym"
exe="$w/grow <img src=x onerror=alert(2)>"
gcc -g -O1 -o "$exe" "$top/tests/report/grow.c" "$w/hostile.o" -ldl || fail "cannot build grow"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/g" "$exe" || fail "grow under the hook"
d1=$(ls "$w"/g.*.0001.dump) d2=$(ls "$w"/g.*.0002.dump) d3=$(ls "$w"/g.*.0003.dump)
[ -f "$d1" ] && [ -f "$d2" ] && [ -f "$d3" ] || { fail "no dumps"; finish; }
HOSTILE_FN='</script><img src=x onerror=alert(1)>'
HOSTILE_FILE='</script><img src=x onerror=alert(3)>.c'

# 1. leakdiff --html: the --json document, the flame data, stdout unchanged.
"$D" --json "$d1" "$d2" "$d3" >"$w/diff.json" || fail "leakdiff --json"
"$D" "$d1" "$d2" "$d3" >"$w/diff.txt" || fail "leakdiff"
"$D" --html "$w/diff.html" "$d1" "$d2" "$d3" >"$w/html.txt" 2>"$w/html.err" ||
	fail "leakdiff --html"
cmp -s "$w/diff.txt" "$w/html.txt" || fail "--html changed the text report"
[ -s "$w/html.err" ] && fail "--html wrote to stderr: $(cat "$w/html.err")"
$PC data "$w/diff.html" leaksnap-data >"$w/embedded.json" || fail "no leaksnap-data"
expect_eq "embedded document" \
	"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])) == json.load(open(sys.argv[2])))' "$w/diff.json" "$w/embedded.json")" True
expect_eq "static checks" "$($PC static "$w/diff.html")" ok
expect_eq "suspects" "$(json "$w/diff.json" '[(g["bytes"], g["frames"][g["site"]]["function"]) for g in j["suspects"]]')" \
	"[([3000, 6000, 9000], 'leak_inline'), ([2000, 4000, 6000], 'leak_steady'), ([900, 1800, 2700], 'leak_hostile_file'), ([700, 1400, 2100], '$HOSTILE_FN+0x19')]"
# the site skips the inlined wrapper: frames[site] is the level under je_wrap
expect_eq "inline site" "$(json "$w/diff.json" '(j["suspects"][0]["site"], j["suspects"][0]["frames"][0]["function"], j["suspects"][0]["frames"][0]["inlined"])')" \
	"(1, 'je_wrap', True)"
expect_eq "hostile file" "$(json "$w/diff.json" 'j["suspects"][2]["frames"][0]["file"].endswith("/'"$HOSTILE_FILE"'")')" True
expect_eq "cache" "$(json "$w/diff.json" '[g["bytes"] for g in j["stopped"]]')" "[[500, 1000, 1000]]"
$PC data "$w/diff.html" leaksnap-flame >"$w/flame.json" || fail "no leaksnap-flame"
fl() { json "$w/flame.json" "$1"; }
expect_eq "flame total" "$(fl '(j["what"], j["total"], j["rest_bytes"], j["rest_stacks"], [s[0] for s in j["stacks"]])')" \
	"('growth', 13200, 0, 0, [6000, 4000, 1800, 1400])"
# each stack outermost first: _start ... main, then the inline chain innermost last
expect_eq "flame stack" "$(fl '[j["frames"][i]["function"] for i in j["stacks"][0][1]][-3:]')" \
	"['main', 'leak_inline', 'je_wrap']"
"$D" --html "$w/two.html" --html-stacks 2 "$d1" "$d2" "$d3" >/dev/null || fail "--html-stacks 2"
$PC data "$w/two.html" leaksnap-flame >"$w/two.json"
expect_eq "--html-stacks 2" "$(json "$w/two.json" '(j["total"], j["rest_bytes"], j["rest_stacks"], [s[0] for s in j["stacks"]])')" \
	"(13200, 3200, 2, [6000, 4000])"
# every option applies: --by site --top 1 --min-bytes
"$D" --json --by site --top 1 --min-bytes 1500 "$d1" "$d2" "$d3" >"$w/opt.json" || fail "--json options"
"$D" --html "$w/opt.html" --by site --top 1 --min-bytes 1500 "$d1" "$d2" "$d3" >/dev/null || fail "--html options"
$PC data "$w/opt.html" leaksnap-data >"$w/opt-embedded.json"
expect_eq "options embedded" \
	"$(python3 -c 'import json, sys; a, b = (json.load(open(p)) for p in sys.argv[1:]); print(a == b, a["by"], len(a["suspects"]))' "$w/opt.json" "$w/opt-embedded.json")" \
	"True site 1"
# '-': the page on stdout, nothing else
"$D" --html - "$d1" "$d2" "$d3" >"$w/stdout.html" || fail "--html -"
cmp -s "$w/stdout.html" "$w/diff.html" || fail "--html - differs from --html FILE"

# A program file and a function whose names are not UTF-8: the JSON (and so
# the page) stays JSON, each bad byte a U+FFFD.
bad=$(printf 'grow\377x')
gcc -O1 -c -o "$w/bad.o" "$top/tests/report/hostile.c" &&
	objcopy --redefine-sym "hostile_leak=$(printf 'bad\377name\033[31m')" "$w/bad.o" &&
	gcc -g -O1 -o "$w/$bad" "$top/tests/report/grow.c" "$w/bad.o" -ldl || fail "cannot build $bad"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/u" "$w/$bad" || fail "the non-UTF-8 program under the hook"
set -- "$w"/u.*.0001.dump "$w"/u.*.0002.dump "$w"/u.*.0003.dump
"$D" --json "$@" >"$w/u.json" || fail "leakdiff --json, non-UTF-8 names"
expect_eq "non-UTF-8 names" "$(json "$w/u.json" 'ascii((j["suspects"][3]["frames"][0]["function"], j["suspects"][3]["frames"][0]["module"].split("/")[-1]))')" \
	"('bad\ufffdname\x1b[31m+0x19', 'grow\ufffdx')"
"$D" --html "$w/u.html" "$@" >/dev/null || fail "leakdiff --html, non-UTF-8 names"
expect_eq "non-UTF-8 page" "$($PC static "$w/u.html")" ok
"$L" show --json "$3" | python3 -c 'import json, sys; json.load(sys.stdin)' || fail "show --json: not JSON"
"$L" maps --json "$3" | python3 -c 'import json, sys; json.load(sys.stdin)' || fail "maps --json: not JSON"

# 2. symbolize --html: the --json document (--top 1000 by default), live flame.
"$L" symbolize --json --top 1000 "$d3" >"$w/sym.json" || fail "symbolize --json"
"$L" symbolize --html "$w/sym.html" "$d3" >/dev/null || fail "symbolize --html"
$PC data "$w/sym.html" leaksnap-data >"$w/sym-embedded.json"
expect_eq "symbolize embedded" \
	"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])) == json.load(open(sys.argv[2])))' "$w/sym.json" "$w/sym-embedded.json")" True
expect_eq "symbolize static" "$($PC static "$w/sym.html")" ok
$PC data "$w/sym.html" leaksnap-flame >"$w/sflame.json"
expect_eq "live flame" "$(json "$w/sflame.json" '(j["what"], j["total"], sorted(s[0] for s in j["stacks"]))')" \
	"('live', $(json "$w/sym.json" 'j["records_bytes"]'), $(json "$w/sym.json" 'sorted(r["total_bytes"] for r in j["records"])'))"
"$L" symbolize --html "$w/sym1.html" --html-stacks 1 --top 2 "$d3" >/dev/null || fail "symbolize --html-stacks 1"
$PC data "$w/sym1.html" leaksnap-flame >"$w/sflame1.json"
expect_eq "live flame, 1 stack" "$(json "$w/sflame1.json" '(len(j["stacks"]), j["stacks"][0][0] + j["rest_bytes"] == j["total"], j["rest_stacks"])')" \
	"(1, True, $(($(json "$w/sym.json" 'len(j["records"])') - 1)))"

# 3. Publishing.
printf 'old report\n' >"$w/mine.html"
status 2 "$D" --html "$w/mine.html" "$d1" "$d2" "$d3" >"$w/mine.out" 2>"$w/mine.err"
expect_eq "a file of the user's refused" "$(cat "$w/mine.err")" \
	"leaksnap: $w/mine.html: already exists and is not a report leaksnap wrote: not replaced (leaksnap never overwrites a file of yours)"
expect_eq "a file of the user's kept" "$(cat "$w/mine.html")" "old report"
[ -s "$w/mine.out" ] && fail "a refused --html printed the report first"
status 2 "$L" symbolize --html "$w/mine.html" "$d3" >"$w/mine.out" 2>/dev/null
expect_eq "symbolize --html: a file of the user's kept" "$(cat "$w/mine.html")" "old report"
cp "$w/sym1.html" "$w/old.html"
chmod 600 "$w/old.html"
"$D" --html "$w/old.html" "$d1" "$d2" "$d3" >/dev/null || fail "replacing an earlier report"
cmp -s "$w/old.html" "$w/diff.html" || fail "the earlier report was not replaced by the page"
expect_eq "mode kept" "$(stat -c %a "$w/old.html")" 600
printf 'keep me\n' >"$w/target"
ln -s target "$w/link.html"
status 2 "$D" --html "$w/link.html" "$d1" "$d2" "$d3" >/dev/null 2>"$w/link.err"
expect_eq "symlink refused" "$(cat "$w/link.err")" \
	"leaksnap: $w/link.html: is a symbolic link: not replaced (leaksnap never writes through one)"
expect_eq "symlink target" "$(cat "$w/target")" "keep me"
mkdir "$w/dir.html"
status 2 "$D" --html "$w/dir.html" "$d1" "$d2" "$d3" >/dev/null 2>"$w/dir.err"
expect_eq "directory refused" "$(cat "$w/dir.err")" \
	"leaksnap: $w/dir.html: exists and is not a regular file: not replaced"
status 2 "$D" --html "$w/no/such/dir/r.html" "$d1" "$d2" "$d3" >"$w/nodir.out" 2>"$w/nodir.err"
expect_eq "missing directory" "$(cat "$w/nodir.err")" \
	"leaksnap: $w/no/such/dir/r.html: No such file or directory"
[ -s "$w/nodir.out" ] && fail "missing directory: the report was printed before the error"
if [ "$(id -u)" != 0 ]; then
	mkdir "$w/ro" && chmod 500 "$w/ro"
	status 2 "$D" --html "$w/ro/r.html" "$d1" "$d2" "$d3" >/dev/null 2>"$w/ro.err"
	expect_eq "unwritable directory" "$(cat "$w/ro.err")" "leaksnap: $w/ro/r.html: Permission denied"
fi
status 2 "$L" symbolize --html "$w/link.html" "$d3" >/dev/null 2>/dev/null
expect_eq "symbolize: symlink target" "$(cat "$w/target")" "keep me"
ls -A "$w" | grep -q '^\.leaksnap-' && fail "temporary files left behind: $(ls -A "$w" | grep '^\.leaksnap-')"
status 2 "$D" --html - --json "$d1" "$d2" >/dev/null 2>"$w/u.err"
grep -q "^leaksnap: diff: --html - writes the page on standard output: not with --json" "$w/u.err" ||
	fail "--html - --json: $(cat "$w/u.err")"
status 2 "$D" --html-stacks x --html "$w/x.html" "$d1" "$d2" >/dev/null 2>"$w/u.err"
grep -q "^leaksnap: diff: --html-stacks needs a number from 0 to 1000000" "$w/u.err" ||
	fail "--html-stacks x: $(cat "$w/u.err")"
status 2 "$D" --html "$w/a.html" --html "$w/b.html" "$d1" "$d2" >/dev/null 2>/dev/null
status 2 "$L" symbolize --html - --json "$d3" >/dev/null 2>/dev/null
[ -e "$w/x.html" ] || [ -e "$w/a.html" ] && fail "a refused command wrote a page"
# never an input of the command
cp "$d3" "$w/in.dump"
status 2 "$D" --html "$w/in.dump" "$d1" "$d2" "$w/in.dump" >/dev/null 2>"$w/in.err"
expect_eq "input refused" "$(cat "$w/in.err")" \
	"leaksnap: $w/in.dump: is also an input ($w/in.dump): not replaced"
cmp -s "$d3" "$w/in.dump" || fail "the input was changed"
ln "$w/in.dump" "$w/hard.html"
status 2 "$L" symbolize --html "$w/hard.html" "$w/in.dump" >/dev/null 2>/dev/null
cmp -s "$d3" "$w/in.dump" || fail "symbolize changed its input through a hard link"
# a bad input is reported and no page appears
head -c 100 "$d3" >"$w/short.dump"
status 2 "$D" --html "$w/bad.html" "$d1" "$w/short.dump" >/dev/null 2>"$w/bad.err"
[ -e "$w/bad.html" ] && fail "a page was written for a truncated dump"
[ "$(wc -l <"$w/bad.err")" = 1 ] || fail "truncated dump: not one line: $(cat "$w/bad.err")"

# 4. In a real browser.
$BROWSER "$w/diff.html" "$top/tests/report/diff-steps.js" >"$w/dom.json" 2>"$w/browser.err"
st=$?
if [ $st = 3 ]; then
	[ "$fails" = 0 ] || finish
	echo "no browser: the page was not loaded in one (apt-get install chromium)"
	exit 77
fi
[ $st = 0 ] || fail "browser, leakdiff page: $(cat "$w/browser.err")"
dom() { json "$w/dom.json" "$1"; }
expect_eq "page drawn" "$(dom '(j["ready"], j["images"])')" "('1', 0)"
# the curve: the total line, then the top suspects, one point per snapshot each
expect_eq "curve" "$(dom 'j["curve"]')" \
	"$(json "$w/diff.json" '[[s["bytes"] for s in j["snapshots"]]] + [g["bytes"] for g in j["suspects"][:10]]')"
expect_eq "suspect rows" "$(dom 'j["suspects"]')" \
	"$(json "$w/diff.json" '[g["frames"][g["site"]]["function"] for g in j["suspects"]]')"
expect_eq "cache rows" "$(dom 'j["caches"]')" "['cache_fill']"
expect_eq "snapshot rows" "$(dom 'j["snapshots"]')" "$(json "$w/diff.json" '[s["file"] for s in j["snapshots"]]')"
expect_eq "row click" "$(dom '(j["open"], j["openSite"], j["openInlined"], j["closed"])')" \
	"(['0'], ['je_wrap', 'leak_inline'], ['leak_inline'], 0)"
expect_eq "stack shown" "$(dom 'j["openFrames"][:2]')" "['je_wrap', 'main']"
expect_eq "sorted down" "$(dom 'j["sortedDown"]')" "$(dom 'j["suspects"]')"
expect_eq "sorted up" "$(dom 'list(reversed(j["sortedUp"]))')" "$(dom 'j["suspects"]')"
expect_eq "flame click" "$(dom '(j["flameRoot"], j["zoomBytes"], j["zoomWidth"] > 1199, j["zoomText"], j["resetBytes"])')" \
	"(13200, 4000, True, 'zoomed into leak_steady', 13200)"
expect_eq "flame search" "$(dom '(j["matches"], j["matchText"])')" \
	"(['leak_hostile_file', 'leak_inline', 'leak_steady'], '11.5 KiB matched (89% of the growth)')"
case $(dom 'j["tip"]') in
*"7,100 bytes"*) ;;
*) fail "hover on the first curve point: $(dom 'j["tip"]')" ;;
esac
expect_eq "hostile names as text" "$(dom 'j["text"]')" "[True, True, True]"
expect_eq "no reachability, nothing definite" "$(dom '(j["definite"], j["oneOffTable"])')" "(0, 0)"

$BROWSER "$w/sym.html" "$top/tests/report/symbolize-steps.js" >"$w/sdom.json" 2>"$w/browser.err" ||
	fail "browser, symbolize page: $(cat "$w/browser.err")"
sdom() { json "$w/sdom.json" "$1"; }
expect_eq "symbolize page" "$(sdom '(j["ready"], j["images"], j["flameRoot"])')" \
	"('1', 0, $(json "$w/sym.json" 'j["records_bytes"]'))"
expect_eq "record rows" "$(sdom 'j["records"]')" "$(json "$w/sym.json" '[str(r["total_bytes"]) for r in j["records"]]')"
expect_eq "record click" "$(sdom '(j["openSite"], len(j["openFrames"]) >= 3)')" "(['leak_inline'], True)"

# 5. Reachability (mkfixture's reach-diff series, tests/tools/mkfixture.c):
# the definite leaks lead the suspects with a badge in the row and in the
# detail, the one-off leaks have their table, the snapshots their bytes.
"$B/tests/mkfixture" "$w/fx" || fail "mkfixture"
R="$w/fx/reach-diff1.dump $w/fx/reach-diff2.dump $w/fx/reach-diff3.dump"
# shellcheck disable=SC2086
"$D" --no-symbols --json $R >"$w/reach.json" || fail "leakdiff --json, reach"
# shellcheck disable=SC2086
"$D" --no-symbols --html "$w/reach.html" $R >/dev/null || fail "leakdiff --html, reach"
$PC data "$w/reach.html" leaksnap-data >"$w/reach-embedded.json"
expect_eq "reach embedded" \
	"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])) == json.load(open(sys.argv[2])))' "$w/reach.json" "$w/reach-embedded.json")" True
expect_eq "reach static" "$($PC static "$w/reach.html")" ok
$BROWSER "$w/reach.html" "$top/tests/report/reach-steps.js" >"$w/rdom.json" 2>"$w/browser.err" ||
	fail "browser, reach page: $(cat "$w/browser.err")"
rdom() { json "$w/rdom.json" "$1"; }
# (2 definite groups, as the text report says; its 2 one-off leaks are named apart)
expect_eq "reach page" "$(rdom '(j["ready"], j["images"], j["cards"][0])')" "('1', 0, 'Definite leaks: 2')"
expect_eq "definite rows" "$(rdom 'j["suspects"]')" \
	"[['1', 'libfoo.so+0x1100', 1], ['2', 'libfoo.so+0x1500', 1], ['3', 'libfoo.so+0x1300', 0]]"
expect_eq "definite badge" "$(rdom '(j["badge"], j["badgeVisible"], j["caches"])')" "('definite leak', True, [0])"
expect_eq "one-off rows" "$(rdom 'j["unreachable"]')" "[['libbar.so+0x10', 1], ['libfoo.so+0x1700', 1]]"
expect_eq "snapshot unreachable" "$(rdom 'j["snapshotUnreachable"]')" "['720 B', '1.02 KiB', '1.52 KiB']"
expect_eq "definite detail" "$(rdom 'ascii((j["detailNote"], j["detailSeries"][2:]))')" \
	"('definite leak 800 B in 25 allocations no pointer reached in the last snapshot', ['unreachable bytes: 160 \u2192 480 \u2192 800', 'unreachable count: 5 \u2192 15 \u2192 25'])"
# symbolize: the unreachable blocks of one dump, in the facts and per record
"$L" symbolize --html "$w/rsym.html" "$w/fx/reach64le.dump" >/dev/null 2>&1 || fail "symbolize --html, reach"
$BROWSER "$w/rsym.html" "$top/tests/report/symbolize-reach-steps.js" >"$w/rsdom.json" 2>"$w/browser.err" ||
	fail "browser, reach symbolize page: $(cat "$w/browser.err")"
expect_eq "reach symbolize page" "$(json "$w/rsdom.json" '(j["ready"], j["images"], j["fact"], j["unreachable"])')" \
	"('1', 0, ['12.1 KiB in 7 allocations no pointer reached'], [['3', 1], ['4', 1], ['0', 0], ['0', 0]])"
finish
