#!/bin/sh
# pprof profiles end to end, read by the real pprof (go tool pprof, Debian's
# golang-go), on dumps of real programs run under the hook:
#  - convert --to pprof of tests/report/grow.c's last snapshot: -raw, -top and
#    -traces give show --json's totals (bytes and allocations), the capture
#    time, the program's mapping first with its maps line and build ID, the
#    inlined wrapper's location innermost first (je_wrap, then leak_inline);
#    --no-symbols leaves the locations bare and pprof symbolizes them itself
#    from the mappings to the same answer; --symbols finds a stripped
#    program's symbols, a corrupt one is reported (exit 2) with the profile
#    written; zygote records carry the zygote label; a record without frames
#    is a "(no frames)" location;
#  - go tool pprof -diff_base of two converted snapshots of the demo server
#    (testdata/demo/server.c) shows its leak first, by exactly its growth;
#  - leakdiff --pprof: the suspects' growth totals of leakdiff --json, one
#    sample per growing stack (--folded's), the text report unchanged;
#  - publishing: convert never overwrites (file or symlink), leakdiff
#    replaces an earlier profile of leaksnap's (mode kept), never a file of
#    the user's, a symlink or an input; '-'
#    is standard output; malformed input is one line and exit 2, no file.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
for tool in gcc strip python3; do
	command -v $tool >/dev/null 2>&1 || { echo "$tool is not installed"; exit 77; }
done
command -v go >/dev/null 2>&1 || { echo "go is not installed: no pprof to read the profiles (apt-get install golang-go)"; exit 77; }
export GOCACHE="$w/gocache" HOME="$w" GOPATH="$w/go" GOFLAGS= GOTOOLCHAIN=local PPROF_TMPDIR="$w/pprof"
D=$(cd "$B/bin" && pwd)/leakdiff

json() {
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}
status() {
	_want=$1
	shift
	"$@"
	_st=$?
	[ "$_st" = "$_want" ] || fail "$*: exit $_st, expected $_want"
}
# pprof ARGS...: go tool pprof, its complaints kept in $w/pprof.err
pprof() { go tool pprof "$@" 2>"$w/pprof.err"; }
# raw_sums FILE: the sums of the two values over the samples of -raw
raw_sums() {
	pprof -raw -symbolize=none "$1" | awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && $2 ~ /^-?[0-9]+:$/ { a += $1; sub(":", "", $2); b += $2; n++ } END { print n + 0, a + 0, b + 0 }'
}
# top_total FILE ARGS...: the total of -top (in bytes for a bytes type)
top_total() {
	_f=$1
	shift
	pprof -top -unit=B "$@" "$_f" | sed -n 's/^Showing nodes accounting for .* of \(-\{0,1\}[0-9]*\)B\{0,1\} total.*/\1/p'
}
# top_shown FILE ARGS...: what the nodes -top shows account for (in bytes)
top_shown() {
	_f=$1
	shift
	pprof -top -unit=B "$@" "$_f" | sed -n 's/^Showing nodes accounting for \(-\{0,1\}[0-9]*\)B\{0,1\}, .*/\1/p'
}
# top_row FILE ARGS...: "FLAT FUNCTION" of the first row of -top
top_row() {
	_f=$1
	shift
	pprof -top -unit=B "$@" "$_f" | awk 'r { f = $1; $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print f, $0; exit } /flat%/ { r = 1 }'
}
# traces_sum FILE: the sum of the traces' values in bytes
traces_sum() {
	pprof -traces -unit=B "$1" | awk '$1 ~ /^-?[0-9]+B$/ { sub("B", "", $1); t += $1 } END { print t + 0 }'
}

# The programs and their dumps.
src=$top/tests/report
gcc -g -O1 -c -o "$w/hostile.o" "$src/hostile.c" &&
	gcc -g -O1 -o "$w/grow" "$src/grow.c" "$w/hostile.o" -ldl || fail "cannot build grow"
