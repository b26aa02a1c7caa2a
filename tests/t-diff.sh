#!/bin/sh
# leakdiff end to end on real dumps: the demo server (testdata/demo/server.c)
# recorded with the hook, three snapshots per run.
#  - two runs (other pids, other load addresses): identical stacks match;
#  - three snapshots: the leak ranks first with its function and line, the
#    bounded cache is listed as stopped, never as a suspect;
#  - two builds: --by stack sees different code, --by function matches;
#  - a text dump of the same data (no build IDs) against the LEAKSNAP dump;
#  - symbols from a --symbols tree for a stripped program; suppressions by
#    function; folded output; --fail-on; leakdiff as its own name; a corrupt
#    symbol file is reported (exit 2) with the report still printed.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
for tool in gcc strip python3; do
	command -v $tool >/dev/null 2>&1 || { echo "$tool is not installed"; exit 77; }
done
D=$(cd "$B/bin" && pwd)/leakdiff
src=$top/testdata/demo/server.c
line() { grep -n "$1" "$src" | head -1 | cut -d: -f1; }
leak_line=$(line 'char \*body = malloc(512)')
cache_line=$(line 'struct session \*s = calloc')

# json FILE PYTHON-EXPR: print the expression over the parsed JSON as j
json() {
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}

# Build and run: two runs of build A, one of build B (one more function
# before the others, so every offset moves).
mkdir -p "$w/a" "$w/b" "$w/dev/system/bin" "$w/syms/system/bin"
gcc -g -O1 -o "$w/a/server" "$src" -ldl || fail "cannot build server"
sed 's/^static struct session \*newest, \*oldest;/&\nint pad_function(int x);\nint pad_function(int x) { return x * 3 + (x > 7 ? pad_function(x - 1) : 1); }/' \
	"$src" >"$w/b/server.c"
gcc -g -O1 -o "$w/b/server" "$w/b/server.c" -ldl || fail "cannot build server B"
cmp -s "$w/a/server" "$w/b/server" && fail "builds A and B are identical"
for run in r1 r2; do
	LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/$run" "$w/a/server" >/dev/null || fail "server run $run"
done
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/rb" "$w/b/server" >/dev/null || fail "server build B"
# snap RUN N: the hook's dump N of RUN (its number zero-padded)
snap() { ls "$w/$1".*."$(printf %04d "$2")".dump 2>/dev/null | head -1; }
for run in r1 r2 rb; do
	for n in 1 2 3; do
		[ -n "$(snap $run $n)" ] || fail "run $run wrote no dump $n"
	done
done
[ "$fails" = 0 ] || finish
r1_1=$(snap r1 1) r1_2=$(snap r1 2) r1_3=$(snap r1 3) r2_3=$(snap r2 3) rb_3=$(snap rb 3)

# 1a. With reachability (as make demo records): every leaked body is
#     unreachable, so the leak is definite; the cache's sessions are all
#     reachable; --fail-on-unreachable gates on the last snapshot's bytes.
LEAKSNAP_REACHABILITY=1 LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/rr" "$w/a/server" >/dev/null ||
	fail "server run with reachability"
set -- "$(snap rr 1)" "$(snap rr 2)" "$(snap rr 3)"
"$D" --json "$@" >"$w/reach.json" || fail "leakdiff of reachability snapshots"
expect_eq "reach: the leak is definite" \
	"$(json "$w/reach.json" '(j["suspects"][0]["definite"], j["suspects"][0]["bytes"], j["suspects"][0]["unreachable_bytes"], j["suspects"][0]["unreachable_counts"])')" \
	"(True, [2560, 5120, 7680], [2560, 5120, 7680], [5, 10, 15])"
expect_eq "reach: the cache is reachable" \
	"$(json "$w/reach.json" '(j["stopped"][0]["definite"], j["stopped"][0]["bytes"], j["stopped"][0]["unreachable_bytes"])')" \
	"(False, [3200, 4096, 4096], [0, 0, 0])"
st=0; "$D" --fail-on-unreachable 7680 "$@" >/dev/null 2>&1 || st=$?
expect_eq "reach: --fail-on-unreachable 7680" "$st" 1
st=0; "$D" --fail-on-unreachable 7681 "$@" >/dev/null 2>&1 || st=$?
expect_eq "reach: --fail-on-unreachable 7681" "$st" 0

