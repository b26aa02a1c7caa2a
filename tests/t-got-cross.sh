#!/bin/sh
# The GOT slot finder and swapper of the in-app build (hook/got*.c) on
# arm64 and 32-bit ARM (Thumb code, REL relocations), under qemu-user with
# the Debian cross sysroots: tests/got/gotcross, the checks of test_got
# (tests/got/gotcases.c) as a plain program, over libgotuse.c linked by GNU
# ld (lazy, -z now, -z norelro) and by lld through clang --target (lazy,
# APS2, APS2 + RELR with either tag set, RELR), each built by `make cross`
# or `make check` into $B/cross/ARCH/tests/got.  Every check must pass and
# every case run: exactly the case count of the variant table.
# Skips (77) when a cross compiler, qemu-user or a sysroot is missing.
set -u
B=$1
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

missing=
for a in arm64 arm; do
	case $a in
	arm64) triple=aarch64-linux-gnu qemu=qemu-aarch64 ;;
	arm) triple=arm-linux-gnueabihf qemu=qemu-arm ;;
	esac
	for t in $triple-gcc $qemu clang ld.lld; do
		command -v $t >/dev/null 2>&1 || missing="$missing $t"
	done
	[ -f /usr/$triple/lib/libc.so.6 ] || missing="$missing /usr/$triple/lib/libc.so.6"
	[ -x "$B/cross/$a/tests/got/gotcross" ] || missing="$missing $B/cross/$a/tests/got/gotcross (make cross)"
done
if [ -n "$missing" ]; then
	echo "SKIP: not installed:$missing; run 'sh scripts/ensure-deps.sh --cross' as root"
	exit 77
fi

w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-got.XXXXXX")
trap 'rm -rf "$w"' EXIT
for a in arm64 arm; do
	case $a in
	arm64) triple=aarch64-linux-gnu qemu=qemu-aarch64 ;;
	arm) triple=arm-linux-gnueabihf qemu=qemu-arm ;;
	esac
	d=$(cd "$B/cross/$a/tests/got" && pwd)
	$qemu -L /usr/$triple "$d/gotcross" "$d" >"$w/$a.out" 2>"$w/$a.err"
	st=$?
	cat "$w/$a.out"
	[ $st = 0 ] || fail "$a: gotcross exit status $st"
	[ -s "$w/$a.err" ] && { fail "$a: stderr not empty"; cat "$w/$a.err"; }
	grep -q '^FAIL' "$w/$a.out" && fail "$a: checks failed"
	# 8 variants, 6 of them loaded by glibc (4 cases) and 2 only by hand
	# (2 cases), and 8 cases of their own
	grep -q -x 'gotcross: 36 cases, 0 checks failed' "$w/$a.out" || fail "$a: not every case ran clean"
	# the formats are what their names say (checked in gotcase_selfload;
	# here, that the ARM build really has REL and the arm64 one RELA)
	case $a in
	arm64) rel='RELA' ;;
	arm) rel='REL' ;;
	esac
	readelf -d "$d/libgot-now.so" | grep -q "(PLTREL) *$rel\$" || fail "$a: libgot-now.so PLT relocations not $rel"
done
[ $fails = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "t-got-cross: arm64 and arm pass"
