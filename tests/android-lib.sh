# Shared by the Android tests (sourced after hook-lib.sh): the two ABIs that
# `make cross` builds (build/cross/ARCH), run under qemu-user with the
# Debian cross sysroots.  The hook runs in those processes as it would on a
# phone; everything after the dump runs on this x86-64 host.

ARCHES="arm64 arm"
S="python3 $top/tests/tools/sites.py"
MODS="leaks libleaker.so" # the leak program's own modules
APP=data/app/~~Zm9v==/com.acme.app-YmFy== # an app's directory on a device

# abi_vars ARCH: TRIPLE, QEMU, SYSROOT, XB (the cross build directory),
# LIBDIR (lib64 or lib, as on a device), ABI (the APK's lib/ directory),
# PSIZE (pointer size), ABI_CFLAGS (the Makefile's CROSS_FLAGS, for code
# a test builds itself), UNWINDERS ("mode:unwinder=:walk" for
# LEAKSNAP_UNWIND auto, dwarf and fp; walk as expect_leaks takes it).
abi_vars() {
	case $1 in
	arm64)
		TRIPLE=aarch64-linux-gnu QEMU=qemu-aarch64 LIBDIR=lib64 ABI=arm64-v8a PSIZE=8
		ABI_CFLAGS=
		# GCC keeps arm64 frame records even at -O2: fp walks whole stacks
		UNWINDERS="auto:dwarf+fp:full dwarf:dwarf:full fp:fp:full"
		;;
	arm)
		TRIPLE=arm-linux-gnueabihf QEMU=qemu-arm LIBDIR=lib ABI=armeabi-v7a PSIZE=4
		ABI_CFLAGS="-mthumb -funwind-tables"
		# EHABI tables for auto and dwarf; no frame records: fp is frame 0
		UNWINDERS="auto:ehabi:full dwarf:ehabi:full fp:fp:caller"
		;;
	*) echo "abi_vars: unknown arch $1"; exit 1 ;;
	esac
	SYSROOT=/usr/$TRIPLE
	XB=$(cd "$B" && pwd)/cross/$1
}

# android_need TOOL...: skip the test (status 77, with the reason on the
# last line) unless both cross builds, qemu-user, the cross sysroots and
# TOOLs are here.  `sh scripts/ensure-deps.sh --cross` (as root) installs
# them; .ci/run does.
android_need() {
	missing=
	for a in $ARCHES; do
		abi_vars $a
		for f in libleakhook.so tests/hook/leaks tests/hook/apkload tests/hook/libleaker.so \
			tests/hook/libapk.so; do
			[ -f "$XB/$f" ] || { missing="$missing $B/cross/$a (make cross)"; break; }
		done
		for t in $QEMU $TRIPLE-strip $TRIPLE-gcc; do
			command -v $t >/dev/null 2>&1 || missing="$missing $t"
		done
		[ -f "$SYSROOT/lib/libc.so.6" ] || missing="$missing $SYSROOT/lib/libc.so.6"
	done
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
	done
	if [ -n "$missing" ]; then
		echo "SKIP: not installed:$missing; run 'sh scripts/ensure-deps.sh --cross' as root"
		exit 77
	fi
}

# on_device ARCH OUT HOOK CMD ARGS...: run CMD (built for ARCH) under
# qemu-user with HOOK preloaded into it (not into qemu) and its dumps
# written as OUT.PID.*; the other LEAKSNAP_* variables pass through.
on_device() {
	_a=$1 _out=$2 _hook=$3
	shift 3
	abi_vars "$_a"
	# No thread started at fork (qemu-user aborts when a forked child of a
	# threaded process starts one: its plugin table keeps the parent's
	# vCPU numbers, and the child's new one takes a number already there),
	# and the forked child's exit dump too (the tests read both).
	LEAKSNAP_OUT=$_out LEAKSNAP_FORK_THREAD=0 LEAKSNAP_DUMP_ON_EXIT=all \
		$QEMU -L "$SYSROOT" -E LD_PRELOAD="$_hook" "$@"
}

# exit_dumps OUT: the exit dumps of a run, parent before forked child (the
# child's has a zygote record), in $parent and $child ($child empty when
# there is one dump).
exit_dumps() {
	parent= child=
	for _d in "$1".*.exit.dump; do
		[ -f "$_d" ] || continue
		"$SC" "$_d" >"$_d.txt" || fail "$_d: stackcheck failed"
		if grep -q ' zygote ' "$_d.txt"; then child=$_d; else parent=$_d; fi
	done
}

# apk_sites JSON: whether `leaksnap symbolize --json` of a run of
# "apkload APK OFFSET LIB 1201 1201 1202" gives exactly its two leaks, each
# through the inlined apk_block() into apk_leak(), called from main, at the
# lines marked in the sources.
apk_sites() {
	_src=$top/tests/hook/libapk.c
	_b=$(grep -n 'LINE apk_block' "$_src" | cut -d: -f1)
	_l=$(grep -n 'LINE apk_leak' "$_src" | cut -d: -f1)
	_m=$(grep -n 'leak((size_t)' "$top/tests/hook/apkload.c" | cut -d: -f1)
	_tail="inline apk_block $_src:$_b:9 | apk_leak $_src:$_l:12 | main $top/tests/hook/apkload.c:$_m:3"
	$S records "$1" base.apk apkload >"$1.sites"
	printf '1201 2 app | %s\n1202 1 app | %s\n' "$_tail" "$_tail" | cmp -s - "$1.sites" ||
		{ echo "    have:"; sed 's/^/      /' "$1.sites"; return 1; }
}

# x86_reference: the leak program run natively under the hook ("leaks all
# LIBLEAKER"), its exit dumps symbolized: the sites of the program's own
# leaks (sites.py records) in $w/x86.parent.sites and $w/x86.child.sites,
# the reference the other ABIs' runs must give.
x86_reference() {
	LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/x86" LEAKSNAP_DUMP_ON_EXIT=all "$T/leaks" all "$T/libleaker.so" \
		>/dev/null 2>&1
	exit_dumps "$w/x86"
	[ -n "$parent" ] && [ -n "$child" ] || fail "x86-64: no parent and child dumps"
	"$L" symbolize --json "$parent" >"$w/x86.parent.json" &&
		"$L" symbolize --json "$child" >"$w/x86.child.json" || fail "x86-64: symbolize"
	$S records "$w/x86.parent.json" $MODS >"$w/x86.parent.sites"
	$S records "$w/x86.child.json" $MODS >"$w/x86.child.sites"
	# 12 leaks, the forked child's only in the child's dump
	[ "$(wc -l <"$w/x86.parent.sites")" = 11 ] && [ "$(wc -l <"$w/x86.child.sites")" = 12 ] ||
		{ fail "x86-64: not 11 and 12 leak sites"; cat "$w/x86.parent.sites"; }
}