# 1. Two runs of one build: the same state, different pids and addresses.
exe_start() { grep -m1 " $w/a/server\$" "${1%.dump}.maps" | cut -d- -f1; }
if [ "$(exe_start "$r1_3")" = "$(exe_start "$r2_3")" ]; then
	echo "note: both runs loaded the program at the same address (ASLR off?)"
fi
"$D" --json "$r1_3" "$r2_3" >"$w/runs.json" || fail "leakdiff of two runs"
expect_eq "two runs: suspects" "$(json "$w/runs.json" 'len(j["suspects"])')" 0
expect_eq "two runs: bytes_delta" "$(json "$w/runs.json" 'j["totals"]["bytes_delta"]')" 0
expect_eq "two runs: pids differ" \
	"$(json "$w/runs.json" 'j["snapshots"][0]["pid"] != j["snapshots"][1]["pid"]')" True

# 2. Three snapshots of one run: the leak first, the cache stopped.
"$D" --json "$r1_1" "$r1_2" "$r1_3" >"$w/trend.json" || fail "leakdiff of three snapshots"
expect_eq "trend: suspects" "$(json "$w/trend.json" 'len(j["suspects"])')" 1
expect_eq "trend: leak series" "$(json "$w/trend.json" 'j["suspects"][0]["bytes"]')" "[2560, 5120, 7680]"
expect_eq "trend: leak trend" "$(json "$w/trend.json" 'j["suspects"][0]["trend"]')" steady
expect_eq "trend: leak site" \
	"$(json "$w/trend.json" '(lambda f: (f["function"], f["file"].split("/")[-1], f["line"]))(j["suspects"][0]["frames"][j["suspects"][0]["site"]])')" \
	"('handle_request', 'server.c', $leak_line)"
expect_eq "trend: cache" "$(json "$w/trend.json" '(len(j["stopped"]), j["stopped"][0]["bytes"], j["stopped"][0]["trend"])')" \
	"(1, [3200, 4096, 4096], 'stopped')"
expect_eq "trend: cache line" \
	"$(json "$w/trend.json" 'j["stopped"][0]["frames"][j["stopped"][0]["site"]]["line"]')" "$cache_line"
"$D" "$r1_1" "$r1_2" "$r1_3" >"$w/trend.txt" || fail "leakdiff text"
grep -q "^  > #00 0x[0-9a-f]*  $w/a/server+0x[0-9a-f]*  handle_request  .*server.c:$leak_line:" "$w/trend.txt" ||
	fail "text report: no handle_request site line"
sed -n '/^#1 /,/^$/p' "$w/trend.txt" | grep -q 'handle_request' || fail "text report: #1 is not the leak"
grep -q '^1 group grew, then stopped: a cache, not a leak' "$w/trend.txt" || fail "text report: no cache line"
# leakdiff is leaksnap diff
"$L" diff "$r1_1" "$r1_2" "$r1_3" | cmp -s - "$w/trend.txt" || fail "leaksnap diff differs from leakdiff"

# 3. --fail-on: between two snapshots both the leak (5120 bytes) and the
# cache (896) are suspects; with three, the stopped cache does not count.
"$D" --folded --fail-on 6016 "$r1_1" "$r1_3" >"$w/folded" 2>"$w/err"
expect_eq "--fail-on 6016 status" $? 1
grep -q '^leakdiff: suspects grew by 6016 bytes, at or above --fail-on 6016$' "$w/err" || fail "--fail-on message"
"$D" --folded --fail-on 6017 "$r1_1" "$r1_3" >/dev/null 2>&1
expect_eq "--fail-on 6017 status" $? 0
"$D" --folded --fail-on 5K "$r1_1" "$r1_3" >/dev/null 2>&1
expect_eq "--fail-on 5K status" $? 1
"$D" --fail-on 5121 "$r1_1" "$r1_2" "$r1_3" >/dev/null 2>&1
expect_eq "--fail-on 5121, three snapshots" $? 0
"$D" --fail-on 5120 "$r1_1" "$r1_2" "$r1_3" >/dev/null 2>&1
expect_eq "--fail-on 5120, three snapshots" $? 1
grep -q ';main;handle_request 5120$' "$w/folded" || { fail "folded: no main;handle_request line"; cat "$w/folded"; }

