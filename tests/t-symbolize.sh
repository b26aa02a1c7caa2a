#!/bin/sh
# leaksnap symbolize on a real dump: the demo program recorded with the
# hook, symbolized against symbol trees laid out as AOSP does
# (DIR/<device path>), as .build-id/xx/rest.debug, found by name, and at
# the host path; a stale file (another build ID), a missing file and a
# corrupt ELF are reported and never give a wrong answer.
set -u
# no debuginfod server of the environment answers for the files made here
unset DEBUGINFOD_URLS
B=$1
. "$(dirname "$0")/hook-lib.sh"
for tool in gcc objcopy strip; do
	command -v $tool >/dev/null 2>&1 || { echo "$tool is not installed"; exit 77; }
done
src=$top/testdata/demo/leaky.c
line() { grep -n "$1" "$src" | head -1 | cut -d: -f1; }
put=$(line 'struct entry \*e = malloc')
req=$(line 'char \*body = malloc(512)')
callput=$(line '		cache_put(key);')

# The program runs from a path of its own ("the device"); its unstripped
# build lives only in symbol trees.
dev=$w/device/system/bin
mkdir -p "$dev" "$w/syms/aosp" "$w/syms/bid" "$w/syms/byname/deep/er" "$w/syms/stale" "$w/syms/bad"
gcc -g -O1 -o "$w/leaky.full" "$src" || fail "cannot build leaky"
strip -o "$dev/leaky" "$w/leaky.full"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/d" "$dev/leaky" >/dev/null || fail "leaky under the hook"
d=$(ls "$w"/d.*.exit.dump)
mkdir -p "$w/syms/aosp$dev"
cp "$w/leaky.full" "$w/syms/aosp$dev/leaky"
id=$(readelf -n "$w/leaky.full" | sed -n 's/.*Build ID: //p')
mkdir -p "$w/syms/bid/.build-id/$(echo "$id" | cut -c1-2)"
objcopy --only-keep-debug "$w/leaky.full" "$w/syms/bid/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
cp "$w/leaky.full" "$w/syms/byname/deep/er/leaky"
# another build: same source, one more statement, another build ID
sed 's/printf("served/fprintf(stderr, "x");\n\tprintf("served/' "$src" >"$w/leaky2.c"
gcc -g -O1 -o "$w/syms/stale/leaky" "$w/leaky2.c" 2>/dev/null || fail "cannot build the stale leaky"
mkdir -p "$w/syms/stale$dev" "$w/syms/bad$dev"
mv "$w/syms/stale/leaky" "$w/syms/stale$dev/leaky"
head -c 3000 "$w/leaky.full" >"$w/syms/bad$dev/leaky"

# expect FILE RECORD-LINE-REGEX: a line of the report matches
expect() {
	grep -q -E -e "$2" "$1" || { fail "$1: no line matching '$2'"; grep -E '#0[01] ' "$1" | head -4 | sed 's/^/    have: /'; }
}
symbolize() { # NAME ARGS...: run, keep stdout/stderr/status
	n=$1
	shift
	"$L" symbolize "$@" "$d" >"$w/$n.out" 2>"$w/$n.err"
	echo $? >"$w/$n.st"
}
for how in aosp bid byname; do
	symbolize $how -v -s "$w/syms/$how"
	[ "$(cat "$w/$how.st")" = 0 ] || { fail "$how: status $(cat "$w/$how.st")"; cat "$w/$how.err"; }
	[ -s "$w/$how.err" ] && { fail "$how: stderr"; cat "$w/$how.err"; }
	expect "$w/$how.out" "^    #00 0x[0-9a-f]+  $dev/leaky\\+0x[0-9a-f]+  cache_put  $src:$put:[0-9]+\$"
	expect "$w/$how.out" "^    #01 0x[0-9a-f]+  $dev/leaky\\+0x[0-9a-f]+  main  $src:$callput:[0-9]+\$"
	expect "$w/$how.out" "^    #00 0x[0-9a-f]+  $dev/leaky\\+0x[0-9a-f]+  handle_request  $src:$req:[0-9]+\$"
