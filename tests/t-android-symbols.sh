#!/bin/sh
# The whole Android path, arm64 and 32-bit ARM (Thumb) under qemu-user: the
# processes run stripped copies of the cross-built programs and libraries
# from a "device" directory (system/bin, system/lib64 or lib, an app's
# base.apk); the dumps' maps are rewritten to device paths with
# `leaksnap convert --rewrite-prefix` (the sysroot's libc becomes
# /apex/com.android.runtime/LIB/bionic/); a symbols tree laid out as AOSP's
# out/target/product/NAME/symbols holds the unstripped builds.  symbolize
# finds every module through the tree with its build ID verified and gives
# the x86-64 run's sites and source lines; the APK's library is found
# through the pulled APK and its build ID; a stale library is skipped when
# the real one follows, and flagged (build-id mismatch), never used, when
# it is all there is.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
. "$(dirname "$0")/android-lib.sh"
android_need python3
app=$APP

x86_reference

for a in $ARCHES; do
	abi_vars $a
	d=$w/$a dev=$w/$a/device tree=$w/$a/out/target/product/generic_$a/symbols
	bionic=apex/com.android.runtime/$LIBDIR/bionic
	mkdir -p "$dev/system/bin" "$dev/system/$LIBDIR" "$dev/$app/lib/$a" "$d/apks/$app" \
		"$tree/system/bin" "$tree/system/$LIBDIR" "$tree/$bionic" "$tree/system/app/Acme/lib/$a" \
		"$d/stale/system/$LIBDIR"
	# the device: stripped copies; the tree: the builds as linked
	for f in bin/leaks bin/apkload $LIBDIR/libleaker.so $LIBDIR/libleakhook.so; do
		case $f in
		bin/*) from=$XB/tests/hook/${f#bin/} ;;
		*/libleakhook.so) from=$XB/libleakhook.so ;;
		*) from=$XB/tests/hook/${f#*/} ;;
		esac
		$TRIPLE-strip -o "$dev/system/$f" "$from" && cp "$from" "$tree/system/$f" || fail "$a: $f"
	done
	# libc and the loader as the sysroot has them (Debian keeps .dynsym only)
	cp "$SYSROOT"/lib/libc.so.6 "$SYSROOT"/lib/ld-linux-*.so.* "$tree/$bionic/"
	[ $a = arm ] && cp "$SYSROOT/lib/libgcc_s.so.1" "$tree/$bionic/"
	$TRIPLE-strip -o "$d/libapk.so" "$XB/tests/hook/libapk.so"
	off=$(python3 "$top/tests/tools/mkapk.py" "$dev/$app/base.apk" "$d/libapk.so" "lib/$ABI/libapk.so") ||
		fail "$a: cannot make the APK"
	cp "$d/libapk.so" "$dev/$app/lib/$a/libapk.so"
	cp "$dev/$app/base.apk" "$d/apks/$app/base.apk" # adb pull
	cp "$XB/tests/hook/libapk.so" "$tree/system/app/Acme/lib/$a/libapk.so"
	# another build of libleaker.so: one more statement, another build ID
	sed 's/leaker_keep = p;/leaker_keep = p;\n\tleaker_keep2 = p;/; s/^void \*leaker_keep;/void *leaker_keep, *leaker_keep2;/' \
		"$top/tests/hook/libleaker.c" >"$d/stale.c"
	# shellcheck disable=SC2086
	$TRIPLE-gcc -O2 -g -fPIC -shared $ABI_CFLAGS -o "$d/stale/system/$LIBDIR/libleaker.so" "$d/stale.c" ||
		fail "$a: stale build"
	cmp -s "$d/stale/system/$LIBDIR/libleaker.so" "$tree/system/$LIBDIR/libleaker.so" &&
		fail "$a: the stale build is the same file"

	# run, rewrite the maps to device paths
	hook=$dev/system/$LIBDIR/libleakhook.so
	on_device $a "$d/leaks" "$hook" "$dev/system/bin/leaks" all "$dev/system/$LIBDIR/libleaker.so" >/dev/null 2>&1
	on_device $a "$d/apk" "$hook" "$dev/system/bin/apkload" "$dev/$app/base.apk" "$off" \
		"$dev/$app/lib/$a/libapk.so" 1201 1201 1202 >/dev/null 2>&1 || fail "$a: apkload"
	exit_dumps "$d/leaks"
	leaks=$parent
	apk=$(ls "$d"/apk.*.exit.dump) || { fail "$a: no dumps"; continue; }
	for f in "$leaks" "$apk"; do
		"$L" convert --rewrite-prefix "$dev/=/" --rewrite-prefix "$SYSROOT/lib/=/$bionic/" "$f" "$f.device" ||
			fail "$f: convert --rewrite-prefix"
		# no path of this machine is left in the maps or the build IDs
		{ "$L" maps "$f.device" && "$L" show "$f.device" | grep '^  build_id='; } >"$f.paths" ||
			fail "$f.device: unreadable"
		grep -e "$w" -e "$SYSROOT" "$f.paths" && fail "$f.device: host paths left"
		grep -q ' r-xp .*  /system/bin/[a-z]*  \[module' "$f.paths" || fail "$f.device: no /system/bin module"
	done

	# every module through the tree, build IDs matching; the x86-64 sites
	"$L" symbolize -v -s "$tree" "$leaks.device" >"$d/tree.out" 2>"$d/tree.err" ||
		{ fail "$a: symbolize"; cat "$d/tree.err"; }
	"$L" symbolize --json -s "$tree" "$leaks.device" >"$d/tree.json" || fail "$a: symbolize --json"
	$S status "$d/tree.json" >"$d/status"
	for m in /system/bin/leaks /system/$LIBDIR/libleaker.so /$bionic/libc.so.6; do
		grep -q -x "$m $tree$m match" "$d/status" || fail "$a: $m not found through the tree"
	done
	# (the cross toolchain's libc and ld.so are stripped: their local
	# functions, past the end of every exported symbol, have no name)
	grep -v -x -e "\\(/[^ ]*\\) $tree\\1 match" -e "unnamed /$bionic/[^ ]*" "$d/status" &&
		fail "$a: a module or frame not through the tree"
	$S records "$d/tree.json" $MODS >"$d/sites"
	cmp -s "$w/x86.parent.sites" "$d/sites" || { fail "$a: sites differ from x86-64"; diff "$w/x86.parent.sites" "$d/sites" | head -6; }

	# a stale libleaker.so: skipped before the real one, flagged alone
	"$L" symbolize -v -s "$d/stale" -s "$tree" "$leaks.device" >"$d/stale1.out" 2>&1 || fail "$a: symbolize (stale first)"
	grep -q -x "  /system/$LIBDIR/libleaker.so  $tree/system/$LIBDIR/libleaker.so  (build-id match)" "$d/stale1.out" ||
		{ fail "$a: stale first: module line"; grep libleaker "$d/stale1.out"; }
	"$L" symbolize -v -s "$d/stale" "$leaks.device" >"$d/stale2.out" 2>&1 || fail "$a: symbolize (stale only)"
	grep -q -x "  /system/$LIBDIR/libleaker.so  $d/stale/system/$LIBDIR/libleaker.so  (build-id mismatch)" "$d/stale2.out" &&
		grep -q -E "^    #00 0x[0-9a-f]+  /system/$LIBDIR/libleaker.so\\+0x[0-9a-f]+  \\(build-id mismatch\\)\$" "$d/stale2.out" ||
		{ fail "$a: stale only: not flagged"; grep libleaker "$d/stale2.out"; }
	grep -q leaker_alloc "$d/stale2.out" && fail "$a: the stale build was used"

	# the APK's library: through the pulled APK, its build ID, the tree
	mod="/$app/base.apk!/lib/$ABI/libapk.so"
	"$L" symbolize -v -s "$tree" -s "$d/apks" "$apk.device" >"$d/apk.out" 2>&1 || fail "$a: symbolize (apk)"
	grep -q -x "  $mod  $tree/system/app/Acme/lib/$a/libapk.so  (build-id match)" "$d/apk.out" ||
		{ fail "$a: apk: module line"; sed -n '/^symbol files/,$p' "$d/apk.out"; }
	"$L" symbolize --json -s "$tree" -s "$d/apks" "$apk.device" >"$d/apk.json" || fail "$a: symbolize --json (apk)"
	apk_sites "$d/apk.json" || fail "$a: apk sites"
done
finish