# 4. Two builds: different code; matched by function names only.
"$D" --json "$r1_3" "$rb_3" >"$w/builds-stack.json" || fail "leakdiff of two builds"
expect_eq "two builds by stack: new groups" \
	"$(json "$w/builds-stack.json" 'sorted((s["bytes"], s["new"]) for s in j["suspects"])')" \
	"[([0, 4096], True), ([0, 7680], True)]"
"$D" --json --by function "$r1_3" "$rb_3" >"$w/builds-fn.json" || fail "leakdiff --by function"
expect_eq "two builds by function: suspects" "$(json "$w/builds-fn.json" 'len(j["suspects"])')" 0
"$D" --json --by site "$r1_1" "$r1_3" >"$w/site.json" || fail "leakdiff --by site"
expect_eq "by site" "$(json "$w/site.json" '[(s["bytes_delta"], s["frames"][s["site"]]["function"]) for s in j["suspects"]]')" \
	"[(5120, 'handle_request'), (896, 'session_get')]"
"$D" --json --by module "$r1_1" "$r1_3" >"$w/module.json" || fail "leakdiff --by module"
expect_eq "by module" "$(json "$w/module.json" '[(s["module"], s["bytes_delta"]) for s in j["suspects"]]')" \
	"[('$w/a/server', 6016)]"

# 5. The same data as an Android text dump (no build IDs): it matches the
# LEAKSNAP dump's modules by path.
"$L" show --json "$r1_3" >"$w/r1_3.json" || fail "show --json"
python3 - "$w/r1_3.json" "${r1_3%.dump}.maps" "$w/r1_3.txt" <<'EOF' || fail "cannot write the text dump"
import json, sys
j = json.load(open(sys.argv[1]))
maps = open(sys.argv[2]).read()
recs = j["records"]
out = ["Android Native Heap Dump v1.2", "", "Build fingerprint: ''", "",
       "Total memory: %d" % sum(r["size"] * r["count"] for r in recs),
       "Allocation records: %d" % len(recs), "Backtrace size: %d" % j["backtrace_size"], ""]
for r in recs:
    out.append("z %d  sz %8d  num %4d  bt %s" % (1 if r["zygote"] else 0, r["size"], r["count"],
               " ".join(f["pc"][2:] for f in r["frames"])))
out.append("MAPS")
out.append(maps.rstrip("\n"))
out.append("END")
open(sys.argv[3], "w").write("\n".join(out) + "\n")
EOF
"$D" --json "$w/r1_3.txt" "$r1_3" >"$w/mixed.json" || fail "leakdiff text vs LEAKSNAP"
expect_eq "text vs LEAKSNAP: suspects" "$(json "$w/mixed.json" 'len(j["suspects"])')" 0
expect_eq "text vs LEAKSNAP: bytes" "$(json "$w/mixed.json" '[s["bytes"] for s in j["snapshots"]]')" "[11776, 11776]"
"$D" --json "$r1_1" "$w/r1_3.txt" >"$w/mixed2.json" || fail "leakdiff LEAKSNAP vs text"
"$D" --json "$r1_1" "$r1_3" >"$w/two.json" || fail "leakdiff LEAKSNAP vs LEAKSNAP"
expect_eq "LEAKSNAP vs text: as LEAKSNAP vs LEAKSNAP" \
	"$(json "$w/mixed2.json" '[(s["bytes"], s["frames"][s["site"]]["function"]) for s in j["suspects"]]')" \
	"$(json "$w/two.json" '[(s["bytes"], s["frames"][s["site"]]["function"]) for s in j["suspects"]]')"
expect_eq "LEAKSNAP vs LEAKSNAP" \
	"$(json "$w/two.json" '[(s["bytes"], s["frames"][s["site"]]["function"]) for s in j["suspects"]]')" \
	"[([2560, 7680], 'handle_request'), ([3200, 4096], 'session_get')]"

# 6. A stripped program, its symbols in an AOSP-style tree.
strip -o "$w/dev/system/bin/server" "$w/a/server"
cp "$w/a/server" "$w/syms/system/bin/server"
for n in 1 3; do
	LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/st$n" "$w/dev/system/bin/server" >/dev/null || fail "stripped server"
