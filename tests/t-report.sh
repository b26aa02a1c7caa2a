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

# 2b. What the command warned about is in the documents: --json's last key
# "warnings" is what standard error said, in order, without "leaksnap: " (or
# "leakdiff: ") and
# "warning: " (symbolize: a warning about its one dump without the dump's
# name); at most 100, then how many more.  Here: an exit dump ending the
# series (named with markup), a corrupt symbol file, 102 dumps without maps.
# warned ERRFILE [DOC-FILE]: the stderr lines as the document carries them
warned() {
	python3 -c 'import json, sys
doc = sys.argv[2] if len(sys.argv) > 2 else None
out = []
for l in open(sys.argv[1], encoding="utf-8").read().splitlines():
    prog = l.split(": ", 1)[0]
    if prog not in ("leaksnap", "leakdiff"):
        continue
    l = l[len(prog) + 2:]
    if ": warning: " in l:
        subject, text = l.split(": warning: ", 1)
        l = text if subject == doc else subject + ": " + text
    out.append(l)
print(json.dumps(out))' "$@"
}
exitd=$(ls "$w"/g.*.exit.dump)
hostile_dump="$w/exit <img src=x onerror=alert(4)>.dump"
cp "$exitd" "$hostile_dump"
"$D" --json "$d1" "$d2" "$d3" "$hostile_dump" >"$w/warn.json" 2>"$w/warn.err" || fail "leakdiff --json, exit dump"
grep -q "^leakdiff: $hostile_dump: warning: an exit dump" "$w/warn.err" || fail "no exit-dump warning: $(cat "$w/warn.err")"
expect_eq "diff warnings" "$(json "$w/warn.json" 'json.dumps(j["warnings"])')" "$(warned "$w/warn.err")"
expect_eq "warnings last" "$(json "$w/warn.json" 'list(j)[-1]')" warnings
"$D" --html "$w/warn.html" "$d1" "$d2" "$d3" "$hostile_dump" >/dev/null 2>&1 || fail "leakdiff --html, exit dump"
$PC data "$w/warn.html" leaksnap-data >"$w/warn-embedded.json"
expect_eq "page warnings" "$(json "$w/warn-embedded.json" 'json.dumps(j["warnings"])')" "$(warned "$w/warn.err")"
expect_eq "warn page static" "$($PC static "$w/warn.html")" ok
# a corrupt symbol file: said on stderr while symbolizing (status 2), in
# the document too; symbolize and leakdiff
mkdir -p "$(dirname "$w/badsyms$exe")"
head -c 3000 "$exe" >"$w/badsyms$exe"
status 2 "$L" symbolize --json -s "$w/badsyms" "$d3" >"$w/bsym.json" 2>"$w/bsym.err"
grep -q "^leaksnap: $w/badsyms$exe: " "$w/bsym.err" || fail "corrupt symbol file not said: $(cat "$w/bsym.err")"
expect_eq "symbolize warnings" "$(json "$w/bsym.json" 'json.dumps(j["warnings"])')" "$(warned "$w/bsym.err" "$d3")"
status 2 "$D" --json -s "$w/badsyms" "$d1" "$d2" "$d3" >"$w/bdiff.json" 2>"$w/bdiff.err"
expect_eq "diff symbol warnings" "$(json "$w/bdiff.json" 'json.dumps(j["warnings"])')" "$(warned "$w/bdiff.err")"
expect_eq "diff symbol warnings said" "$(json "$w/bdiff.json" 'len(j["warnings"]) > 0')" True
# 102 raw buffers, without maps: 102 warnings, the document keeps 100
"$B/tests/mkfixture" "$w/fx0" || fail "mkfixture"
mkdir "$w/nomaps"
i=0
while [ $i -lt 102 ]; do cp "$w/fx0/sample64.raw" "$w/nomaps/$i.raw"; i=$((i + 1)); done
# shellcheck disable=SC2046
"$D" --json --no-symbols --pointer-size 8 --frames 4 $(i=0; while [ $i -lt 102 ]; do echo "$w/nomaps/$i.raw"; i=$((i + 1)); done) \
	>"$w/many.json" 2>"$w/many.err" || fail "leakdiff of 102 dumps"
