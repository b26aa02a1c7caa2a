#!/bin/sh
# leakdiff --db DB (--run ID | --where KEY=VALUE...): a stored run diffed as
# if it were its dump files.
#  - mkfixture's hist-*.dump runs stored: the text of --where and --run
#    (golden), and the same as leakdiff on the dump files but for the line
#    about symbol files (the store has no files to name);
#  - tests/report/grow.c run under the hook (symbols, an inlined wrapper, an
#    exit dump, a function named with markup) and stored: --run ID (as
#    'history --by run' prints it) gives leakdiff's own text and --json (by
#    stack, site, function and module) on the dumps, but for what the store
#    does not keep: the PCs, the symbol files, the offset after a
#    symbol-table name; --html embeds that document; --fail-on gates alike;
#  - a sampled run (hists-*.dump): leakdiff's own text, --json and --fail-on
#    on the estimates, as on the dumps; a run of two intervals refused with
#    the line leakdiff gives for the files;
#  - several runs matching --where: the newest, and a warning naming it;
#  - errors, one line and exit 2: an unknown run, no run matching, a run of
#    one snapshot, a DB that is not a store or is missing, and the options
#    that do not go with --db.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
D=$(cd "$B/bin" && pwd)/leakdiff
G=$top/tests/history
PC="python3 $top/tests/tools/pagecheck.py"
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; }
golden() {
	[ "${UPDATE:-}" = 1 ] && cp "$2" "$G/$1"
	cmp -s "$G/$1" "$2" || { fail "$1 differs"; diff -u "$G/$1" "$2" | head -20; }
}
# run NAME WANT-STATUS CMD ARGS...: stdout and stderr to $w/NAME.out and
# $w/NAME.err, the exit status checked
run() {
	_n=$1 _want=$2
	shift 2
	_st=0
	"$@" >"$w/$_n.out" 2>"$w/$_n.err" || _st=$?
	expect_eq "$_n: exit status" "$_st" "$_want"
}
# one_line NAME WANT: exit 2, that one line on stderr, nothing on stdout
one_line() {
	expect_eq "$1: stderr" "$(cat "$w/$1.err")" "$2"
	expect_eq "$1: stdout" "$(cat "$w/$1.out")" ""
}
# run_id DB PID: the id of the run of that pid, as history --by run prints it
run_id() {
	"$L" history --db "$1" --by run --json | python3 -c '
import json, sys
for r in json.load(sys.stdin)["rows"]:
    print(r["key"])' >"$w/ids"
	for id in $(cat "$w/ids"); do
		"$D" --db "$1" --run "$id" --json 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if json.load(sys.stdin)["snapshots"][0]["pid"] == int(sys.argv[1]) else 1)' "$2" && echo "$id"
	done
}
# normalized KIND FILE: leakdiff's output without what a store does not
# keep: the PCs, the symbol files, a symbol-table name's offset
normalized() {
	python3 - "$1" "$2" <<'PY'
import json, re, sys
kind, path = sys.argv[1:]
if kind == "json":
    j = json.load(open(path))
    j.pop("symbols", None)
    for key in ("suspects", "stopped", "unreachable"):
        for g in j[key]:
            for f in g["frames"]:
                for k in ("pc", "symbol_file", "build_id_status"):
                    f.pop(k)
                if f["function"]:
                    f["function"] = re.sub(r"\+0x[0-9a-f]+$", "", f["function"])
    print(json.dumps(j, indent=1, sort_keys=True))
else:
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("no symbol file for "):
            continue
        m = re.match(r"^(  [> ] #\d+ )0x[0-9a-f]+(  .*)$", line)
        if m:
            parts = m.group(2).split("  ")
            if len(parts) > 2:
                parts[2] = re.sub(r"\+0x[0-9a-f]+$", "", parts[2])
            line = m.group(1) + "PC" + "  ".join(parts)
        print(line)
PY
}
same() { # WHAT KIND A B: the normalized outputs are equal
	normalized "$2" "$3" >"$w/same.a"
	normalized "$2" "$4" >"$w/same.b"
	cmp -s "$w/same.a" "$w/same.b" || { fail "$1: differs"; diff -u "$w/same.a" "$w/same.b" | head -20; }
}