done
s1=$(snap st1 1) s3=$(snap st3 3)
mkdir -p "$w/syms$w/dev/system/bin"
cp "$w/a/server" "$w/syms$w/dev/system/bin/server"
"$D" --json "$s1" "$s3" >"$w/stripped.json" || fail "leakdiff stripped"
expect_eq "stripped, no symbols: site function" \
	"$(json "$w/stripped.json" 'j["suspects"][0]["frames"][j["suspects"][0]["site"]]["function"]')" None
"$D" --json -s "$w/syms" "$s1" "$s3" >"$w/tree.json" || fail "leakdiff --symbols"
expect_eq "symbols tree: site" \
	"$(json "$w/tree.json" '(lambda f: (f["function"], f["line"], f["symbol_file"]))(j["suspects"][0]["frames"][j["suspects"][0]["site"]])')" \
	"('handle_request', $leak_line, '$w/syms$w/dev/system/bin/server')"

# 7. Suppressions by function name.
printf '# the request leak is known\nleak:handle_request\n' >"$w/supp"
"$D" --json --suppressions "$w/supp" "$r1_1" "$r1_3" >"$w/supp.json" || fail "leakdiff --suppressions"
expect_eq "suppressed" "$(json "$w/supp.json" '(len(j["suspects"]), j["totals"]["suppressed_stacks"], j["suppressions"][0]["stacks"])')" \
	"(1, 1, 1)"
expect_eq "suppressed: the cache remains" \
	"$(json "$w/supp.json" 'j["suspects"][0]["frames"][j["suspects"][0]["site"]]["function"]')" session_get
# The snapshots' totals are those of the records compared: the suppressed
# stack's bytes and counts are out of them (and of the totals' deltas).
"$D" --json "$r1_1" "$r1_3" >"$w/nosupp.json" || fail "leakdiff without suppressions"
expect_eq "suppressed: out of the snapshots' totals" "$(python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
g = [s for s in a["suspects"] if s["frames"][s["site"]]["function"] == "handle_request"]
want = [(x["bytes"] - g[0]["bytes"][i], x["count"] - g[0]["counts"][i]) for i, x in enumerate(a["snapshots"])]
got = [(x["bytes"], x["count"]) for x in b["snapshots"]]
print(len(g) == 1 and want == got and b["totals"]["bytes_delta"] == got[-1][0] - got[0][0])
' "$w/nosupp.json" "$w/supp.json")" True

# A suppressions file too large to be one is refused, nothing read into memory.
truncate -s 65M "$w/huge-supp" 2>/dev/null || head -c 68157440 /dev/zero >"$w/huge-supp"
"$D" --suppressions "$w/huge-supp" "$r1_1" "$r1_3" >"$w/huge.out" 2>"$w/huge.err"
expect_eq "huge suppressions: status" $? 2
expect_eq "huge suppressions: message" "$(cat "$w/huge.err")" \
	"leakdiff: $w/huge-supp: more than 64 MiB: too large for a suppressions file"
[ -s "$w/huge.out" ] && fail "huge suppressions: a report was printed"

# 8. A corrupt symbol file: reported, exit 2, the report still printed.
mkdir -p "$w/bad$w/dev/system/bin"
head -c 3000 "$w/a/server" >"$w/bad$w/dev/system/bin/server"
"$D" -s "$w/bad" "$s1" "$s3" >"$w/bad.out" 2>"$w/bad.err"
expect_eq "corrupt symbol file: status" $? 2
grep -q "^leakdiff: $w/bad$w/dev/system/bin/server: " "$w/bad.err" || { fail "corrupt symbol file: no error line"; cat "$w/bad.err"; }
grep -q '^2 suspects grew by 6016 bytes' "$w/bad.out" || fail "corrupt symbol file: no report"

