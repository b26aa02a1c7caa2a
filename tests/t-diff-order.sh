#!/bin/sh
# leakdiff and the order of snapshots, on real dumps: a program that leaks
# 4 KiB between each of its 12 numbered dumps, recorded with the hook.
#  - given as a shell glob of unpadded names (1, 10, 11, 12, 2, ...), one
#    run's snapshots are compared in capture order, a note says so, the
#    leak is a steady suspect and --fail-on sees its whole growth;
#  - --keep-order compares them as given (the series scrambled, the
#    "taken before" warning);
#  - zero-padded names (PREFIX.PID.0001.dump) given backwards are put in
#    order too; in glob order nothing is said;
#  - snapshots of two runs keep the order given, with no "taken before";
#  - a file given twice (by name or another name of it) is a warning;
#  - a .maps file picked up by a glob is named for what it is;
#  - run as leakdiff, messages say leakdiff:; as leaksnap diff, leaksnap:.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
command -v gcc >/dev/null 2>&1 || { echo "gcc is not installed"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 77; }
D=$(cd "$B/bin" && pwd)/leakdiff

# json FILE PYTHON-EXPR: print the expression over the parsed JSON as j
json() {
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}

cat >"$w/grow.c" <<'EOF'
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
static char *keep[1024];
static int nkeep;
__attribute__((noinline)) static void grow(int n)
{
	for (int k = 0; k < n && nkeep < 1024; k++) {
		keep[nkeep] = malloc(1024);
		memset(keep[nkeep++], 1, 1024);
	}
}
/* grow N: N numbered dumps, 4 KiB more before each, and before the exit
 * dump */
int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	for (int i = 0; i <= n; i++) {
		grow(4);
		if (i < n && (!dump || dump(NULL) != 0))
			return 1;
	}
	return 0;
}
EOF
gcc -g -O1 -o "$w/grow" "$w/grow.c" -ldl || fail "cannot build grow"
mkdir "$w/h" "$w/u" "$w/z"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/h/m" "$w/grow" 12 || fail "grow 12"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/h/r" "$w/grow" 2 || fail "grow 2"
pid=$(ls "$w/h" | sed -n 's/^m\.\([0-9]*\)\.exit\.dump$/\1/p')
rpid=$(ls "$w/h" | sed -n 's/^r\.\([0-9]*\)\.exit\.dump$/\1/p')
[ -n "$pid" ] && [ -n "$rpid" ] || { fail "no exit dumps"; finish; }
# The hook's dump N of PREFIX: named with N zero-padded or not.
hookdump() { # PREFIX PID N
	for f in "$w/h/$1.$2.$3.dump" "$w/h/$1.$2.$(printf %04d "$3").dump"; do
		[ -f "$f" ] && { echo "$f"; return; }
	done
	fail "no dump $1.$2.$3"
}
# The same dumps under both names: u/m.PID.N.dump and z/m.PID.000N.dump.
for n in 1 2 3 4 5 6 7 8 9 10 11 12; do
	f=$(hookdump m "$pid" $n)
	cp "$f" "$w/u/m.$pid.$n.dump" && cp "${f%.dump}.maps" "$w/u/m.$pid.$n.maps"
	cp "$f" "$w/z/m.$pid.$(printf %04d $n).dump"
done
cp "$w/h/m.$pid.exit.dump" "$w/u/" && cp "$w/h/m.$pid.exit.dump" "$w/z/"
[ "$fails" = 0 ] || finish
cd "$w/u" || exit 1
series() { # FIRST LAST: the leak's bytes in snapshots FIRST..LAST, as JSON prints them
	python3 -c 'import sys; print([4096 * k for k in range(int(sys.argv[1]), int(sys.argv[2]) + 1)])' "$1" "$2"
}

# 1. The glob's order, 1, 10, 11, 12, 2, ...: put in capture order, said.
set -- m.*.[0-9]*.dump
expect_eq "glob order" "$*" "m.$pid.1.dump m.$pid.10.dump m.$pid.11.dump m.$pid.12.dump m.$pid.2.dump m.$pid.3.dump m.$pid.4.dump m.$pid.5.dump m.$pid.6.dump m.$pid.7.dump m.$pid.8.dump m.$pid.9.dump"
"$D" --json --no-symbols "$@" >"$w/glob.json" 2>"$w/glob.err" || fail "glob: status"
expect_eq "glob: note" "$(cat "$w/glob.err")" \
	"leakdiff: warning: snapshots of pid $pid put in capture order: 1-12 (given 1, 10, 11, 12, 2, ...; --keep-order keeps the order given)"
expect_eq "glob: snapshots" "$(json "$w/glob.json" '" ".join(s["file"] for s in j["snapshots"])')" \
	"$(for n in 1 2 3 4 5 6 7 8 9 10 11 12; do printf 'm.%s.%s.dump ' "$pid" $n; done | sed 's/ $//')"
expect_eq "glob: the leak" "$(json "$w/glob.json" '(len(j["suspects"]), j["suspects"][0]["bytes"], j["suspects"][0]["trend"], j["stopped"])')" \
	"(1, $(series 1 12), 'steady', [])"