done
expect "$w/aosp.out" "^  $dev/leaky  $w/syms/aosp$dev/leaky  \\(build-id match\\)\$"
expect "$w/bid.out" "^  $dev/leaky  $w/syms/bid/.build-id/.*\\.debug  \\(build-id match, debug-only: layout from the module's own file\\)\$"
expect "$w/byname.out" "^  $dev/leaky  $w/syms/byname/deep/er/leaky  \\(build-id match\\)\$"
# libc is found on the host, its DWARF through /usr/lib/debug/.build-id
if [ -d /usr/lib/debug/.build-id ]; then
	expect "$w/aosp.out" "libc\\.so\\.6\\+0x[0-9a-f]+  __libc_start_(call_)?main  .*\\.[ch]:[0-9]+"
fi

# The stale tree comes first: its file is skipped, the next tree is used.
symbolize stale-first -v -s "$w/syms/stale" -s "$w/syms/aosp"
expect "$w/stale-first.out" "^  $dev/leaky  $w/syms/aosp$dev/leaky  \\(build-id match\\)\$"
expect "$w/stale-first.out" "  cache_put  $src:$put:"
# Only the stale tree, and the device file gone: a mismatch, said, not used.
mv "$dev/leaky" "$dev/leaky.away"
symbolize stale-only -v -s "$w/syms/stale"
expect "$w/stale-only.out" "^    #00 0x[0-9a-f]+  $dev/leaky\\+0x[0-9a-f]+  \\(build-id mismatch\\)\$"
expect "$w/stale-only.out" "^  $dev/leaky  $w/syms/stale$dev/leaky  \\(build-id mismatch\\)\$"
grep -q 'cache_put' "$w/stale-only.out" && fail "the stale file was used"
# Nothing anywhere: missing.
symbolize none -v
expect "$w/none.out" "^    #00 0x[0-9a-f]+  $dev/leaky\\+0x[0-9a-f]+  \\(no symbol file\\)\$"
expect "$w/none.out" "^  $dev/leaky  -  \\(no symbol file\\)\$"
[ "$(cat "$w/none.st")" = 0 ] || fail "a missing symbol file is not an error"
# A corrupt candidate: one error line, status 2, the rest still symbolized.
symbolize bad -s "$w/syms/bad" -s "$w/syms/aosp"
[ "$(cat "$w/bad.st")" = 2 ] || fail "corrupt symbol file: status $(cat "$w/bad.st")"
grep -q -x "leaksnap: $w/syms/bad$dev/leaky: .*" "$w/bad.err" && [ "$(wc -l <"$w/bad.err")" = 1 ] ||
	{ fail "corrupt symbol file: stderr"; cat "$w/bad.err"; }
expect "$w/bad.out" "  cache_put  $src:$put:"
# A file of the module's name that is no ELF file at all (a linker script,
# as libc.so is under a sysroot): no candidate, passed over, no error.
mkdir -p "$w/syms/script$dev" "$w/syms/script/lib"
printf '/* GNU ld script */\nGROUP ( /lib/libc.so.6 )\n' >"$w/syms/script$dev/leaky"
cp "$w/syms/script$dev/leaky" "$w/syms/script/lib/leaky"
symbolize script -v -s "$w/syms/script" -s "$w/syms/aosp"
[ "$(cat "$w/script.st")" = 0 ] && [ ! -s "$w/script.err" ] ||
	{ fail "a linker script of the module's name: status $(cat "$w/script.st")"; cat "$w/script.err"; }
expect "$w/script.out" "^  $dev/leaky  $w/syms/aosp$dev/leaky  \\(build-id match\\)\$"
mv "$dev/leaky.away" "$dev/leaky"
# --symbols /: the files at their own paths, named without a doubled slash
symbolize root -v -s /
expect "$w/root.out" "^  $dev/leaky  $dev/leaky  \\(build-id match, stripped\\)\$"
grep -q '//' "$w/root.err" "$w/root.out" && { fail "--symbols /: a path with //"; grep '//' "$w/root.err" "$w/root.out" | head -3; }