expect_eq "102 warnings said" "$(grep -c ': warning: no maps' "$w/many.err")" 102
warned "$w/many.err" >"$w/many.said"
expect_eq "100 warnings kept" "$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["warnings"][:100] == json.load(open(sys.argv[2]))[:100])' "$w/many.json" "$w/many.said")" True
expect_eq "the rest counted" "$(json "$w/many.json" '(len(j["warnings"]), j["warnings"][-1])')" \
	"(101, '2 more warnings not listed here')"

# 2c. Names and cut stacks (tests/report/names.cc, 16 frames a stack): the
# text shortens C++ names (U+2026 in a UTF-8 locale, "..." otherwise;
# --full-names: whole), --json and --folded keep them whole; the stack of
# deep(), 31 calls down, filled the 16 slots: the text says it may be cut,
# --json marks it "truncated", --folded and the flame data put it under
# [truncated].
have_cxx=0
if command -v g++ >/dev/null 2>&1; then
	have_cxx=1
	g++ -g -O0 -o "$w/names" "$top/tests/report/names.cc" -ldl || fail "cannot build names"
	LD_PRELOAD=$HOOK LEAKSNAP_FRAMES=16 LEAKSNAP_OUT="$w/n" "$w/names" || fail "names under the hook"
fi
if [ $have_cxx = 1 ]; then
	# (numbered dumps in capture order: the exit dump left out)
	N=$(ls "$w"/n.*.dump | grep -v '\.exit\.dump$')
	# shellcheck disable=SC2086
	LC_ALL=C.UTF-8 "$D" $N >"$w/names.txt" 2>"$w/names.err" || fail "leakdiff, names"
	# shellcheck disable=SC2086
	LC_ALL=C "$D" $N >"$w/names-ascii.txt" 2>/dev/null || fail "leakdiff, names, C locale"
	# shellcheck disable=SC2086
	LC_ALL=C.UTF-8 "$D" --full-names $N >"$w/names-full.txt" 2>/dev/null || fail "leakdiff --full-names"
	# shellcheck disable=SC2086
	"$D" --json $N >"$w/names.json" 2>/dev/null || fail "leakdiff --json, names"
	# shellcheck disable=SC2086
	"$D" --folded $N >"$w/names.folded" 2>/dev/null || fail "leakdiff --folded, names"
	src="$top/tests/report/names.cc"
	for want in "^  > #01 0x[0-9a-f]+  $w/names\\+0x[0-9a-f]+  \\(anonymous namespace\\)::Pool<…>::grow\\(…\\)  $src:[0-9]+:[0-9]+\$" \
		"^    #07 0x[0-9a-f]+  $w/names\\+0x[0-9a-f]+  std::map<…>::operator\\[\\]\\(…\\)  /.*/stl_map\\.h:[0-9]+:[0-9]+\$" \
		"^  > #00 0x[0-9a-f]+  $w/names\\+0x[0-9a-f]+  main::\\{lambda\\(…\\)#1\\}::operator\\(\\)\\(…\\) const  $src:[0-9]+:[0-9]+\$" \
		"^    #00 0x[0-9a-f]+  /.*libstdc\\+\\+[^ ]*  operator new\\(…\\)\\+0x[0-9a-f]+\$"; do
		grep -q -E "$want" "$w/names.txt" || fail "short names: no line /$want/"
	done
	grep -q 'basic_string<char' "$w/names.txt" && fail "short names: a template argument list printed whole"
	# the cut stack: 16 frames of deep(), then the note, once
	expect_eq "cut note" "$(grep -c -x '    … (stack may be cut at 16 frames)' "$w/names.txt")" 1
	expect_eq "cut note after" "$(grep -B1 -x '    … (stack may be cut at 16 frames)' "$w/names.txt" | head -1 | sed -E 's/^    #15 0x[0-9a-f]+  [^ ]+  //; s/  .*//')" "deep(…)"
	expect_eq "C locale" "$(sed 's/…/.../g' "$w/names.txt")" "$(cat "$w/names-ascii.txt")"
	# --full-names: every function name whole, as --json has it
	pool=$(json "$w/names.json" '[g["frames"][g["site"]]["function"] for g in j["suspects"] if "Pool" in g["frames"][g["site"]]["function"]][0]')
	case $pool in
	"(anonymous namespace)::Pool<(anonymous namespace)::Item>::grow(std::map<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, std::vector<int, std::allocator<int> >, "*) ;;
	*) fail "--json: the whole name: $pool" ;;
	esac
	grep -q -F -- "  $pool  $src:" "$w/names-full.txt" || fail "--full-names: no whole name"
	grep -v -x '    … (stack may be cut at 16 frames)' "$w/names-full.txt" | grep -q '…' &&
		fail "--full-names: an ellipsis in a name"
	expect_eq "--full-names differs in names only" \
		"$(grep -c '' "$w/names-full.txt")" "$(grep -c '' "$w/names.txt")"
	expect_eq "truncated groups" "$(json "$w/names.json" 'sorted((g["frames"][g["site"]]["function"], g["truncated"]) for g in j["suspects"] if g["truncated"] or "deep" in g["frames"][g["site"]]["function"])')" \
		"[('deep(int)', True)]"
	expect_eq "folded: cut" "$(grep -c '^\[truncated\];' "$w/names.folded")" 1
	expect_eq "folded: cut stack" "$(grep '^\[truncated\];' "$w/names.folded" | sed -E 's/^(\[truncated\];deep\(int\);deep\(int\));.* ([0-9]+)$/\1 \2/')" \
		"[truncated];deep(int);deep(int) 1400"
	grep -q -F 'std::map<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >' "$w/names.folded" ||
		fail "--folded: names not whole"
	# symbolize: the text, the records' "truncated", --full-names
	n3=$(echo "$N" | tail -1)
	LC_ALL=C.UTF-8 "$L" symbolize "$n3" >"$w/nsym.txt" 2>/dev/null || fail "symbolize, names"
	LC_ALL=C.UTF-8 "$L" symbolize --full-names "$n3" >"$w/nsym-full.txt" 2>/dev/null || fail "symbolize --full-names"
	"$L" symbolize --json "$n3" >"$w/nsym.json" 2>/dev/null || fail "symbolize --json, names"
	expect_eq "symbolize cut note" "$(grep -c -x '    … (stack may be cut at 16 frames)' "$w/nsym.txt")" 1
	expect_eq "symbolize truncated" "$(json "$w/nsym.json" '[(r["total_bytes"], r["truncated"]) for r in j["records"] if r["truncated"] or r["total_bytes"] == 2100]')" \
		"[(2100, True)]"
	grep -q -F '(anonymous namespace)::Pool<…>::grow(…)' "$w/nsym.txt" || fail "symbolize: short names"
	grep -q -F -- "  $pool  $src:" "$w/nsym-full.txt" || fail "symbolize --full-names: no whole name"
	# the flame data: the cut stack under one [truncated] frame
	# shellcheck disable=SC2086
	"$D" --html "$w/names.html" $N >/dev/null 2>&1 || fail "leakdiff --html, names"
	# shellcheck disable=SC2086
	"$D" --html "$w/names-full.html" --full-names $N >/dev/null 2>&1 || fail "leakdiff --html --full-names"
	$PC data "$w/names.html" leaksnap-flame >"$w/nflame.json"
	expect_eq "flame: cut" "$(json "$w/nflame.json" '[(s[0], j["frames"][s[1][0]]["function"], j["frames"][s[1][0]].get("truncated"), j["frames"][s[1][1]]["function"]) for s in j["stacks"] if any(j["frames"][i].get("truncated") for i in s[1])]')" \
		"[(1400, '[truncated]', True, 'deep(int)')]"
	"$L" symbolize --html "$w/nsym.html" "$n3" >/dev/null 2>&1 || fail "symbolize --html, names"
	$PC data "$w/nsym.html" leaksnap-flame >"$w/nsflame.json"
	expect_eq "live flame: cut" "$(json "$w/nsflame.json" '[(s[0], j["frames"][s[1][0]]["function"]) for s in j["stacks"] if j["frames"][s[1][0]].get("truncated")]')" \
		"[(2100, '[truncated]')]"
