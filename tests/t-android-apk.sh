#!/bin/sh
# A library run from inside an APK, in real processes: on arm64 and 32-bit
# ARM under qemu-user and on x86-64.  base.apk holds the stripped library
# (tests/hook/libapk.c) stored uncompressed and page-aligned; the process
# (tests/hook/apkload.c) maps the APK's bytes over the library's code, so
# its maps name base.apk at the entry's offset, as on a device.  The dump,
# symbolized on the host: the frames through the APK entry, named
# base.apk!/lib/ABI/libapk.so, with its build ID read from the APK; DWARF
# from the unstripped build found by name in a symbol tree (an inlined
# call, exact lines), a stale build in a tree before it skipped, the
# stripped entry's own symbol table when there is nothing else.  The three
# ABIs give the same records and source lines.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
. "$(dirname "$0")/android-lib.sh"
android_need python3
src=$top/tests/hook/libapk.c
app=$APP

for a in x86_64 $ARCHES; do
	if [ $a = x86_64 ]; then
		XB=$(cd "$B" && pwd) ABI=x86_64 strip=strip cc=gcc ABI_CFLAGS=
		lib=$T/libapk.so prog=$T/apkload hook=$HOOK
		run() { LD_PRELOAD=$hook LEAKSNAP_OUT="$out" "$@"; }
	else
		abi_vars $a
		strip=$TRIPLE-strip cc=$TRIPLE-gcc
		lib=$XB/tests/hook/libapk.so prog=$XB/tests/hook/apkload hook=$XB/libleakhook.so
		run() { on_device $a "$out" "$hook" "$@"; }
	fi
	d=$w/$a
	apk=$d/device/$app/base.apk
	extracted=$d/device/$app/lib/$a/libapk.so
	mkdir -p "${extracted%/*}" "$d/syms/out/target/product/x/symbols/$app/lib" "$d/stale"
	$strip -o "$d/libapk.stripped.so" "$lib" || { fail "$a: strip"; continue; }
	off=$(python3 "$top/tests/tools/mkapk.py" "$apk" "$d/libapk.stripped.so" "lib/$ABI/libapk.so") ||
		{ fail "$a: cannot make the APK"; continue; }
	cp "$d/libapk.stripped.so" "$extracted"
	cp "$lib" "$d/syms/out/target/product/x/symbols/$app/lib/libapk.so"
	sed 's/% 16/% 15/' "$src" >"$d/stale.c"
	# shellcheck disable=SC2086
	$cc -O2 -g -fPIC -shared $ABI_CFLAGS -o "$d/stale/libapk.so" "$d/stale.c" || fail "$a: stale build"

	out=$d/run
	run "$prog" "$apk" "$off" "$extracted" 1201 1201 1202 >"$out.stdout" 2>&1 ||
		{ fail "$a: apkload failed"; cat "$out.stdout"; continue; }
	dump=$(ls "$out".*.exit.dump)
	# the code is mapped from the APK, at the entry's offset and beyond
	m=$(awk -v apk="$apk" '$6 == apk && $2 ~ /x/ { print $3 }' "${dump%.dump}.maps")
	[ -n "$m" ] && [ $((0x$m)) -ge "$off" ] || { fail "$a: no code mapped from $apk"; cat "${dump%.dump}.maps"; }
	mod="$apk!/lib/$ABI/libapk.so"

	# the unstripped build by name in a symbol tree, a stale one first
	"$L" symbolize -v -s "$d/stale" -s "$d/syms" "$dump" >"$d/tree.out" 2>"$d/tree.err" ||
		{ fail "$a: symbolize"; cat "$d/tree.err"; }
	grep -q -x "  $mod  $d/syms/out/target/product/x/symbols/$app/lib/libapk.so  (build-id match)" "$d/tree.out" ||
		{ fail "$a: module line"; sed -n '/^symbol files/,$p' "$d/tree.out"; }
	"$L" symbolize --json -s "$d/stale" -s "$d/syms" "$dump" >"$d/tree.json" || fail "$a: symbolize --json"
	apk_sites "$d/tree.json" || fail "$a: sites"
	[ $a = x86_64 ] || cmp -s "$w/x86_64/tree.json.sites" "$d/tree.json.sites" || fail "$a: sites differ from x86-64"

	# only the stale build in a tree: never used; the APK's own (stripped)
	# copy names the function from its symbol table
	"$L" symbolize -v -s "$d/stale" "$dump" >"$d/stale.out" 2>&1 || fail "$a: symbolize (stale)"
	grep -q -x "  $mod  $mod  (build-id match, stripped)" "$d/stale.out" ||
		{ fail "$a: stale: module line"; sed -n '/^symbol files/,$p' "$d/stale.out"; }
	grep -q -E "^    #00 0x[0-9a-f]+  $apk\\+0x[0-9a-f]+  apk_leak\\+0x[0-9a-f]+\$" "$d/stale.out" ||
		{ fail "$a: stale: frame"; grep '#00' "$d/stale.out"; }
	grep -q "$src" "$d/stale.out" && fail "$a: the stale build's lines were used"
done
finish
