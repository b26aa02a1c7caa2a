#!/bin/sh
# The layout rules that a program can check (tests/tools/layout-check.sh):
# they hold for this tree, and a tree that breaks each of them is caught,
# each offender named.
set -eu
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
check=$top/tests/tools/layout-check.sh
st=0
sh "$check" "$B" >/dev/null 2>&1 || st=$?
if [ "$st" != 0 ]; then
	sh "$check" "$B" | grep -v ': 0 offenders$' || true
	[ "$st" = 77 ] && exit 77
	echo "the tree breaks its layout rules"; exit 1
fi

# A tree that breaks every rule once.
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-t-layout.XXXXXX")
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/top/libsnapshot" "$w/top/diff" "$w/top/cli" "$w/top/kit" "$w/top/report" \
	"$w/b/obj/libsnapshot" "$w/b/obj/kit" "$w/b/lib" "$w/b/include/leaksnap"
: >"$w/top/kit/kit.h"
: >"$w/top/diff/diff_internal.h"
: >"$w/top/report/report.h"
: >"$w/b/include/leaksnap/snapshot.h"
: >"$w/b/include/leaksnap/error.h"
: >"$w/top/kit/kit_run.h"
printf '#include <leaksnap/error.h>\n#include <leaksnap/snapshot.h>\n#include "kit_run.h"\n' >"$w/top/kit/k.c"
printf '#include "kit_run.h"\n' >"$w/top/kit/kit_run.c"
cat >"$w/top/libsnapshot/a.c" <<'C'
#include "kit.h"
#include "../cli/cli.h"
#include "diff_internal.h"
#include "report.h"
#include <leaksnap/snapshot.h>
#include <leaksnap/nothere.h>
C
printf '#include "report.h"\n#include "kit.h"\n#include "kit_run.h"\n' >"$w/top/cli/main.c"
printf '#include "kit_run.h"\n' >"$w/top/diff/d.c"
printf '#include <stdio.h>\nvoid say(void) { puts("x"); }\n' >"$w/p.c"
cc -c -o "$w/b/obj/libsnapshot/say.o" "$w/p.c"
printf '#include <stdio.h>\nvoid put(FILE *f, const char *s) { fputs(s, f); }\n' >"$w/f.c"
cc -c -o "$w/b/obj/kit/put.o" "$w/f.c"
printf 'void leaksnap_fine(void) {}\nvoid unprefixed(void) {}\n' >"$w/s.c"
cc -shared -fPIC -o "$w/b/lib/libleaksnap.so" "$w/s.c"
st=0
LAYOUT_TOP="$w/top" sh "$check" "$w/b" >"$w/out" 2>&1 || st=$?
[ "$st" = 1 ] || { echo "a tree breaking the rules: exit $st, expected 1"; cat "$w/out"; exit 1; }
cat >"$w/expected" <<'OUT'
layout-check: library objects that print: libsnapshot/say.o prints or exits: puts
layout-check: library objects that print: kit/put.o writes with stdio but is not a writer: fputs
layout-check: library objects that print: 2 offenders
layout-check: exported symbols without the leaksnap_ prefix: libleaksnap.so: unprefixed
layout-check: exported symbols without the leaksnap_ prefix: 1 offender
layout-check: includes of another folder's private header: libsnapshot/a.c: #include "../cli/cli.h" (a path out of the folder)
layout-check: includes of another folder's private header: libsnapshot/a.c: #include "diff_internal.h" (diff/diff_internal.h; not a file of libsnapshot/ or a kit header)
layout-check: includes of another folder's private header: libsnapshot/a.c: #include "report.h" (report/report.h; not a file of libsnapshot/ or a kit header)
layout-check: includes of another folder's private header: libsnapshot/a.c: #include <leaksnap/nothere.h> (not a public header)
layout-check: includes of another folder's private header: diff/d.c: #include "kit_run.h" (the tool's process runner, in a library folder)
layout-check: includes of another folder's private header: kit/k.c: #include <leaksnap/snapshot.h> (the kit includes no stage's header)
layout-check: includes of another folder's private header: 6 offenders
OUT
if ! diff -u "$w/expected" "$w/out"; then
	echo "the offenders of a tree breaking the rules differ"; exit 1
fi