"$B/tests/mkfixture" "$w/fx" || { fail "mkfixture"; finish; }
cd "$w/fx" || exit 1
"$L" store --db h.db --label build=1 --label test=alpha hist-1-1.dump hist-1-2.dump >/dev/null &&
	"$L" store --db h.db --label build=2 --label test=alpha hist-2a-1.dump hist-2a-2.dump >/dev/null &&
	"$L" store --db h.db --label build=2 --label test=beta hist-2b-1.dump hist-2b-2.dump >/dev/null &&
	"$L" store --db h.db --label build=3 --label test=alpha hist-3-1.dump hist-3-2.dump >/dev/null ||
	fail "store the fixtures"

# 1. The fixtures: golden text, and leakdiff's on the files -----------------------------
run beta 0 "$D" --db h.db --where test=beta
expect_eq "--where test=beta: stderr" "$(cat "$w/beta.err")" ""
golden diff-db-beta.out "$w/beta.out"
"$D" hist-2b-1.dump hist-2b-2.dump >"$w/beta-files.out" 2>&1 || fail "leakdiff on the files"
same "--where test=beta" text "$w/beta-files.out" "$w/beta.out"
id2a=$(run_id h.db 102)
[ -n "$id2a" ] || fail "no run of pid 102"
run run2a 0 "$D" --db h.db --run "$id2a"
golden diff-db-2a.out "$w/run2a.out"
"$D" hist-2a-1.dump hist-2a-2.dump >"$w/2a-files.out" 2>&1 || fail "leakdiff on the files"
same "--run" text "$w/2a-files.out" "$w/run2a.out"
run run0x 0 "$D" --db h.db --run "0x$id2a"
cmp -s "$w/run0x.out" "$w/run2a.out" || fail "--run 0xID"
# several runs: the newest (build 3's), said
run several 0 "$D" --db h.db --where test=alpha --json
expect_eq "several runs: the newest" "$(python3 -c 'import json, sys; print([s["pid"] for s in json.load(open(sys.argv[1]))["snapshots"]])' "$w/several.out")" "[104, 104]"
expect_eq "several runs: said" "$(cat "$w/several.err")" \
	"leakdiff: h.db: warning: 3 runs with test=alpha: comparing the newest, run $(run_id h.db 104) (--run ID chooses another)"
# --by function, --top, --min-bytes apply
run opts 0 "$D" --db h.db --where test=beta --by function --min-bytes 100 --json
"$D" --by function --min-bytes 100 --json hist-2b-1.dump hist-2b-2.dump >"$w/opts-files.out" 2>/dev/null
same "--by function" json "$w/opts-files.out" "$w/opts.out"

# 1b. Sampled runs: the interval stored, the diff's estimates and its refusal to
# mix intervals as on the files ---------------------------------------------------------
"$L" store --db s.db --label build=1 hists-1-1.dump hists-1-2.dump >/dev/null ||
	fail "store the sampled fixtures"
sid=$(run_id s.db 201)
[ -n "$sid" ] || fail "no run of pid 201"
run sampled 0 env LC_ALL=C.UTF-8 "$D" --db s.db --run "$sid"
LC_ALL=C.UTF-8 "$D" hists-1-1.dump hists-1-2.dump >"$w/sampled-files.out" 2>&1 ||
	fail "leakdiff on the sampled files"
same "a sampled run: text" text "$w/sampled-files.out" "$w/sampled.out"
expect_eq "a sampled run: estimated" "$(sed -n '2p; /^#1 /p' "$w/sampled.out")" \
	"sampled every 4096 bytes on average: bytes and counts are estimates (≈), ranked on
#1  DEFINITE LEAK  ≈+41120 bytes, ≈+1285 allocations  score ≈41120  (grew)"
for by in stack function; do
	run "sampled-json-$by" 0 "$D" --db s.db --run "$sid" --json --by "$by"
	"$D" --json --by "$by" hists-1-1.dump hists-1-2.dump >"$w/sampled-json-files.out" 2>/dev/null
	same "a sampled run: --json --by $by" json "$w/sampled-json-files.out" "$w/sampled-json-$by.out"
