#!/bin/sh
# leaksnap symbolize on a real dump: the demo program recorded with the
# hook, symbolized against symbol trees laid out as AOSP does
# (DIR/<device path>), as .build-id/xx/rest.debug, found by name, and at
# the host path; a stale file (another build ID), a missing file and a
# corrupt ELF are reported and never give a wrong answer.
set -u
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
expect "$w/stale-only.out" "^  $dev/leaky  -  \\(build-id mismatch\\)\$"
grep -q 'cache_put' "$w/stale-only.out" && fail "the stale file was used"
# Nothing anywhere: missing.
symbolize none -v
expect "$w/none.out" "^    #00 0x[0-9a-f]+  $dev/leaky\\+0x[0-9a-f]+  \\(no symbol file\\)\$"
expect "$w/none.out" "^  $dev/leaky  -  \\(build-id missing\\)\$"
[ "$(cat "$w/none.st")" = 0 ] || fail "a missing symbol file is not an error"
# A corrupt candidate: one error line, status 2, the rest still symbolized.
symbolize bad -s "$w/syms/bad" -s "$w/syms/aosp"
[ "$(cat "$w/bad.st")" = 2 ] || fail "corrupt symbol file: status $(cat "$w/bad.st")"
grep -q -x "leaksnap: $w/syms/bad$dev/leaky: .*" "$w/bad.err" && [ "$(wc -l <"$w/bad.err")" = 1 ] ||
	{ fail "corrupt symbol file: stderr"; cat "$w/bad.err"; }
expect "$w/bad.out" "  cache_put  $src:$put:"
mv "$dev/leaky.away" "$dev/leaky"

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

# Usage errors.
"$L" symbolize -s "$w/nope" "$d" >/dev/null 2>"$w/use.err"
[ $? = 2 ] && grep -q -x "leaksnap: $w/nope: No such file or directory" "$w/use.err" ||
	{ fail "--symbols of a missing directory"; cat "$w/use.err"; }
"$L" show -s "$w/syms/aosp" "$d" >/dev/null 2>&1 && fail "show took --symbols"
finish
