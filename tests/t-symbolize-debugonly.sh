#!/bin/sh
# Symbols from a debug-only file (objcopy --only-keep-debug: the segments
# keep their addresses, not their file offsets) when the module's own file
# is not here: at the path the maps name lies a stripped file of another
# build, and the only file with the dump's build ID is the debug file, in
# a .build-id tree or by name.  The layout then comes from the dump's maps
# (the mapping at offset 0, or the executable mapping alone), and
# symbolize and leakdiff give exact functions and lines; --verbose and
# symbols[] say so.  Maps that fit none of the file's segments are one
# error line, exit 2, and no answer.  A code segment at file offset 0 (ld -z
# noseparate-code) and a file page lld maps twice.  With libc6-dbg, libc under a path this
# host does not have is symbolized from /usr/lib/debug the same way.
set -u
# no debuginfod server of the environment answers for the files made here
unset DEBUGINFOD_URLS
B=$1
. "$(dirname "$0")/hook-lib.sh"
for tool in gcc objcopy strip readelf; do
	command -v $tool >/dev/null 2>&1 || { echo "$tool is not installed"; exit 77; }
done
src=$top/tests/symbolizer/grow.c
line() { grep -n "$1" "$src" | head -1 | cut -d: -f1; }
alloc=$(line 'grow-alloc')
call=$(line 'grow-call')
maincall=$(line 'main-call')

dev=$w/device/bin
mkdir -p "$dev" "$w/syms/byname/a/b"
gcc -g -O1 -o "$w/grow.full" "$src" || fail "cannot build grow"
strip -o "$dev/grow" "$w/grow.full"
# two runs (two load addresses): a dump midway in the first, at exit in the second
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/r1" "$dev/grow" "$w/mid.dump" || fail "grow under the hook"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/r2" "$dev/grow" || fail "grow under the hook"
old=$w/mid.dump
new=$(ls "$w"/r2.*.exit.dump)
[ -f "$old" ] && [ -f "$new" ] || { fail "no dumps"; exit 1; }
id=$(readelf -n "$w/grow.full" | sed -n 's/.*Build ID: //p')
dbg=$w/syms/bid/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
mkdir -p "$(dirname "$dbg")"
objcopy --only-keep-debug "$w/grow.full" "$dbg"
objcopy --only-keep-debug "$w/grow.full" "$w/syms/byname/a/b/grow"
# the file at the device path becomes another build (stale), stripped
sed 's/64 + /72 + /' "$src" >"$w/grow2.c"
gcc -g -O1 -o "$w/grow2" "$w/grow2.c" || fail "cannot build the stale grow"
strip -o "$dev/grow" "$w/grow2"
[ "$(readelf -n "$dev/grow" | sed -n 's/.*Build ID: //p')" != "$id" ] || fail "the stale build has the same build ID"

expect() { # FILE REGEX: a line matches
	grep -q -E -e "$2" "$1" || { fail "$1: no line matching '$2'"; grep -E '#0[0-2] |grow' "$1" | head -6 | sed 's/^/    have: /'; }
}
run() { # NAME CMD...: keep stdout, stderr, status
	n=$1
	shift
	"$@" >"$w/$n.out" 2>"$w/$n.err"
	echo $? >"$w/$n.st"
}
frames_ok() { # FILE: the growing stack, symbolized
	expect "$1" "^ +(> )?#00 0x[0-9a-f]+  $dev/grow\\+0x[0-9a-f]+  grow_one  $src:$alloc:[0-9]+\$"
	expect "$1" "^ +(> )?#01 0x[0-9a-f]+  $dev/grow\\+0x[0-9a-f]+  grow  $src:$call:[0-9]+\$"
	expect "$1" "^ +(> )?#02 0x[0-9a-f]+  $dev/grow\\+0x[0-9a-f]+  main  $src:$maincall:[0-9]+\$"
}
clean() { # NAME: status 0, nothing on stderr
	[ "$(cat "$w/$1.st")" = 0 ] || fail "$1: status $(cat "$w/$1.st")"
	[ -s "$w/$1.err" ] && { fail "$1: stderr"; cat "$w/$1.err"; }
}

# .build-id and by name: the layout from the maps
run bid "$L" symbolize -v -s "$w/syms/bid" "$new"
clean bid
frames_ok "$w/bid.out"
expect "$w/bid.out" "^  $dev/grow  $dbg  \\(build-id match, debug-only: layout from the maps\\)\$"
run byname "$L" symbolize -v -s "$w/syms/byname" "$new"
clean byname
frames_ok "$w/byname.out"
expect "$w/byname.out" "^  $dev/grow  $w/syms/byname/a/b/grow  \\(build-id match, debug-only: layout from the maps\\)\$"
run json "$L" symbolize --json -s "$w/syms/bid" "$new"
clean json
expect "$w/json.out" "^    \\{\"module\": \"$dev/grow\", \"symbol_file\": \"$dbg\", \"build_id_status\": \"match\", \"error\": null, \"layout\": \"maps\"\\},?\$"
expect "$w/json.out" "\"function\": \"grow_one\", \"file\": \"$src\", \"line\": $alloc,"

