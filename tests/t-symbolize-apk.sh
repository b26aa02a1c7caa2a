#!/bin/sh
# A library loaded straight out of an APK: stored uncompressed and
# page-aligned in base.apk, mapped from the APK at its offset.  symbolize
# finds the stored entry, names the module base.apk!/lib/x86_64/libapk.so,
# reads its symbols from the APK itself, or from a symbol directory by
# name when the APK holds a stripped copy -- and never from a stale build.
set -u
# no debuginfod server of the environment answers for the files made here
unset DEBUGINFOD_URLS
B=$1
. "$(dirname "$0")/hook-lib.sh"
for tool in gcc python3 readelf strip; do
	command -v $tool >/dev/null 2>&1 || { echo "$tool is not installed"; exit 77; }
done
cd "$w" || exit 1
cat >apklib.c <<'EOF'
static inline int apk_twice(int x)
{
	return x * 2 + (x >> 4); /* LINE apk_twice */
}

__attribute__((noinline)) int apk_leaf(int x)
{
	return apk_twice(x) ^ 0x55; /* LINE apk_leaf */
}
EOF
gcc -g -O2 -shared -fPIC -Wl,-z,max-page-size=4096 -Wl,--build-id -o libapk.so apklib.c ||
	{ echo "cannot build the library"; exit 1; }
strip -o libapk-stripped.so libapk.so
sed 's/0x55/0x56/' apklib.c >stale.c
gcc -g -O2 -shared -fPIC -Wl,-z,max-page-size=4096 -Wl,--build-id -o libapk-stale.so stale.c

mkapk() { # OUT LIB: the APK, with LIB as lib/x86_64/libapk.so; prints its offset
	python3 "$top/tests/tools/mkapk.py" "$1" "$2" lib/x86_64/libapk.so
}
dev=/data/app/~~Zm9v==/com.acme.app-YmFy==/base.apk
mkdir -p "apk$(dirname $dev)" syms/lib/deep stale
off=$(mkapk "apk$dev" libapk.so) || { echo "cannot make the APK"; exit 1; }
mkdir -p "apk2$(dirname $dev)"
off2=$(mkapk "apk2$dev" libapk-stripped.so) || exit 1
[ "$off" = "$off2" ] || fail "the two APKs put the library at different offsets"
cp libapk.so syms/lib/deep/libapk.so
cp libapk-stale.so stale/libapk.so

# The dump: the library's segments mapped from the APK at its offset; one
# record whose return address is inside apk_leaf (file offset of the
# function + 5, looked up at + 4).
fn=$(readelf -sW libapk.so | awk '$8 == "apk_leaf" { print $2; exit }')
fnoff=$(python3 - libapk.so "$fn" <<'EOF'
import subprocess, sys
lib, fn = sys.argv[1], int(sys.argv[2], 16)
for l in subprocess.run(['readelf', '-lW', lib], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == 'LOAD':
        off, va, fsz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
        if va <= fn < va + fsz:
            print(fn - va + off)
EOF
)
base=$((0x7f0000000000))
size=$(stat -c %s libapk.so)
end=$((base + (size + 4095) / 4096 * 4096))
pc=$(printf '%x' $((base + fnoff + 5)))
{
	printf 'Android Native Heap Dump v1.2\n\nTotal memory: 96\nAllocation records: 1\nBacktrace size: 1\n\n'
	printf 'z 0  sz       96  num    1  bt %s\n' "$pc"
	printf 'MAPS\n'
	printf '%x-%x r-xp %08x fd:01 77   %s\n' $base $end "$off" "$dev"
	printf 'END\n'
} >apk.txt

line_of() { grep -n "LINE $1" apklib.c | cut -d: -f1; }
check() { # NAME OUT: the frame and the module line
	grep -q -E "^    #00 0x0*$pc  $dev\\+0x[0-9a-f]+  apk_twice  $w/apklib.c:$(line_of apk_twice):[0-9]+\$" "$2" &&
		grep -q -E "^        inlined into  apk_leaf  $w/apklib.c:$(line_of apk_leaf):[0-9]+\$" "$2" ||
		{ fail "$1: frame"; sed -n '/^#1/,/^$/p' "$2"; }
}
# the APK alone (its library has DWARF)
"$L" symbolize -v -s "$w/apk" apk.txt >a.out 2>a.err || { fail "apk: status"; cat a.err; }
check apk a.out
grep -q -x "  $dev!/lib/x86_64/libapk.so  $w/apk$dev!/lib/x86_64/libapk.so  (build-id match)" a.out ||
	{ fail "apk: module line"; tail -3 a.out; }
# a stripped library in the APK, the real one found by name in a symbol tree,
# the stale one (another build ID) skipped
"$L" symbolize -v -s "$w/stale" -s "$w/apk2" -s "$w/syms" apk.txt >b.out 2>b.err || { fail "symbols: status"; cat b.err; }
check symbols b.out
grep -q -x "  $dev!/lib/x86_64/libapk.so  $w/syms/lib/deep/libapk.so  (build-id match)" b.out ||
	{ fail "symbols: module line"; tail -3 b.out; }
# only the stripped APK: its symbol table names the function
"$L" symbolize -s "$w/apk2" apk.txt >c.out 2>c.err || { fail "stripped: status"; cat c.err; }
grep -q -E "^    #00 0x0*$pc  $dev\\+0x[0-9a-f]+  apk_leaf\\+0x4\$" c.out || { fail "stripped: frame"; sed -n '/^#1/,$p' c.out; }
# no APK anywhere: said, not guessed
"$L" symbolize --verbose apk.txt >d.out 2>d.err
grep -q -E "^    #00 0x0*$pc  $dev\\+0x[0-9a-f]+  \\(no symbol file\\)\$" d.out || { fail "no apk: frame"; cat d.out; }
finish
