#!/bin/sh
# make install lays out bin/, lib/, include/, pkgconfig, share/man and the
# shell completions; the shared libraries
# export exactly their public API (libleaksnap.sym, libleaksnap-export.sym),
# and only libleaksnap-export needs protobuf-c; every public header
# compiles on its own as C and C++; programs build against the install.
set -eu
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-install.XXXXXX")
trap 'rm -rf "$w"' EXIT
san=
case "$B" in *san*) san="SANITIZE=1" ;; esac
make -s -C "$top" install $san B="$B" DESTDIR="$w/root" PREFIX=/usr >/dev/null
r="$w/root/usr"
for f in bin/leaksnap bin/leakdiff lib/libleaksnap.a lib/libleaksnap.so lib/libleaksnap.so.0 \
	include/leaksnap/snapshot.h include/leaksnap/maps.h include/leaksnap/leakhook.h \
	lib/libleakhook.so lib/pkgconfig/leaksnap.pc lib/libleaksnap-export.a \
	lib/libleaksnap-export.so lib/libleaksnap-export.so.0 include/leaksnap/export.h \
	lib/pkgconfig/leaksnap-export.pc; do
	[ -e "$r/$f" ] || { echo "missing after install: $f"; exit 1; }
done
[ "$(readlink "$r/bin/leakdiff")" = leaksnap ]
# man pages and shell completion (leakdiff's bash completion is leaksnap's)
for f in share/man/man1/leaksnap.1 share/man/man1/leakdiff.1 share/man/man1/leaksnap-attach.1 \
	share/man/man1/leaksnap-ctl.1 share/man/man1/leaksnap-watch.1 share/man/man1/leaksnap-store.1 \
	share/man/man5/leaksnap-format.5 \
	share/man/man7/libleakhook.7 share/bash-completion/completions/leaksnap \
	share/bash-completion/completions/leakdiff share/zsh/site-functions/_leaksnap; do
	[ -e "$r/$f" ] || { echo "missing after install: $f"; exit 1; }
done
[ "$(readlink "$r/share/bash-completion/completions/leakdiff")" = leaksnap ]
cmp -s "$r/share/man/man1/leaksnap.1" "$top/docs/man/leaksnap.1"
if command -v man >/dev/null 2>&1; then
	MANPATH="$r/share/man" MANWIDTH=80 man leakdiff 2>/dev/null | grep -q -- '--fail-on' ||
		{ echo "man leakdiff does not find the installed page"; exit 1; }
fi
grep -q '^prefix=/usr$' "$r/lib/pkgconfig/leaksnap.pc"
grep -q '^prefix=/usr$' "$r/lib/pkgconfig/leaksnap-export.pc"

# Exported symbols = the documented API, nothing else.
nm -D --defined-only "$r/lib/libleaksnap.so" | awk '$2 == "T" { print $3 }' | sort > "$w/exports"
grep -v '^#' "$top/libleaksnap.sym" | sort > "$w/expected"
if ! cmp -s "$w/expected" "$w/exports"; then
	echo "exported symbols differ from libleaksnap.sym:"; diff "$w/expected" "$w/exports"; exit 1
fi
nm -D --defined-only "$r/lib/libleaksnap-export.so" | awk '$2 == "T" { print $3 }' | sort > "$w/xexports"
grep -v '^#' "$top/libleaksnap-export.sym" | sort > "$w/xexpected"
if ! cmp -s "$w/xexpected" "$w/xexports"; then
	echo "exported symbols differ from libleaksnap-export.sym:"; diff "$w/xexpected" "$w/xexports"
	exit 1
fi
# protobuf-c is the export library's dependency, not libleaksnap's
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
needed "$r/lib/libleaksnap.so" | grep -q protobuf &&
	{ echo "libleaksnap.so needs protobuf-c"; exit 1; }
needed "$r/lib/libleaksnap-export.so" | grep -q '^libleaksnap\.so\.0$' ||
	{ echo "libleaksnap-export.so does not need libleaksnap.so.0"; exit 1; }