# Without the mapping at offset 0: the executable mapping alone
grep -v " 00000000 .*$dev/grow\$" "${new%.dump}.maps" >"$w/noexec0.maps"
[ "$(grep -c "$dev/grow\$" "$w/noexec0.maps")" -lt "$(grep -c "$dev/grow\$" "${new%.dump}.maps")" ] ||
	fail "the maps had no mapping at offset 0"
run x "$L" symbolize -v -s "$w/syms/bid" --maps "$w/noexec0.maps" "$new"
clean x
frames_ok "$w/x.out"
expect "$w/x.out" "^  $dev/grow  $dbg  \\(build-id match, debug-only: layout from the maps\\)\$"

# Maps that fit no segment (no mapping at offset 0, none executable): one
# error line, exit 2, the frames say why they have no answer.
sed "/$(echo "$dev" | sed 's,/,\\/,g')\\/grow\$/s/ r-xp / r--p /" "$w/noexec0.maps" >"$w/misfit.maps"
run misfit "$L" symbolize -v -s "$w/syms/bid" --maps "$w/misfit.maps" "$new"
[ "$(cat "$w/misfit.st")" = 2 ] || fail "misfit: status $(cat "$w/misfit.st")"
printf 'leaksnap: %s: a debug-only file whose segments fit none of the mappings of %s in the maps\n' \
	"$dbg" "$dev/grow" >"$w/misfit.want"
cmp -s "$w/misfit.err" "$w/misfit.want" || { fail "misfit: stderr"; diff "$w/misfit.want" "$w/misfit.err"; }
expect "$w/misfit.out" "^    #00 0x[0-9a-f]+  $dev/grow\\+0x[0-9a-f]+  \\(debug-only symbol file, no layout\\)\$"
expect "$w/misfit.out" "^  $dev/grow  $dbg  \\(build-id match, debug-only: no layout\\)\$"
grep -q 'grow_one' "$w/misfit.out" && fail "misfit: a frame was answered"

# leakdiff across the two runs (other load addresses)
run diff "$L" diff -s "$w/syms/bid" "$old" "$new"
clean diff
frames_ok "$w/diff.out"
run diffj "$(dirname "$L")/leakdiff" --json -s "$w/syms/bid" "$old" "$new"
clean diffj
expect "$w/diffj.out" "^    \\{\"module\": \"$dev/grow\", \"symbol_file\": \"$dbg\", \"build_id_status\": \"match\", \"error\": null, \"layout\": \"maps\"\\},?\$"
expect "$w/diffj.out" "\"function\": \"grow_one\", \"file\": \"$src\", \"line\": $alloc,"

# The module's own file of the same build is here: its layout, as before
cp "$w/grow.full" "$dev/grow"
strip "$dev/grow"
run host "$L" symbolize -v -s "$w/syms/bid" "$new"
clean host
frames_ok "$w/host.out"
expect "$w/host.out" "^  $dev/grow  $dbg  \\(build-id match, debug-only: layout from the module's own file\\)\$"

# A distribution's debug package (libc6-dbg): libc of "another machine"
# (its path rewritten to one this host does not have) from its debug file
# under /usr/lib/debug/.build-id alone
libc=$(sed -n 's/^[0-9a-f-]* r-xp .* \(\/.*\/libc\.so\.6\)$/\1/p' "${new%.dump}.maps" | head -1)
libcid=$("$L" show "$new" | sed -n "s|^  build_id=\([0-9a-f]*\) $libc\$|\1|p")
if [ -n "$libc" ] && [ -n "$libcid" ] &&
	[ -f "/usr/lib/debug/.build-id/$(echo "$libcid" | cut -c1-2)/$(echo "$libcid" | cut -c3-).debug" ]; then
	run rw "$L" convert --rewrite-prefix "$(dirname "$libc")/=/nonexistent/lib/" "$new" "$w/rw.dump"
	clean rw
	run dbgsym "$L" symbolize -v -s /usr/lib/debug "$w/rw.dump"
	[ "$(cat "$w/dbgsym.st")" = 0 ] || fail "dbgsym: status $(cat "$w/dbgsym.st")"
	# (the stale stripped grow here is said once; nothing else)
	grep -v -x "leaksnap: $dev/grow: warning: stripped, and no debug file found: .*" "$w/dbgsym.err" &&
		fail "dbgsym: stderr"
	[ "$(grep -c "^leaksnap: $dev/grow: warning: stripped" "$w/dbgsym.err")" = 1 ] ||
		fail "dbgsym: the stripped grow not said once"
	expect "$w/dbgsym.out" "^ +#0[0-9] 0x[0-9a-f]+  /nonexistent/lib/libc\.so\.6\+0x[0-9a-f]+  __libc_start_call_main  .*libc_start_call_main\.h:[0-9]+:[0-9]+\$"
	expect "$w/dbgsym.out" "^  /nonexistent/lib/libc\.so\.6  /usr/lib/debug/\.build-id/.*\.debug  \(build-id match, debug-only: layout from the maps\)\$"