fi

# 3. Publishing.
printf 'old report\n' >"$w/mine.html"
status 2 "$D" --html "$w/mine.html" "$d1" "$d2" "$d3" >"$w/mine.out" 2>"$w/mine.err"
expect_eq "a file of the user's refused" "$(cat "$w/mine.err")" \
	"leakdiff: $w/mine.html: already exists and is not a report leaksnap wrote: not replaced (leaksnap never overwrites a file of yours)"
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
	"leakdiff: $w/link.html: is a symbolic link: not replaced (leaksnap never writes through one)"
expect_eq "symlink target" "$(cat "$w/target")" "keep me"
mkdir "$w/dir.html"
status 2 "$D" --html "$w/dir.html" "$d1" "$d2" "$d3" >/dev/null 2>"$w/dir.err"
expect_eq "directory refused" "$(cat "$w/dir.err")" \
	"leakdiff: $w/dir.html: exists and is not a regular file: not replaced"
status 2 "$D" --html "$w/no/such/dir/r.html" "$d1" "$d2" "$d3" >"$w/nodir.out" 2>"$w/nodir.err"
expect_eq "missing directory" "$(cat "$w/nodir.err")" \
	"leakdiff: $w/no/such/dir/r.html: No such file or directory"
[ -s "$w/nodir.out" ] && fail "missing directory: the report was printed before the error"
if [ "$(id -u)" != 0 ]; then
	mkdir "$w/ro" && chmod 500 "$w/ro"
	status 2 "$D" --html "$w/ro/r.html" "$d1" "$d2" "$d3" >/dev/null 2>"$w/ro.err"
	expect_eq "unwritable directory" "$(cat "$w/ro.err")" "leakdiff: $w/ro/r.html: Permission denied"