# The hook exports exactly its interface (hook/libleakhook.sym) and needs
# nothing but libc; the installed record finds the installed hook.
nm -D --defined-only "$r/lib/libleakhook.so" | awk '$2 == "T" { print $3 }' | sort > "$w/hexports"
sed -n '/^global:/,/^local:/p' "$top/hook/libleakhook.sym" | grep -v ':' | tr -d ' \t' |
	tr ';' '\n' | grep -v '^$' | sort > "$w/hexpected"
cmp -s "$w/hexports" "$w/hexpected" ||
	{ echo "hook exports differ from libleakhook.sym:"; diff "$w/hexpected" "$w/hexports"; exit 1; }
extra=$(readelf -d "$r/lib/libleakhook.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
	grep -v -E '^(libc\.so\.6|ld-linux.*)$' || true)
[ -z "$extra" ] || { echo "libleakhook.so needs more than libc: $extra"; exit 1; }
"$r/bin/leaksnap" record --out "$w/rec" -- /bin/true 2>"$w/rec.err" ||
	{ echo "installed record failed"; cat "$w/rec.err"; exit 1; }
grep -q "^leaksnap: wrote $w/rec\.[0-9]*\.exit\.dump: " "$w/rec.err" ||
	{ echo "installed record listed no dump"; cat "$w/rec.err"; exit 1; }

# Each header alone, as C11 and C++.
for h in "$r"/include/leaksnap/*.h; do
	printf '#include <leaksnap/%s>\nint main(void) { return 0; }\n' "$(basename "$h")" > "$w/h.c"
	cc -std=c11 -Wall -Wextra -Werror -pedantic -I"$r/include" -c "$w/h.c" -o "$w/h.o"
	if command -v c++ >/dev/null 2>&1; then
		cp "$w/h.c" "$w/h.cc"
		c++ -Wall -Wextra -Werror -I"$r/include" -c "$w/h.cc" -o "$w/h.o"
	fi
done

# A program using the installed library reads a dump.
cat > "$w/p.c" <<'C'
#include <stdio.h>
#include <leaksnap/snapshot.h>
int main(int argc, char **argv)
{
	struct leaksnap_error err;
	struct leaksnap_snapshot *s = leaksnap_snapshot_open(argv[argc - 1], NULL, &err);
	if (!s) { char b[600]; puts(leaksnap_error_format(&err, b, sizeof b)); return 2; }
	printf("%zu %llu\n", leaksnap_snapshot_record_count(s), (unsigned long long)leaksnap_snapshot_records_bytes(s));
	leaksnap_snapshot_close(s);
	return 0;
}
C
sanflags=
[ -n "$san" ] && sanflags="-fsanitize=address,undefined"
cc $sanflags -I"$r/include" "$w/p.c" -o "$w/p" -L"$r/lib" -lleaksnap -Wl,-rpath,"$r/lib"
out=$("$w/p" "$top/testdata/text/v1.2-signal-64.txt")
[ "$out" = "4 16888" ] || { echo "installed library read: '$out'"; exit 1; }

# A program using the installed export library folds a stack.
cat > "$w/x.c" <<'C'
#include <stdio.h>
#include <leaksnap/export.h>
int main(void)
{
	struct leaksnap_export_frame f[2] = {
		{.key = 1, .pc = 0x1234, .module = "/lib/libx.so", .rel_pc = 0x234},
		{.key = 2, .pc = 0x99},
	};
	return leaksnap_export_folded_line(stdout, f, 2, 64) != 0;
}
C
cc $sanflags -I"$r/include" "$w/x.c" -o "$w/x" -L"$r/lib" -lleaksnap-export -lleaksnap \
	-Wl,-rpath,"$r/lib"
out=$(LD_LIBRARY_PATH="$r/lib" "$w/x") # (its libleaksnap.so.0 too)
[ "$out" = "libx.so+0x234;0x99 64" ] || { echo "installed export library folded: '$out'"; exit 1; }
echo ok
