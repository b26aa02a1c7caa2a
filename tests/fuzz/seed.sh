#!/bin/sh
# Write first seed corpora for the fuzz harnesses from the project's own
# fixtures (mkfixture's binary dumps, testdata/, the symbolizer's committed
# ELF files), shaped as each harness reads its input (see tests/fuzz/*.c).
# Usage: seed.sh BUILD_DIR OUT_DIR   (OUT_DIR/<harness>/ is created)
# tests/fuzz/corpus/ holds these seeds plus what fuzzing found, minimized
# with `fuzz_<name> -merge=1`; rerun this only to start corpora afresh.
set -eu
B=$1 out=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
fx=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-seed.XXXXXX")
trap 'rm -rf "$fx"' EXIT INT TERM
"$B/tests/mkfixture" "$fx"
for h in detect leaksnap raw nhgt text maps suppressions symbolizer; do
	mkdir -p "$out/$h"
done
for f in "$fx"/*.dump "$fx"/*.nhgt "$top"/testdata/text/*.txt "$top"/testdata/diff/run*.txt; do
	cp "$f" "$out/detect/$(basename "$f")"
done
# LEAKSNAP: what follows the magic.
for f in "$fx"/*.dump; do
	[ "$(head -c 8 "$f")" = LEAKSNAP ] || continue
	tail -c +9 "$f" >"$out/leaksnap/$(basename "$f")"
done
# Raw: byte 0 = pointer size (bit 0: 8) and count-is-frames (bit 1),
# byte 1 = frames - 1; as the golden tests read these buffers.
{ printf '\001\003'; cat "$fx/sample64.raw"; } >"$out/raw/sample64.raw"
{ printf '\000\003'; cat "$fx/sample32.raw"; } >"$out/raw/sample32.raw"
{ printf '\001\003'; cat "$fx/android7.raw"; } >"$out/raw/android7.raw"
{ printf '\003\003'; cat "$fx/android7.raw"; } >"$out/raw/android7-forced.raw"
{ printf '\000\003'; cat "$fx/raw-not-multiple.raw"; } >"$out/raw/raw-not-multiple.raw"
# NHGT: byte 0 = 1 and what follows the signature, or 0 and the old header.
for f in "$fx"/*.nhgt; do
	n=$(basename "$f")
	if [ "$n" = sample-old.nhgt ]; then
		{ printf '\000'; cat "$f"; } >"$out/nhgt/$n"
	else
		{ printf '\001'; tail -c +5 "$f"; } >"$out/nhgt/$n"
	fi
done
# Text: what follows "Android Native Heap Dump v".
for f in "$top"/testdata/text/*.txt "$top"/testdata/diff/run*.txt "$top"/testdata/demo/app-heap.txt; do
	python3 - "$f" "$out/text/$(basename "$f")" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
h = b'Android Native Heap Dump v'
i = d.find(h)
if i >= 0:
    open(sys.argv[2], 'wb').write(d[i + len(h):])
PY
done
cp "$top"/testdata/maps/*.maps "$out/maps/"
cp "$top"/testdata/diff/*suppressions*.txt "$out/suppressions/"
printf 'leak:^operator new*$\nleak:lib*.so\0operator new(unsigned long)' \
	>"$out/suppressions/pattern-and-name"
for f in "$top"/tests/symbolizer/cross/*; do
	case $f in *.c | *.sh) continue ;; esac
	cp "$f" "$out/symbolizer/$(basename "$f")"
done
# A debug-only file (objcopy --only-keep-debug: segments without their file
# offsets), whose layout the harness takes from mappings.
printf 'int g(int x) { return x * 3; }\nvoid _start(void) { for (;;) g(1); }\n' >"$fx/debug-only.c"
gcc -g -O1 -nostdlib -static -Wl,--build-id -o "$fx/debug-only" "$fx/debug-only.c" &&
	objcopy --only-keep-debug "$fx/debug-only" "$out/symbolizer/debug-only"