(cd "$w" && LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/g" ./grow) || fail "grow under the hook"
gcc -g -O1 -o "$w/server" "$top/testdata/demo/server.c" -ldl || fail "cannot build the demo server"
(cd "$w" && LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/s" ./server >/dev/null) || fail "the demo server under the hook"
g1=$(ls "$w"/g.*.0001.dump) g2=$(ls "$w"/g.*.0002.dump) g3=$(ls "$w"/g.*.0003.dump)
s1=$(ls "$w"/s.*.0001.dump) s3=$(ls "$w"/s.*.0003.dump)
[ -f "$g3" ] && [ -f "$s3" ] || { fail "no dumps"; finish; }
line() { grep -n "$2" "$1" | head -1 | cut -d: -f1; }

# 1. convert --to pprof: show --json's totals through -raw, -top, -traces.
"$L" show --json "$g3" >"$w/g3.json" || fail "show --json"
"$L" convert --to pprof "$g3" "$w/g3.pb.gz" 2>"$w/conv.err" || fail "convert --to pprof"
[ -s "$w/conv.err" ] && fail "convert wrote to stderr: $(cat "$w/conv.err")"
expect_eq "gzip" "$(head -c 2 "$w/g3.pb.gz" | od -An -tx1 | tr -d ' ')" 1f8b
bytes=$(json "$w/g3.json" 'j["records_bytes"]') allocs=$(json "$w/g3.json" 'j["allocation_count"]')
expect_eq "-raw: samples, objects, bytes" "$(raw_sums "$w/g3.pb.gz")" \
	"$(json "$w/g3.json" 'j["record_count"]') $allocs $bytes"
expect_eq "-top total" "$(top_total "$w/g3.pb.gz")" "$bytes"
expect_eq "-top total, objects" "$(top_total "$w/g3.pb.gz" -sample_index=inuse_objects)" "$allocs"
expect_eq "-traces total" "$(traces_sum "$w/g3.pb.gz")" "$bytes"
expect_eq "-top first" "$(top_row "$w/g3.pb.gz")" "9000B je_wrap (inline)"
pprof -raw -symbolize=none "$w/g3.pb.gz" >"$w/g3.raw"
expect_eq "sample types" "$(sed -n '/^Samples:/{n;p}' "$w/g3.raw")" "inuse_objects/count inuse_space/bytes[dflt]"
# (pprof prints the nanoseconds without trailing zeros)
gtime=$(json "$w/g3.json" 'j["time"]' | sed 's/0*Z$/Z/; s/\.Z$/Z/')
expect_eq "time" "$(sed -n 's/^Time: \(.*\) +0000 UTC$/\1/p' "$w/g3.raw" | tr ' ' T)Z" "$gtime"
# the inline chain: innermost first (je_wrap), the function it is in last
wrap_line=$(line "$src/grow.c" 'return malloc(n);') site_line=$(line "$src/grow.c" 'je_wrap(3000)')
expect_eq "inline location" "$(grep -A1 ' je_wrap ' "$w/g3.raw" | sed 's/^ *[0-9]*: 0x[0-9a-f]* M=[0-9]* //; s/^ *//')" \
	"je_wrap $src/grow.c:$wrap_line s=$((wrap_line - 2))
leak_inline $src/grow.c:$site_line s=$((site_line - 2))"
# the program's mapping first: its maps line, its build ID
exe_map=$(grep -m1 ' r-xp .* '"$w/grow"'$' "${g3%.dump}.maps")
start=$(echo "$exe_map" | cut -d- -f1) end=$(echo "$exe_map" | cut -d' ' -f1 | cut -d- -f2)
off=$(echo "$exe_map" | cut -d' ' -f3 | sed 's/^0*//')
bid=$(json "$w/g3.json" '[m["value"].split()[0] for m in j["metadata"] if m["key"] == "build_id" and m["value"].endswith("/grow")][0]')
expect_eq "first mapping" "$(sed -n '/^Mappings/{n;p}' "$w/g3.raw")" \
	"1: 0x$start/0x$end/0x${off:-0} $w/grow $bid [FN][FL][LN][IN]"
expect_eq "File:" "$(pprof -top "$w/g3.pb.gz" | head -1)" "File: grow"
# --rewrite-prefix renames the mappings' files; symbols still come from the dump's paths
"$L" convert --to pprof --rewrite-prefix "$w/=/elsewhere/" "$g3" "$w/rw.pb.gz" || fail "--rewrite-prefix"
expect_eq "--rewrite-prefix" "$(pprof -raw -symbolize=none "$w/rw.pb.gz" | sed -n '/^Mappings/{n;p}')" \
	"1: 0x$start/0x$end/0x${off:-0} /elsewhere/grow $bid [FN][FL][LN][IN]"
expect_eq "--rewrite-prefix: symbols" "$(top_row "$w/rw.pb.gz" -symbolize=none)" "9000B je_wrap (inline)"

# --no-symbols: bare locations, unsymbolized mappings; pprof, reading the
# program's file through the mapping, finds the same function and line at
# the call (its own symbolizer does not give the inline chain).
"$L" convert --to pprof --no-symbols "$g3" "$w/nosym.pb.gz" || fail "--no-symbols"
pprof -raw -symbolize=none "$w/nosym.pb.gz" >"$w/nosym.raw"
grep -q ' je_wrap ' "$w/nosym.raw" && fail "--no-symbols: a location has a function"
expect_eq "--no-symbols mapping" "$(sed -n '/^Mappings/{n;p}' "$w/nosym.raw")" "1: 0x$start/0x$end/0x${off:-0} $w/grow $bid "
expect_eq "pprof symbolizes" "$(top_row "$w/nosym.pb.gz")" "9000B leak_inline"
pprof -raw "$w/nosym.pb.gz" | grep -q " leak_inline $src/grow.c:$wrap_line " ||
	fail "pprof's own symbolization: leak_inline not at grow.c:$wrap_line (the call)"
expect_eq "--no-symbols totals" "$(raw_sums "$w/nosym.pb.gz")" "$(raw_sums "$w/g3.pb.gz")"

# zygote records: the label zygote=true, and -tagfocus selects them.
"$L" show --json "$top/testdata/demo/app-heap.txt" >"$w/app.json"
"$L" convert --to pprof "$top/testdata/demo/app-heap.txt" "$w/app.pb.gz" || fail "convert of a text dump"
expect_eq "zygote samples" "$(pprof -raw -symbolize=none "$w/app.pb.gz" | grep -c 'zygote:\[true\]')" \
	"$(json "$w/app.json" 'sum(1 for r in j["records"] if r["zygote"])')"
expect_eq "-tagfocus zygote" "$(top_shown "$w/app.pb.gz" -tagfocus=zygote=true)" \
	"$(json "$w/app.json" 'sum(r["total_bytes"] for r in j["records"] if r["zygote"])')"
expect_eq "no frames" "$(pprof -traces -unit=B "$w/app.pb.gz" | grep -A1 '^ *bytes: *64B' | tail -1 | sed 's/^ *//')" "64B   (no frames)"
expect_eq "text dump totals" "$(raw_sums "$w/app.pb.gz")" \
	"$(json "$w/app.json" '"%d %d %d" % (j["record_count"], j["allocation_count"], j["records_bytes"])')"

# A dump with the reachability section: each sample carries its unreachable
# count as the numeric label unreachable (reach64le.dump: 3 of 4 blocks of
# 4096, 4 of 10 of 24, none of the others).
"$B/tests/mkfixture" "$w/fx" >/dev/null || fail "mkfixture"
"$L" convert --to pprof --no-symbols "$w/fx/reach64le.dump" "$w/reach.pb.gz" || fail "convert of a reach dump"
expect_eq "unreachable labels" "$(pprof -raw -symbolize=none "$w/reach.pb.gz" | grep -o 'bytes:\[[0-9]* bytes\] unreachable:\[[0-9]* count\]' | sort | tr '\n' ';')" \
	"bytes:[100 bytes] unreachable:[0 count];bytes:[24 bytes] unreachable:[4 count];bytes:[4096 bytes] unreachable:[3 count];bytes:[64 bytes] unreachable:[0 count];"
expect_eq "-tagfocus unreachable" "$(top_shown "$w/reach.pb.gz" -symbolize=none -tagfocus=unreachable=1:)" 16624
pprof -raw -symbolize=none "$w/app.pb.gz" | grep -q unreachable && fail "unreachable labels without the section"

# 2. go tool pprof -diff_base of two snapshots of the demo server: the leak first.
"$D" --json "$s1" "$s3" >"$w/s.json" || fail "leakdiff of the demo"
"$L" convert --to pprof "$s1" "$w/old.pb.gz" && "$L" convert --to pprof "$s3" "$w/new.pb.gz" ||
	fail "convert of the demo's snapshots"
expect_eq "-diff_base first" "$(top_row "$w/new.pb.gz" -diff_base "$w/old.pb.gz")" \
	"$(json "$w/s.json" '"%dB %s" % (j["suspects"][0]["bytes_delta"], j["suspects"][0]["frames"][j["suspects"][0]["site"]]["function"])')"
expect_eq "the demo's leak on top" "$(top_row "$w/new.pb.gz")" \
	"$(json "$w/s.json" '"%dB %s" % (j["suspects"][0]["bytes"][-1], j["suspects"][0]["frames"][j["suspects"][0]["site"]]["function"])')"
expect_eq "the demo's leak" "$(json "$w/s.json" 'j["suspects"][0]["frames"][j["suspects"][0]["site"]]["function"]')" handle_request

# 3. leakdiff --pprof: the growth of the suspects.
"$D" --json "$g1" "$g2" "$g3" >"$w/d.json" || fail "leakdiff --json"
"$D" "$g1" "$g2" "$g3" >"$w/d.txt" || fail "leakdiff"
"$D" --folded "$g1" "$g2" "$g3" >"$w/d.folded" || fail "leakdiff --folded"
"$D" --pprof "$w/growth.pb.gz" "$g1" "$g2" "$g3" >"$w/p.txt" 2>"$w/p.err" || fail "leakdiff --pprof"
cmp -s "$w/d.txt" "$w/p.txt" || fail "--pprof changed the text report"
[ -s "$w/p.err" ] && fail "--pprof wrote to stderr: $(cat "$w/p.err")"
expect_eq "growth: samples, objects, bytes" "$(raw_sums "$w/growth.pb.gz")" \
	"$(wc -l <"$w/d.folded" | tr -d ' ') $(json "$w/d.json" '"%d %d" % (j["totals"]["suspects_count_delta"], j["totals"]["suspects_bytes_delta"])')"
expect_eq "growth: -top total" "$(top_total "$w/growth.pb.gz")" "$(json "$w/d.json" 'j["totals"]["suspects_bytes_delta"]')"
expect_eq "growth: -traces total" "$(traces_sum "$w/growth.pb.gz")" "$(json "$w/d.json" 'j["totals"]["suspects_bytes_delta"]')"
expect_eq "growth: per stack" \
	"$(pprof -raw -symbolize=none "$w/growth.pb.gz" | awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && $2 ~ /:$/ { sub(":", "", $2); print $2 }' | sort -n | tr '\n' ' ')" \
	"$(awk '{ print $NF }' "$w/d.folded" | sort -n | tr '\n' ' ')"
expect_eq "growth: first" "$(top_row "$w/growth.pb.gz")" "6000B je_wrap (inline)"
pprof -raw -symbolize=none "$w/growth.pb.gz" >"$w/growth.raw"
expect_eq "growth: types" "$(sed -n '/^Samples:/{n;p}' "$w/growth.raw")" "growth_objects/count growth_space/bytes[dflt]"
expect_eq "growth: inline location" "$(grep -A1 ' je_wrap ' "$w/growth.raw" | sed 's/^ *[0-9]*: 0x[0-9a-f]* M=[0-9]* //; s/^ *//')" \
	"je_wrap $src/grow.c:$wrap_line s=$((wrap_line - 2))
leak_inline $src/grow.c:$site_line s=$((site_line - 2))"
expect_eq "growth: time" "$(sed -n 's/^Time: \(.*\) +0000 UTC$/\1/p' "$w/growth.raw" | tr ' ' T)Z" "$gtime"
# the program's mapping first (pprof's main binary), with its build ID
expect_eq "growth: first mapping" "$(sed -n '/^Mappings/{n;p}' "$w/growth.raw" | awk '{ print $3, $4 }')" \
	"$w/grow $bid"
expect_eq "growth: File:" "$(pprof -top "$w/growth.pb.gz" | head -1)" "File: grow"
# the growth profile's mappings say where each frame is in its file: pprof
# symbolizes a --no-symbols growth profile to the same answer
"$D" --no-symbols --pprof "$w/growth-nosym.pb.gz" "$g1" "$g2" "$g3" >/dev/null || fail "leakdiff --no-symbols --pprof"
expect_eq "growth: pprof symbolizes" "$(top_row "$w/growth-nosym.pb.gz")" "6000B leak_inline"
"$D" --pprof - "$g1" "$g2" "$g3" >"$w/stdout.pb.gz" || fail "--pprof -"
cmp -s "$w/stdout.pb.gz" "$w/growth.pb.gz" || fail "--pprof - differs from --pprof FILE"
"$D" --json --pprof "$w/j.pb.gz" "$g1" "$g2" "$g3" >"$w/j.json" || fail "--json --pprof FILE"
cmp -s "$w/j.json" "$w/d.json" || fail "--pprof FILE changed the --json output"
cmp -s "$w/j.pb.gz" "$w/growth.pb.gz" || fail "--json --pprof FILE: another profile"

# 4. --symbols: a stripped program, its symbols in a tree.
mkdir -p "$w/syms$w"
cp "$w/grow" "$w/syms$w/grow" && strip "$w/grow" || fail "cannot strip grow"
"$L" convert --to pprof "$g3" "$w/stripped.pb.gz" || fail "convert, stripped program"
pprof -raw -symbolize=none "$w/stripped.pb.gz" | grep -q ' leak_steady ' && fail "a stripped program gave its function names"
"$L" convert --to pprof --symbols "$w/syms" "$g3" "$w/tree.pb.gz" || fail "convert --symbols"
expect_eq "--symbols" "$(top_row "$w/tree.pb.gz" -symbolize=none)" "9000B je_wrap (inline)"
# a corrupt symbol file: reported, exit 2, the profile still written
mkdir -p "$w/bad$w"
head -c 3000 "$w/syms$w/grow" >"$w/bad$w/grow"
"$L" convert --to pprof -s "$w/bad" "$g3" "$w/bad.pb.gz" 2>"$w/bad.err"
expect_eq "corrupt symbol file: status" $? 2
grep -q "^leaksnap: $w/bad$w/grow: " "$w/bad.err" || fail "corrupt symbol file: no error line: $(cat "$w/bad.err")"
expect_eq "corrupt symbol file: profile" "$(raw_sums "$w/bad.pb.gz")" "$(raw_sums "$w/g3.pb.gz")"

# 5. Publishing.
printf 'keep me\n' >"$w/exists"
status 2 "$L" convert --to pprof "$g3" "$w/exists" 2>"$w/e.err"
expect_eq "convert: existing file" "$(cat "$w/e.err")" "leaksnap: $w/exists: already exists (leaksnap never overwrites a file)"
ln -s exists "$w/link"
status 2 "$L" convert --to pprof "$g3" "$w/link" 2>"$w/e.err"
expect_eq "convert: symlink" "$(cat "$w/e.err")" "leaksnap: $w/link: already exists (leaksnap never overwrites a file)"
expect_eq "convert: nothing overwritten" "$(cat "$w/exists")" "keep me"
"$L" convert --to pprof "$g3" - >"$w/stdout-conv.pb.gz" || fail "convert --to pprof to stdout"
cmp -s "$w/stdout-conv.pb.gz" "$w/stripped.pb.gz" || fail "convert to '-' differs from the file"
printf 'old profile\n' >"$w/mine.pb.gz"
gzip -c "$w/mine.pb.gz" >"$w/mine2.pb.gz"
for f in mine mine2; do
	cp "$w/$f.pb.gz" "$w/$f.keep"
	status 2 "$D" --pprof "$w/$f.pb.gz" "$g1" "$g2" "$g3" >"$w/$f.out" 2>"$w/e.err"
	expect_eq "leakdiff --pprof over a file of the user's ($f)" "$(cat "$w/e.err")" \
		"leakdiff: $w/$f.pb.gz: already exists and is not a growth profile leaksnap wrote: not replaced (leaksnap never overwrites a file of yours)"
	cmp -s "$w/$f.pb.gz" "$w/$f.keep" || fail "$f: the user's file was changed"
	[ -s "$w/$f.out" ] && fail "$f: the report was printed before the error"
done
# a snapshot profile (convert --to pprof) is data, not a report: kept
"$L" convert --to pprof "$g1" "$w/snap.pb.gz" || fail "convert --to pprof g1"
cp "$w/snap.pb.gz" "$w/snap.keep"
status 2 "$D" --pprof "$w/snap.pb.gz" "$g1" "$g2" >/dev/null 2>"$w/e.err"
expect_eq "leakdiff --pprof over a snapshot profile" "$(cat "$w/e.err")" \
	"leakdiff: $w/snap.pb.gz: already exists and is not a growth profile leaksnap wrote: not replaced (leaksnap never overwrites a file of yours)"
cmp -s "$w/snap.pb.gz" "$w/snap.keep" || fail "the snapshot profile was changed"
"$D" --pprof "$w/earlier.pb.gz" "$g1" "$g2" >/dev/null || fail "leakdiff --pprof g1 g2"
chmod 600 "$w/earlier.pb.gz"
"$D" --pprof "$w/earlier.pb.gz" "$g1" "$g2" "$g3" >/dev/null || fail "leakdiff --pprof over an earlier profile"
expect_eq "replaced" "$(raw_sums "$w/earlier.pb.gz")" "$(raw_sums "$w/growth.pb.gz")"
expect_eq "mode kept" "$(stat -c %a "$w/earlier.pb.gz")" 600
status 2 "$D" --pprof "$w/link" "$g1" "$g2" >/dev/null 2>"$w/e.err"
expect_eq "leakdiff: symlink" "$(cat "$w/e.err")" \
	"leakdiff: $w/link: is a symbolic link: not replaced (leaksnap never writes through one)"
expect_eq "leakdiff: symlink target" "$(cat "$w/exists")" "keep me"
cp "$g2" "$w/in.dump"
status 2 "$D" --pprof "$w/in.dump" "$g1" "$w/in.dump" >/dev/null 2>"$w/e.err"
expect_eq "leakdiff: input" "$(cat "$w/e.err")" "leakdiff: $w/in.dump: is also an input ($w/in.dump): not replaced"
cmp -s "$g2" "$w/in.dump" || fail "the input was changed"
status 2 "$D" --pprof - --json "$g1" "$g2" >/dev/null 2>"$w/e.err"
expect_eq "--pprof - --json" "$(cat "$w/e.err")" \
	"leakdiff: --pprof - writes the profile on standard output: not with --json (see 'leakdiff --help')"
status 2 "$D" --pprof - --html - "$g1" "$g2" >/dev/null 2>/dev/null
status 2 "$D" --pprof - --folded "$g1" "$g2" >/dev/null 2>/dev/null
# malformed input: one line, exit 2, no file
head -c 100 "$g3" >"$w/short.dump"
status 2 "$L" convert --to pprof "$w/short.dump" "$w/short.pb.gz" 2>"$w/e.err"
expect_eq "convert: malformed input" "$(wc -l <"$w/e.err" | tr -d ' ')" 1
status 2 "$D" --pprof "$w/short2.pb.gz" "$g1" "$w/short.dump" >/dev/null 2>"$w/e.err"
expect_eq "leakdiff: malformed input" "$(wc -l <"$w/e.err" | tr -d ' ')" 1
[ -e "$w/short.pb.gz" ] || [ -e "$w/short2.pb.gz" ] && fail "a profile was written for a malformed dump"
ls -A "$w" | grep -q '^\.leaksnap-' && fail "temporary files left behind: $(ls -A "$w" | grep '^\.leaksnap-')"
finish