fi
status 2 "$L" symbolize --html "$w/link.html" "$d3" >/dev/null 2>/dev/null
expect_eq "symbolize: symlink target" "$(cat "$w/target")" "keep me"
ls -A "$w" | grep -q '^\.leaksnap-' && fail "temporary files left behind: $(ls -A "$w" | grep '^\.leaksnap-')"
status 2 "$D" --html - --json "$d1" "$d2" >/dev/null 2>"$w/u.err"
grep -q "^leakdiff: --html - writes the page on standard output: not with --json" "$w/u.err" ||
	fail "--html - --json: $(cat "$w/u.err")"
status 2 "$D" --html-stacks x --html "$w/x.html" "$d1" "$d2" >/dev/null 2>"$w/u.err"
grep -q "^leakdiff: --html-stacks needs a number from 0 to 1000000" "$w/u.err" ||
	fail "--html-stacks x: $(cat "$w/u.err")"
status 2 "$D" --html "$w/a.html" --html "$w/b.html" "$d1" "$d2" >/dev/null 2>/dev/null
status 2 "$L" symbolize --html - --json "$d3" >/dev/null 2>/dev/null
[ -e "$w/x.html" ] || [ -e "$w/a.html" ] && fail "a refused command wrote a page"
# never an input of the command
cp "$d3" "$w/in.dump"
status 2 "$D" --html "$w/in.dump" "$d1" "$d2" "$w/in.dump" >/dev/null 2>"$w/in.err"
expect_eq "input refused" "$(cat "$w/in.err")" \
	"leakdiff: $w/in.dump: is also an input ($w/in.dump): not replaced"
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
# shown shortened: the hostile name has a parameter list, "(1)"
expect_eq "suspect rows shown" "$(dom 'ascii(j["suspectsShown"])')" \
	"['leak_inline', 'leak_steady', 'leak_hostile_file', '</script><img src=x onerror=alert(\\u2026)>+0x19']"
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
# 6. The page's layout (tests/report/layout-steps.js): the chart and an
# opened stack as wide as the page's content and the table; the x axis is
# the time since the first snapshot when the snapshots have times (the
# points placed by them), their numbers otherwise; the warnings shown.
$BROWSER "$w/diff.html" "$top/tests/report/layout-steps.js" >"$w/lay.json" 2>"$w/browser.err" ||
	fail "browser, layout: $(cat "$w/browser.err")"
lay() { json "$w/lay.json" "$1"; }
expect_eq "chart width" "$(lay 'abs(j["curve"] - j["content"]) <= 1 and j["content"] > 300')" True
expect_eq "detail width" "$(lay 'abs(j["detail"][0] - j["detail"][1]) <= 1 and j["detail"][0] > 2 * j["detail"][2]')" True
expect_eq "time axis" "$(lay '(j["axis"], j["axisTitle"].startswith("time since the first snapshot (20"), j["axisTitle"].endswith(" UTC)"))')" \
	"('time', True, True)"
