# Shared by the Android tests (sourced after hook-lib.sh): the two ABIs that
# `make cross` builds (build/cross/ARCH), run under qemu-user with the
# Debian cross sysroots.  The hook runs in those processes as it would on a
# phone; everything after the dump runs on this x86-64 host.

ARCHES="arm64 arm"

# abi_vars ARCH: TRIPLE, QEMU, SYSROOT, XB (the cross build directory),
# LIBDIR (lib64 or lib, as on a device), ABI (the APK's lib/ directory),
# PSIZE (pointer size), UNWINDERS ("mode:unwinder=:walk" for
# LEAKSNAP_UNWIND auto, dwarf and fp; walk as expect_leaks takes it).
abi_vars() {
	case $1 in
	arm64)
		TRIPLE=aarch64-linux-gnu QEMU=qemu-aarch64 LIBDIR=lib64 ABI=arm64-v8a PSIZE=8
		# GCC keeps arm64 frame records even at -O2: fp walks whole stacks
		UNWINDERS="auto:dwarf+fp:full dwarf:dwarf:full fp:fp:full"
		;;
	arm)
		TRIPLE=arm-linux-gnueabihf QEMU=qemu-arm LIBDIR=lib ABI=armeabi-v7a PSIZE=4
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
	LEAKSNAP_OUT=$_out $QEMU -L "$SYSROOT" -E LD_PRELOAD="$_hook" "$@"
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