# 9. A site inside an inlined function: the text report marks the
# "inlined into" line of the site, not the frame's innermost function (a
# library header's, here std::string's constructor).
if command -v g++ >/dev/null 2>&1; then
	printf '%s\n' '#include <string>' '#include <vector>' '#include <cstdlib>' \
		'static std::vector<std::string *> keep;' \
		'__attribute__((noinline)) void add_string(int i) { keep.push_back(new std::string(200 + i % 2, (char)(65 + i % 26))); }' \
		'int main(int argc, char **argv) { int n = atoi(argv[1]); keep.reserve(1000); for (int i = 0; i < n; i++) add_string(i); return 0; }' \
		>"$w/inl.cc"
	g++ -g -O2 -o "$w/inl" "$w/inl.cc" || fail "cannot build inl"
	LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/inl10" "$w/inl" 10 || fail "inl 10"
	LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/inl40" "$w/inl" 40 || fail "inl 40"
	"$D" "$w"/inl10.*.exit.dump "$w"/inl40.*.exit.dump >"$w/inl.out" 2>"$w/inl.err" ||
		{ fail "leakdiff inl"; cat "$w/inl.err"; }
	iline=$(grep -n 'void add_string' "$w/inl.cc" | cut -d: -f1)
	grep -q -E "^      > inlined into  add_string\\((…|\\.\\.\\.)\\)  $w/inl\\.cc:$iline:[0-9]+\$" "$w/inl.out" ||
		{ fail "inlined site: not marked"; grep -E '^  [ >] #|inlined into' "$w/inl.out" | head -8; }
	grep -E '^  > #' "$w/inl.out" | grep -q basic_string && fail "inlined site: the library frame is marked"
fi

# 10. Snapshots of two programs, or of one run given newest first with
# --keep-order: said on stderr (the report is still made, exit 0); builds
# of one program at two paths are not two programs; two runs given newest
# first are compared so, and nothing is said (tests/t-diff-order.sh has
# the rest of the order rules).
"$D" "$s1" "$w"/inl40.*.exit.dump >/dev/null 2>"$w/two.err" || fail "two programs: status"
grep -q -x "leakdiff: $(ls "$w"/inl40.*.exit.dump): warning: a snapshot of another program ($w/inl) than $s1 ($w/dev/system/bin/server): their stacks will not match" "$w/two.err" ||
	{ fail "two programs: no warning"; cat "$w/two.err"; }
# the other program given twice: said once (and the file twice, once)
"$D" "$s1" "$w"/inl40.*.exit.dump "$w"/inl40.*.exit.dump >/dev/null 2>"$w/two2.err" || fail "two programs twice: status"
expect_eq "two programs twice: one warning each" "$(grep -c 'another program' "$w/two2.err") $(grep -c 'given twice' "$w/two2.err")" "1 1"
"$D" "$s3" "$s1" >/dev/null 2>"$w/rev.err" || fail "two runs reversed: status"
[ -s "$w/rev.err" ] && { fail "two runs reversed: a warning"; cat "$w/rev.err"; }
"$D" --keep-order "$r1_3" "$r1_1" >/dev/null 2>"$w/rev.err" || fail "reversed: status"
expect_eq "reversed: warning" "$(cat "$w/rev.err")" \
	"leakdiff: $r1_1: warning: taken before $r1_3, yet given after it: snapshots are compared in the order given, oldest first"
"$D" --no-symbols "$s1" "$s3" >/dev/null 2>"$w/fwd.err" || fail "in order: status"
[ -s "$w/fwd.err" ] && { fail "in order: a warning"; cat "$w/fwd.err"; }

# 10b. The hook's exit dump last in a series: taken when the server had
# stopped working, so nothing grew in its interval; what grew until the
# dump before it is still a suspect (not a cache that stopped), --fail-on
# still fails, and a warning says how the series was judged.
rx=$(ls "$w"/r1.*.exit.dump)
"$D" --no-symbols "$r1_1" "$r1_2" "$r1_3" "$rx" >/dev/null 2>"$w/exitlast.err" || fail "exit last: status"
expect_eq "exit last: warning" "$(cat "$w/exitlast.err")" \
	"leakdiff: $rx: warning: an exit dump ends the series, taken when the program stopped: what grew until the dump before it counts as still growing, not as a cache that stopped"