st=0; "$D" --no-symbols --fail-on 44K "$@" >/dev/null 2>"$w/fail.err" || st=$?
expect_eq "glob: --fail-on 44K status" $st 1
expect_eq "glob: --fail-on message" "$(tail -1 "$w/fail.err")" \
	"leakdiff: suspects grew by 45056 bytes, at or above --fail-on 45056"
# with the exit dump, which comes last
"$D" --no-symbols m.*.dump >/dev/null 2>"$w/exit.err" || fail "glob with exit: status"
expect_eq "glob with exit: note" "$(cat "$w/exit.err")" \
	"leakdiff: warning: snapshots of pid $pid put in capture order: 1-12, exit (given 1, 10, 11, 12, 2, ...; --keep-order keeps the order given)
leakdiff: m.$pid.exit.dump: warning: an exit dump ends the series, taken when the program stopped: what grew until the dump before it counts as still growing, not as a cache that stopped"
# the exit dump last hides nothing: the leak still fails --fail-on
st=0; "$D" --no-symbols --fail-on 44K m.*.dump >/dev/null 2>&1 || st=$?
expect_eq "glob with exit: --fail-on 44K status" $st 1

# 2. --keep-order: as given, as before (the series scrambled, the warning).
"$D" --json --no-symbols --keep-order "$@" >"$w/keep.json" 2>"$w/keep.err" || fail "keep: status"
expect_eq "keep: warning" "$(cat "$w/keep.err")" \
	"leakdiff: m.$pid.2.dump: warning: taken before m.$pid.12.dump, yet given after it: snapshots are compared in the order given, oldest first"
expect_eq "keep: snapshots" "$(json "$w/keep.json" '" ".join(s["file"] for s in j["snapshots"])')" "$*"
expect_eq "keep: the leak" "$(json "$w/keep.json" '(j["suspects"][0]["bytes"], j["suspects"][0]["trend"])')" \
	"([4096, 40960, 45056, 49152, 8192, 12288, 16384, 20480, 24576, 28672, 32768, 36864], 'growing')"
st=0; "$D" --no-symbols --keep-order --fail-on 44K "$@" >/dev/null 2>&1 || st=$?
expect_eq "keep: --fail-on 44K status" $st 0

# 3. Zero-padded names: in glob order, nothing to say but how the exit dump
# is judged; backwards, put in order.
cd "$w/z" || exit 1
"$D" --no-symbols m.*.dump >/dev/null 2>"$w/pad.err" || fail "padded: status"
expect_eq "padded, glob order: only the exit dump's warning" "$(cat "$w/pad.err")" \
	"leakdiff: m.$pid.exit.dump: warning: an exit dump ends the series, taken when the program stopped: what grew until the dump before it counts as still growing, not as a cache that stopped"
# shellcheck disable=SC2046
"$D" --json --no-symbols $(ls m.*.dump | sort -r) >"$w/rev.json" 2>"$w/rev.err" || fail "padded backwards: status"
expect_eq "padded backwards: note" "$(cat "$w/rev.err")" \
	"leakdiff: warning: snapshots of pid $pid put in capture order: 1-12, exit (given exit, 12, 11, 10, 9, ...; --keep-order keeps the order given)
leakdiff: m.$pid.exit.dump: warning: an exit dump ends the series, taken when the program stopped: what grew until the dump before it counts as still growing, not as a cache that stopped"
expect_eq "padded backwards: the leak" "$(json "$w/rev.json" '(j["snapshots"][0]["file"], j["snapshots"][12]["file"], j["suspects"][0]["bytes"])')" \
	"('m.$pid.0001.dump', 'm.$pid.exit.dump', $(series 1 13))"

# 3b. Long names (not the hook's): the note lists whole names, then "...",
# never a name cut short.
mkdir -p "$w/long" && cd "$w/long" || exit 1
for n in 1 2 3 4 5 6 7 8 9 10 11 12; do
	cp "$(hookdump m "$pid" $n)" "nightly-build-heap-snapshot-$n.dump"
done
"$D" --no-symbols nightly-*.dump >/dev/null 2>"$w/long.err" || fail "long names: status"
expect_eq "long names: every item whole or ..." "$(python3 -c 'import re, sys
l = open(sys.argv[1]).read().strip()
m = re.fullmatch(r"leakdiff: warning: snapshots of pid \d+ put in capture order: (.*) \(given (.*); --keep-order keeps the order given\)", l)
items = (m.group(1) + ", " + m.group(2)).split(", ") if m else ["no note: " + l]
bad = [i for i in items if i != "..." and not re.fullmatch(r"nightly-build-heap-snapshot-\d+\.dump", i)]
print(bad or ("ok" if items.count("...") == 2 else "items: %r" % items))' "$w/long.err")" ok