done
expect_eq "a sampled run: --json" "$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(j["sample_interval"], j["suspects"][0]["estimated_bytes"], j["suspects"][0]["sampled_counts"])' "$w/sampled-json-stack.out")" \
	"4096 [41120, 82240] [10, 20]"
run sampled-gate 1 "$D" --db s.db --run "$sid" --fail-on 40K
"$D" --fail-on 40K hists-1-1.dump hists-1-2.dump >/dev/null 2>"$w/sampled-gate-files.err"
expect_eq "a sampled run: --fail-on on the estimates" "$(tail -1 "$w/sampled-gate.err")" "$(tail -1 "$w/sampled-gate-files.err")"
# one process sampled at two intervals: refused as leakdiff refuses the files
"$L" store --db mix.db sampled1.dump sampled-65536.dump >/dev/null || fail "store two intervals"
mid=$("$L" history --db mix.db --by run | sed -n 's/^run \([0-9a-f]*\):.*/\1/p')
run mixed 2 "$D" --db mix.db --run "$mid"
one_line mixed "leakdiff: sampled-65536.dump: sampled every 65536 bytes, but sampled1.dump every 4096: snapshots sampled at two intervals cannot be compared"
"$D" sampled1.dump sampled-65536.dump >/dev/null 2>"$w/mixed-files.err"
expect_eq "two intervals: the files' line" "$(cat "$w/mixed.err")" "$(cat "$w/mixed-files.err")"

# 2. Errors -------------------------------------------------------------------------------
run unknown 2 "$D" --db h.db --run 0123456789abcdef
one_line unknown "leakdiff: h.db: no run 0123456789abcdef in the store"
run nomatch 2 "$D" --db h.db --where build=4711 --where test=alpha
one_line nomatch "leakdiff: h.db: no run with build=4711 test=alpha in the store"
"$L" store --db one.db hist-3-1.dump >/dev/null || fail "store one dump"
run onesnap 2 "$D" --db one.db --where build=
one_line onesnap "leakdiff: one.db: no run with build= in the store"
run onesnap 2 "$D" --db one.db --run "$("$L" history --db one.db --by run | sed -n 's/^run \([0-9a-f]*\):.*/\1/p')"
one_line onesnap "leakdiff: one.db: run $("$L" history --db one.db --by run | sed -n 's/^run \([0-9a-f]*\):.*/\1/p') has 1 snapshot: leakdiff compares two or more"
printf 'not a store at all, just text long enough for SQLite to read a header.\n' >text.db
run notstore 2 "$D" --db text.db --run 0123456789abcdef
one_line notstore "leakdiff: text.db: not a leaksnap store (not a SQLite database)"
run missing 2 "$D" --db none.db --run 0123456789abcdef
one_line missing "leakdiff: none.db: No such file or directory"
[ -e none.db ] && fail "leakdiff --db made a store"
run badrun 2 "$D" --db h.db --run 12g4
one_line badrun "leakdiff: --run needs a run's id, 16 hex digits as 'leaksnap history --by run' prints it, not '12g4' (see 'leakdiff --help')"
run files 2 "$D" --db h.db --run "$id2a" hist-1-1.dump
one_line files "leakdiff: --db compares a stored run: no snapshot files (got 'hist-1-1.dump') (see 'leakdiff --help')"
run nodb 2 "$D" --run "$id2a"
one_line nodb "leakdiff: --run needs --db DB (see 'leakdiff --help')"
run norun 2 "$D" --db h.db
one_line norun "leakdiff: --db needs --run ID or --where KEY=VALUE: which run (see 'leakdiff --help')"
run both 2 "$D" --db h.db --run "$id2a" --where test=beta
one_line both "leakdiff: --run and --where exclude each other (see 'leakdiff --help')"
run syms 2 "$D" --db h.db --run "$id2a" --symbols .
one_line syms "leakdiff: --symbols: a stored run's frames were symbolized when stored (see 'leakdiff --help')"
run ptr 2 "$D" --db h.db --run "$id2a" --pointer-size 4
one_line ptr "leakdiff: --db compares a stored run: no options of dump files (--maps, --pointer-size, --frames, --count-is-frames) (see 'leakdiff --help')"
run badwhere 2 "$D" --db h.db --where test
one_line badwhere "leakdiff: --where needs KEY=VALUE (see 'leakdiff --help')"
run dbhtml 2 "$D" --db h.db --run "$id2a" --html h.db
one_line dbhtml "leakdiff: h.db: is also an input (h.db): not replaced"