"$D" --json --no-symbols "$r1_1" "$r1_2" "$r1_3" >"$w/numbered.json" 2>"$w/numbered.err" || fail "numbered: status"
[ -s "$w/numbered.err" ] && { fail "numbered dumps: a warning"; cat "$w/numbered.err"; }
"$D" --json --no-symbols "$r1_1" "$r1_2" "$r1_3" "$rx" >"$w/exitlast.json" 2>/dev/null || fail "exit last: json"
suspects() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(" ".join("%d/%s" % (g["bytes_delta"], g["trend"]) for g in j["suspects"]))' "$1"; }
expect_eq "exit last: the numbered dumps' suspects" "$(suspects "$w/numbered.json" | cut -d/ -f1)" "5120"
# (first: the exit dump adds stdout's buffer, new in its interval, ranked below)
expect_eq "exit last: the same suspect first, growing" "$(suspects "$w/exitlast.json" | cut -d' ' -f1)" "5120/growing"
"$D" --no-symbols --fail-on 4K "$r1_1" "$r1_2" "$r1_3" "$rx" >/dev/null 2>&1
expect_eq "exit last: --fail-on" "$?" 1

# 11. JIT code (named anonymous mappings, memfd) in two processes at other
# addresses: no file's offsets, so never matched across them: each stack is
# new in one and gone from the other; in one process (the same addresses)
# they match.  Such frames print as raw PCs, module null.
jit() { # FILE BASE COUNT [NAME1 NAME2]: one block in each of two mappings
	{
		printf 'Android Native Heap Dump v1.2\n\nTotal memory: %d\nAllocation records: 2\n' $((300 * $3))
		printf 'Backtrace size: 4\n\n'
		printf 'z 0  sz      100  num    %d  bt %s4f1000\n' "$3" "$2"
		printf 'z 0  sz      200  num    %d  bt %s5f1000\n' "$3" "$2"
		printf 'MAPS\n%s4f0000-%s4f2000 r-xp 00000000 00:05 777        %s\n' "$2" "$2" \
			"${4:-/memfd:jit-cache (deleted)}"
		printf '%s5f0000-%s5f3000 r-xp 00000000 00:00 0          %s\nEND\n' "$2" "$2" \
			"${5:-[anon:dalvik-jit-code-cache]}"
	} >"$1"
}
jit "$w/j1.txt" 7a5c 1
jit "$w/j2.txt" 7b5c 5
jit "$w/j3.txt" 7a5c 5
"$D" --json --no-symbols "$w/j1.txt" "$w/j2.txt" >"$w/jit.json" || fail "jit: leakdiff"
expect_eq "jit: other process: suspects" \
	"$(json "$w/jit.json" '[(s["bytes"], s["new"], s["frames"][0]["pc"], s["frames"][0]["module"]) for s in j["suspects"]]')" \
	"[([0, 1000], True, '0x7b5c5f1000', None), ([0, 500], True, '0x7b5c4f1000', None)]"
"$D" --json --no-symbols "$w/j1.txt" "$w/j3.txt" >"$w/jit1.json" || fail "jit: leakdiff, one process"
expect_eq "jit: one process: suspects" \
	"$(json "$w/jit1.json" '[(s["bytes"], s["new"]) for s in j["suspects"]]')" \
	"[([200, 1000], False), ([100, 500], False)]"
# The kernel's own code pages are the same in every process: matched by offset.
jit "$w/v1.txt" 7ffd 1 '[vdso]' '[sigpage]'
jit "$w/v2.txt" 7ffe 5 '[vdso]' '[sigpage]'
"$D" --json --no-symbols "$w/v1.txt" "$w/v2.txt" >"$w/vdso.json" || fail "vdso: leakdiff"
expect_eq "vdso: matched across processes" \
	"$(json "$w/vdso.json" '[(s["bytes"], s["new"], s["frames"][0]["module"], s["frames"][0]["rel_pc"]) for s in j["suspects"]]')" \
	"[([200, 1000], False, '[sigpage]', '0x1000'), ([100, 500], False, '[vdso]', '0x1000')]"
"$D" --no-symbols "$w/j1.txt" "$w/j2.txt" >"$w/jit.out" || fail "jit: text"
expect_eq "jit: text frames" "$(grep -E '^  [ >] #' "$w/jit.out")" \
"  > #00 0x0000007b5c5f1000  (not in a file)
  > #00 0x0000007b5c4f1000  (not in a file)"

finish