expect_eq "time labels" "$(lay 'j["xLabels"][0] in ("0 ms", "0 s") and all(__import__("re").fullmatch(r"[0-9.]+ (ms|s)", l) for l in j["xLabels"]) and len(j["xLabels"]) >= 2')" True
# the points at their times: first and last at the ends, the middle between
expect_eq "points at their times" "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); l = json.load(open(sys.argv[2]))
t = [s["time_ns"] for s in d["snapshots"]]; x = l["xs"]; a, b = l["plot"]
print(abs(x[0] - a) < 0.01 and abs(x[-1] - b) < 0.01 and
      abs((x[1] - x[0]) / (x[2] - x[0]) - (t[1] - t[0]) / (t[2] - t[0])) < 0.001)' "$w/diff.json" "$w/lay.json")" True
expect_eq "no warnings, no box" "$(lay '(j["warnings"], j["warningsVisible"])')" "([], False)"
# the reach fixtures carry one time for all: the snapshots' numbers
$BROWSER "$w/reach.html" "$top/tests/report/layout-steps.js" >"$w/rlay.json" 2>"$w/browser.err" ||
	fail "browser, reach layout: $(cat "$w/browser.err")"
expect_eq "snapshot axis" "$(json "$w/rlay.json" '(j["axis"], j["axisTitle"], j["xLabels"])')" \
	"('snapshot', 'snapshot', ['1', '2', '3'])"
# the warnings, as text (a name with markup opens no dialog)
$BROWSER "$w/warn.html" "$top/tests/report/layout-steps.js" >"$w/wlay.json" 2>"$w/browser.err" ||
	fail "browser, warnings: $(cat "$w/browser.err")"
expect_eq "#warnings" "$(json "$w/wlay.json" 'json.dumps(j["warnings"])')" "$(warned "$w/warn.err")"
expect_eq "#warnings shown" "$(json "$w/wlay.json" 'j["warningsVisible"]')" True

# 7. Names in the page (tests/report/names-steps.js): sites shortened with
# the whole name as their title (--full-names: whole), the cut stack under
# a grey [truncated] root beside main's callers and its detail's note, and
# the page's copy of the name rules on every case of names_cases.h.
if [ $have_cxx = 1 ]; then
	python3 -c 'import json, re, sys
cases = []
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.fullmatch(r"CASE\(\"((?:[^\"\\]|\\.)*)\", \"((?:[^\"\\]|\\.)*)\"\)\n?", line)
    if m:
        cases.append([g.replace("\\\"", "\"") for g in m.groups()])
print("const CASES = %s;" % json.dumps(cases))' "$top/tests/unit/names_cases.h" >"$w/names-steps.js"
	cat "$top/tests/report/names-steps.js" >>"$w/names-steps.js"
	$BROWSER "$w/names.html" "$w/names-steps.js" >"$w/ndom.json" 2>"$w/browser.err" ||
		fail "browser, names page: $(cat "$w/browser.err")"
	ndom() { json "$w/ndom.json" "$1"; }
	expect_eq "name rules in the page" "$(ndom '(j["mismatches"], j["cases"] > 60)')" "([], True)"
	expect_eq "page site titles" "$(ndom '[s[1] for s in j["sites"]]')" \
		"$(json "$w/names.json" '[g["frames"][g["site"]]["function"] for g in j["suspects"]]')"
	expect_eq "page short sites" "$(ndom 'ascii([s[0] for s in j["sites"]][:3])')" \
		"['(anonymous namespace)::Pool<\\u2026>::grow(\\u2026)', 'deep(\\u2026)', 'main::{lambda(\\u2026)#1}::operator()(\\u2026) const']"
	expect_eq "[truncated] root" "$(ndom '("[truncated]" in j["roots"], j["truncClass"])')" "(True, ['[truncated]'])"
	expect_eq "cut note in the page" "$(ndom 'ascii(j["cut"])')" "['\\u2026 (stack may be cut at 16 frames)']"
	$BROWSER "$w/names-full.html" "$w/names-steps.js" >"$w/nfdom.json" 2>"$w/browser.err" ||
		fail "browser, names page --full-names: $(cat "$w/browser.err")"
	expect_eq "--full-names page" "$(json "$w/nfdom.json" '(j["full"], [s[0] for s in j["sites"]] == [s[1] for s in j["sites"]])')" \
		"(True, True)"
fi
finish