# JSON: the frame objects and the modules.
symbolize json --json -s "$w/syms/aosp"
python3 - "$w/json.out" "$dev/leaky" "$w/syms/aosp$dev/leaky" "$src" "$put" <<'EOF' || fail "symbolize --json"
import json, sys
out, module, symfile, src, put = sys.argv[1:]
d = json.load(open(out))
frames = [f for r in d['records'] for f in r['frames'] if f['module'] == module]
want = {'function': 'cache_put', 'file': src, 'line': int(put), 'inlined': False,
        'symbol_file': symfile, 'build_id_status': 'match'}
hit = [f for f in frames if all(f.get(k) == v for k, v in want.items())]
assert hit, frames[:3]
assert all(set(f) >= {'pc', 'module', 'rel_pc', 'function', 'file', 'line', 'column', 'inlined',
                      'symbol_file', 'build_id_status'} for f in frames)
mods = {m['module']: m for m in d['symbols']}
assert mods[module]['symbol_file'] == symfile and mods[module]['build_id_status'] == 'match'
EOF

# Hundreds of modules (an Android process maps that many): each open module
# holds descriptors, so the soft limit on open files is raised to the hard
# one.  300 links to one library, each its own path and module, one record
# each; with a soft limit of 64 every frame must still resolve, and a
# program run by record must get the soft limit it was started with.
mkdir "$w/many"
libm=$top/$B/tests/hook/libreach.so
[ -f "$libm" ] || libm=$B/tests/hook/libreach.so
awk -v dir="$w/many" 'BEGIN {
	n = 300
	printf "Android Native Heap Dump v1.2\n\nTotal memory: %d\nAllocation records: %d\nBacktrace size: 4\n\n", 100 * n, n
	for (i = 0; i < n; i++)
		printf "z 0  sz      100  num    1  bt %x\n", 268435456 + i * 1048576 + 4112
	print "MAPS"
	for (i = 0; i < n; i++) {
		a = 268435456 + i * 1048576
		printf "%x-%x r--p 00000000 fd:01 %d %s/lib%04d.so\n", a, a + 4096, 1000 + i, dir, i
		printf "%x-%x r-xp 00001000 fd:01 %d %s/lib%04d.so\n", a + 4096, a + 8192, 1000 + i, dir, i
	}
	print "END"
}' >"$w/many.txt"
i=0
while [ $i -lt 300 ]; do
	ln "$libm" "$w/many/lib$(printf %04d $i).so" || { fail "cannot link $libm"; break; }
	i=$((i + 1))
done
(ulimit -S -n 64 && "$L" symbolize "$w/many.txt" >"$w/many.out" 2>"$w/many.err")
[ $? = 0 ] || { fail "300 modules, soft limit 64: status"; head -3 "$w/many.err"; }
[ "$(grep -c -E 'lib[0-9]{4}\.so\+0x1010 +[A-Za-z_]' "$w/many.out")" = 300 ] ||
	fail "300 modules, soft limit 64: not every frame resolved"
lim=$(ulimit -S -n 64 && "$L" record --out "$w/lim" -- sh -c 'ulimit -S -n' 2>/dev/null | head -1)
[ "$lim" = 64 ] || fail "record: the program's soft limit on open files is $lim, not 64"

# Names from the symbol table only where a symbol covers the address: code
# past the end of every symbol (here the padding before an aligned
# function; in Debian's libstdc++, local functions kept out of .dynsym) is
# left unnamed by symbolize and leakdiff, where GNU addr2line (and
# `leaksnap addr2line`, which answers as it does) names the symbol below.
printf '%s\n' 'int ext_small(int x) { return x * 3 + 1; }' \
	'__attribute__((aligned(256))) int ext_next(int x) { return x * 5 + 2; }' >"$w/ext.c"