else
	echo "no libc debug file by build ID (libc6-dbg): the dbgsym case is not checked"
fi

# ld -z noseparate-code (the arm64 and armhf default): the code segment
# starts at file offset 0, so the debug-only file keeps some of it (the ELF
# header, the notes), yet its code is not there: still debug-only, with
# the layout of the module's own file.
mkdir -p "$w/nsc" "$w/syms/nsc"
gcc -g -O1 -Wl,-z,noseparate-code -o "$w/nsc/grow" "$src" || fail "cannot build grow -z noseparate-code"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/nsc/r" "$w/nsc/grow" || fail "grow -z noseparate-code under the hook"
nid=$(readelf -n "$w/nsc/grow" | sed -n 's/.*Build ID: //p')
ndbg=$w/syms/nsc/.build-id/$(echo "$nid" | cut -c1-2)/$(echo "$nid" | cut -c3-).debug
mkdir -p "$(dirname "$ndbg")"
objcopy --only-keep-debug "$w/nsc/grow" "$ndbg"
run nsc "$L" symbolize -v -s "$w/syms/nsc" "$(ls "$w"/nsc/r.*.exit.dump)"
clean nsc
dev=$w/nsc
frames_ok "$w/nsc.out"
expect "$w/nsc.out" "^  $w/nsc/grow  $ndbg  \\(build-id match, debug-only: layout from the module's own file\\)\$"

# lld packs segments without page alignment: one file page is mapped
# read-only and again executable, at the same offset.  With the layout from
# the maps, a frame there is in the executable one.
if command -v clang >/dev/null 2>&1 && command -v ld.lld >/dev/null 2>&1; then
	mkdir -p "$w/lld/dev" "$w/syms/lld"
	cat >"$w/lld/lib.c" <<'X'
#include <stdlib.h>
void *lld_keep;
__attribute__((noinline)) void *lld_leaf(size_t n)
{
	void *p = malloc(n); /* lld-alloc */
	lld_keep = p;
	__asm__ volatile("" ::: "memory");
	return p;
}
X
	printf 'void *lld_leaf(unsigned long);
int main(void) { return lld_leaf(4321) == 0; }
' >"$w/lld/main.c"
	clang -g -O1 -fPIC -shared -fuse-ld=lld -o "$w/lld/libl.so" "$w/lld/lib.c" &&
		clang -g -O1 -fuse-ld=lld -o "$w/lld/main" "$w/lld/main.c" -L"$w/lld" -ll \
			-Wl,-rpath,"$w/lld/dev" || fail "cannot build with lld"
	cp "$w/lld/libl.so" "$w/lld/dev/libl.so"
	LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/lld/r" "$w/lld/main" || fail "the lld program under the hook"
	lmaps=$(ls "$w"/lld/r.*.exit.maps)
	# the page shared: an r--p and an r-xp mapping of libl.so at one offset
	[ "$(awk '/libl\.so$/ { print $3 }' "$lmaps" | sort | uniq -d | wc -l)" -ge 1 ] ||
		echo "lld put no file page in two mappings here: the case is not checked"
	lid=$(readelf -n "$w/lld/libl.so" | sed -n 's/.*Build ID: //p')
	ldbg=$w/syms/lld/.build-id/$(echo "$lid" | cut -c1-2)/$(echo "$lid" | cut -c3-).debug
	mkdir -p "$(dirname "$ldbg")"
	objcopy --only-keep-debug "$w/lld/libl.so" "$ldbg"
	# the module's own file becomes another build: the layout from the maps
	sed 's/malloc(n)/malloc(n + 1)/' "$w/lld/lib.c" >"$w/lld/lib2.c"
	clang -g -O1 -fPIC -shared -fuse-ld=lld -o "$w/lld/dev/libl.so" "$w/lld/lib2.c"
	run lld "$L" symbolize -v -s "$w/syms/lld" "$(ls "$w"/lld/r.*.exit.dump)"
	clean lld
	expect "$w/lld.out" "^    #00 0x[0-9a-f]+  $w/lld/dev/libl\\.so\\+0x[0-9a-f]+  lld_leaf  $w/lld/lib\\.c:5:[0-9]+\$"
	expect "$w/lld.out" "^  $w/lld/dev/libl\\.so  $ldbg  \\(build-id match, debug-only: layout from the maps\\)\$"
else
	echo "clang or lld is not installed: the lld layout case is not checked"
fi

[ $fails = 0 ] || exit 1
echo "debug-only symbol files: layout from the maps, through symbolize and leakdiff"