# 3. A real run, symbolized at ingest -------------------------------------------------------
command -v gcc >/dev/null 2>&1 && command -v objcopy >/dev/null 2>&1 || {
	echo "gcc or objcopy is not installed: the hook's run not compared"; finish; }
gcc -O1 -c -o "$w/hostile.o" "$top/tests/report/hostile.c" &&
	objcopy --redefine-sym 'hostile_leak=</script><img src=x onerror=alert(1)>' "$w/hostile.o" &&
	gcc -g -O1 -o "$w/grow" "$top/tests/report/grow.c" "$w/hostile.o" -ldl ||
	{ fail "cannot build grow"; finish; }
mkdir "$w/g" && cd "$w/g" || exit 1
LD_PRELOAD=$HOOK LEAKSNAP_OUT=g "$w/grow" || fail "grow under the hook"
set -- g.*.0001.dump g.*.0002.dump g.*.0003.dump g.*.exit.dump
"$L" store --db g.db --label build=7 --label "test=<b>x</b>" "$@" >/dev/null || fail "store grow"
pid=${1#g.}
pid=${pid%%.*}
id=$(run_id g.db "$pid")
[ -n "$id" ] || fail "no run of pid $pid"
run text 0 "$D" --db g.db --run "$id"
"$D" "$@" >"$w/text-files.out" 2>"$w/text-files.err"
same "the hook's run: text" text "$w/text-files.out" "$w/text.out"
expect_eq "the hook's run: stderr" "$(cat "$w/text.err")" "$(cat "$w/text-files.err")"
grep -q '^  > #00 PC  .*/grow+0x[0-9a-f]*  leak_steady  .*grow\.c:[0-9]*:[0-9]*$' "$w/same.b" ||
	fail "the stored symbols are not in the text: $(grep leak_steady "$w/text.out")"
for by in stack site function module; do
	run "json-$by" 0 "$D" --db g.db --run "$id" --json --by "$by"
	"$D" --json --by "$by" "$@" >"$w/json-files.out" 2>/dev/null
	same "the hook's run: --json --by $by" json "$w/json-files.out" "$w/json-$by.out"
done
expect_eq "what differs: PCs, symbol files, offsets after symbol-table names" \
	"$(python3 -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
f, g = a["suspects"][0]["frames"], b["suspects"][0]["frames"]
print(len(f) == len(g), [x["function"] for x in f][-1], [x["function"] for x in g][-1], g[0]["symbol_file"], g[0]["build_id_status"], "symbols" in a, "symbols" in b)' "$w/json-files.out" "$w/json-module.out")" \
	"True _start+0x20 _start None None True False"
run page 0 "$D" --db g.db --run "$id" --html "$w/g.html"
$PC data "$w/g.html" leaksnap-data >"$w/g-embedded.json" || fail "no leaksnap-data"
"$D" --db g.db --run "$id" --json >"$w/g.json" 2>/dev/null
expect_eq "--html: the --json document" \
	"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])) == json.load(open(sys.argv[2])))' "$w/g.json" "$w/g-embedded.json")" True
expect_eq "--html: static checks" "$($PC static "$w/g.html")" ok
run gate 1 "$D" --db g.db --run "$id" --fail-on 1K
"$D" --fail-on 1K "$@" >/dev/null 2>"$w/gate-files.err"
expect_eq "--fail-on" "$(tail -1 "$w/gate.err")" "$(tail -1 "$w/gate-files.err")"

finish