gcc -O2 -fPIC -shared -o "$w/libext.so" "$w/ext.c" || fail "cannot build libext.so"
set -- $(nm -S --defined-only "$w/libext.so" | awk '$4 == "ext_small" { print $1, $2 }')
ev=$((0x$1)) es=$((0x$2))
nv=$((0x$(nm --defined-only "$w/libext.so" | awk '$3 == "ext_next" { print $1 }')))
[ $((ev + es)) -lt $nv ] || fail "libext.so: no gap after ext_small"
# the file mapped whole from offset 0 at 0x40000000: a PC is 0x40000000 + its
# address; frames are return addresses, looked up one byte before
printf 'Android Native Heap Dump v1.2\n\nTotal memory: 30\nAllocation records: 3\nBacktrace size: 1\n\n' >"$w/ext.txt"
for a in $((ev + 1)) $((ev + es)) $((ev + es + 1)); do
	printf 'z 0  sz       10  num    1  bt %x\n' $((0x40000000 + a)) >>"$w/ext.txt"
done
printf 'MAPS\n40000000-40010000 r-xp 00000000 fd:01 77 %s\nEND\n' "$w/libext.so" >>"$w/ext.txt"
"$L" symbolize "$w/ext.txt" >"$w/ext.out" 2>"$w/ext.err" || { fail "symbolize libext"; cat "$w/ext.err"; }
for a in $((ev + 1)) $((ev + es)); do
	expect "$w/ext.out" "libext\.so\+0x$(printf %x $a)  ext_small\+0x$(printf %x $((a - 1 - ev)))\$"
done
expect "$w/ext.out" "libext\.so\+0x$(printf %x $((ev + es + 1)))  \?\?\$"
"$L" addr2line -f -e "$w/libext.so" "$(printf 0x%x $((ev + es)))" >"$w/ext.a2l"
[ "$(head -1 "$w/ext.a2l")" = ext_small ] || { fail "addr2line past ext_small: not GNU's answer"; cat "$w/ext.a2l"; }

# A program whose path holds control bytes, a C1 control, a byte that is not
# UTF-8 and a real UTF-8 letter: the hook writes its exe= and build_id=
# paths with the first three replaced by '?', one for one, the letter kept;
# the reader still finds the build ID for the maps path, so a rebuilt file
# there is a mismatch, not silently used.
hd="$w/$(printf 'h\033[31m\302\233\377\303\251d')"
mkdir -p "$hd"
printf '#include <stdlib.h>\nvoid *volatile keep;\nint main(void) { keep = malloc(77); return 0; }\n' >"$w/hp.c"
printf '#include <stdlib.h>\nvoid *volatile keep;\nint other(void) { return 3; }\nint main(void) { keep = malloc(77); return other(); }\n' >"$w/hp2.c"
gcc -g -O0 -o "$hd/prog" "$w/hp.c" || fail "cannot build the program in $hd"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/hp" "$hd/prog" || fail "hostile path: run"
hp=$(ls "$w"/hp.*.exit.dump)
"$L" show "$hp" 2>/dev/null | grep -a -q -F -x "  exe=$w/h?[31m???$(printf '\303\251')d/prog" ||
	{ fail "hostile path: exe= not cleaned as documented"; "$L" show "$hp" | grep -a 'exe=' | od -c | head -3; }
"$L" symbolize --json "$hp" >"$w/hp.json" 2>/dev/null || fail "hostile path: symbolize"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if [m["build_id_status"] for m in j["symbols"] if m["module"].endswith("/prog")] == ["match"] else 1)' "$w/hp.json" ||
	fail "hostile path: the build ID was not found for the maps path"
gcc -g -O0 -o "$hd/prog" "$w/hp2.c" || fail "cannot rebuild the program"
"$L" symbolize --json "$hp" >"$w/hp2.json" 2>/dev/null
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if [m["build_id_status"] for m in j["symbols"] if m["module"].endswith("/prog")] == ["mismatch"] else 1)' "$w/hp2.json" ||
	fail "hostile path: another build at the path was not a mismatch"

# Usage errors.
"$L" symbolize -s "$w/nope" "$d" >/dev/null 2>"$w/use.err"
[ $? = 2 ] && grep -q -x "leaksnap: $w/nope: No such file or directory" "$w/use.err" ||
	{ fail "--symbols of a missing directory"; cat "$w/use.err"; }
"$L" show -s "$w/syms/aosp" "$d" >/dev/null 2>&1 && fail "show took --symbols"
finish