# 4. Two runs: the later given first stays first, and nothing is said.
cd "$w" || exit 1
r1=$(hookdump r "$rpid" 1) r2=$(hookdump r "$rpid" 2) m1=$(hookdump m "$pid" 1) m2=$(hookdump m "$pid" 2)
"$D" --json --no-symbols "$r1" "$m1" >"$w/runs.json" 2>"$w/runs.err" || fail "two runs: status"
[ -s "$w/runs.err" ] && { fail "two runs: something said"; cat "$w/runs.err"; }
expect_eq "two runs: order kept" "$(json "$w/runs.json" '[s["pid"] for s in j["snapshots"]]')" "[$rpid, $pid]"
"$D" --no-symbols --keep-order "$r1" "$m1" >/dev/null 2>"$w/runs.err" || fail "two runs, --keep-order: status"
[ -s "$w/runs.err" ] && { fail "two runs, --keep-order: something said"; cat "$w/runs.err"; }
# interleaved: each run sorted in the places it holds
"$D" --json --no-symbols "$r2" "$m2" "$r1" "$m1" >"$w/mix.json" 2>"$w/mix.err" || fail "mixed: status"
expect_eq "mixed: order" "$(json "$w/mix.json" '[s["file"] for s in j["snapshots"]]')" \
	"['$r1', '$m1', '$r2', '$m2']"
expect_eq "mixed: notes" "$(cat "$w/mix.err")" \
"leakdiff: warning: snapshots of pid $rpid put in capture order: 1, 2 (given 2, 1; --keep-order keeps the order given)
leakdiff: warning: snapshots of pid $pid put in capture order: 1, 2 (given 2, 1; --keep-order keeps the order given)"

# 5. The same file twice: by name, by a link.
"$D" --no-symbols "$m1" "$m1" >/dev/null 2>"$w/dup.err" || fail "duplicate: status"
expect_eq "duplicate" "$(cat "$w/dup.err")" "leakdiff: $m1: warning: given twice: compared with itself"
ln "$m1" "$w/hard.dump"
ln -s "$m1" "$w/soft.dump"
"$D" --no-symbols "$m1" "$w/hard.dump" "$w/soft.dump" >/dev/null 2>"$w/dup.err" || fail "linked: status"
expect_eq "linked" "$(cat "$w/dup.err")" \
"leakdiff: $w/hard.dump: warning: the same file as $m1: compared with itself
leakdiff: $w/soft.dump: warning: the same file as $m1: compared with itself"

# 6. A maps file that a glob picked up.
cd "$w/u" || exit 1
st=0; "$D" m.$pid.1.* >/dev/null 2>"$w/maps.err" || st=$?
expect_eq "maps file: status" $st 2
expect_eq "maps file: message" "$(cat "$w/maps.err")" \
	"leakdiff: m.$pid.1.maps: a /proc/PID/maps file, not a heap snapshot (read it with: leaksnap maps m.$pid.1.maps)"
# a name the shell must have quoted: the command is quoted, and runs as said
cp "m.$pid.1.maps" "$w/it's \$HOME.maps"
st=0; "$L" show "$w/it's \$HOME.maps" >/dev/null 2>"$w/mapsq.err" || st=$?
expect_eq "maps file, quoted: message" "$st $(cat "$w/mapsq.err")" \
	"2 leaksnap: $w/it's \$HOME.maps: a /proc/PID/maps file, not a heap snapshot (read it with: leaksnap maps '$w/it'\\''s \$HOME.maps')"
said=$(sed 's/.*(read it with: \(.*\))$/\1/' "$w/mapsq.err")
expect_eq "maps file, quoted: the command runs" "$(PATH="$(dirname "$L"):$PATH" sh -c "$said" 2>&1 | head -1)" \
	"$("$L" maps "$w/it's \$HOME.maps" | head -1)"

# 7. The program's name in messages.
st=0; "$D" m.$pid.1.dump >/dev/null 2>"$w/name.err" || st=$?
expect_eq "leakdiff: usage" "$st $(cat "$w/name.err")" \
	"2 leakdiff: expected at least two snapshots, got one (see 'leakdiff --help')"
st=0; "$L" diff m.$pid.1.dump >/dev/null 2>"$w/name.err" || st=$?
expect_eq "leaksnap diff: usage" "$st $(cat "$w/name.err")" \
	"2 leaksnap: diff: expected at least two snapshots, got one (see 'leaksnap diff --help')"
"$L" diff --no-symbols "$m1" "$m1" >/dev/null 2>"$w/name.err" || fail "leaksnap diff: status"
expect_eq "leaksnap diff: warning" "$(cat "$w/name.err")" "leaksnap: $m1: warning: given twice: compared with itself"

# 8. What tells runs apart: the hook's process_start= is the boot ID and the
# process's start time as /proc/PID/stat says them, the same in each dump.
mkdir -p "$w/ps"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/ps/s" sleep 2 &
spid=$!
sleep 0.5
want="$(cat /proc/sys/kernel/random/boot_id) $(sed 's/.*) //' "/proc/$spid/stat" | cut -d' ' -f20)"
kill -47 "$spid"
wait "$spid" || fail "sleep under the hook"
for f in "$w/ps/s.$spid.0001.dump" "$w/ps/s.$spid.exit.dump"; do
	expect_eq "process_start of ${f##*/}" "$("$L" show --json "$f" | python3 -c 'import json, sys
print(" ".join(m["value"] for m in json.load(sys.stdin)["metadata"] if m["key"] == "process_start"))')" "$want"
done

finish
