#!/bin/sh
# Allocation functions looked up by name go through the hook: a program
# that dlopen()s libc.so.6 and calls malloc, calloc, realloc and
# posix_memalign through dlsym() and dlvsym() pointers (RTLD_DEFAULT and
# RTLD_NEXT too) has every leak in its exit dump, with its size, count and
# function; blocks freed through a looked-up free() are gone; Python's ctypes
# (CDLL(find_library("c")).malloc) likewise.  The loader's answers stay the
# loader's otherwise: RTLD_NEXT lookups from a library preloaded after the
# hook start after that library (an open() wrapper works), and a second
# malloc interposer after the hook gets the C library's malloc from
# dlsym(RTLD_NEXT, "malloc"), not the hook's.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"

# sizes DUMP: "SIZE COUNT FUNCTION" of its records, summed over records of
# one size and frame-0 function, sorted.
sizes() {
	"$SC" "$1" | awk '{ c[$1 " " $4] += $2 } END { for (k in c) { split(k, a, " "); print a[1], c[k], a[2] } }' | sort -n
}

# 1. C: dlopen("libc.so.6"), dlsym, dlvsym.
(cd "$w" && timeout 60 env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$w/c" "$T/dlsymuser" libc) >"$w/c.out" 2>"$w/c.err" ||
	fail "dlsymuser libc: status $?"
[ -s "$w/c.err" ] && fail "dlsymuser libc: stderr: $(cat "$w/c.err")"
[ "$(cat "$w/c.out")" = "$(printf 'same malloc: yes\nmissing: not found')" ] || fail "dlsymuser libc: '$(cat "$w/c.out")'"
set -- "$w"/c.*.exit.dump
if [ -f "$1" ]; then
	sizes "$1" | grep ' dl_leak_' >"$w/c.sizes"
	cat >"$w/c.want" <<'EOF'
1234 3 dl_leak_malloc
2345 1 dl_leak_calloc
3456 1 dl_leak_realloc
4567 1 dl_leak_default
5678 1 dl_leak_next
6789 1 dl_leak_vsym
8192 1 dl_leak_aligned
EOF
	cmp -s "$w/c.want" "$w/c.sizes" || { fail "dlsymuser libc: leaks"; sed 's/^/    have: /' "$w/c.sizes"; }
	sizes "$1" | grep -q -E '^(1111|2222|16) ' && fail "dlsymuser libc: a freed block is in the dump"
else
	fail "dlsymuser libc: no exit dump"
fi

# 2. RTLD_NEXT from other libraries, and a second malloc interposer.
(cd "$w" && timeout 60 env LD_PRELOAD="$HOOK $T/libnexta.so $T/libnextb.so" LEAKSNAP_OUT="$w/n" \
	"$T/dlsymuser" next) >"$w/n.out" 2>"$w/n.err" || fail "dlsymuser next: status $?"
[ -s "$w/n.err" ] && fail "dlsymuser next: stderr: $(cat "$w/n.err")"
cat >"$w/n.want" <<'EOF'
from libnexta: b
from the program: a
open: ok, through libnexta: yes
malloc through libnextb: yes
EOF
cmp -s "$w/n.want" "$w/n.out" || { fail "dlsymuser next: output"; sed 's/^/    have: /' "$w/n.out"; }
set -- "$w"/n.*.exit.dump
[ -f "$1" ] && sizes "$1" | grep -q -x '7777 1 next_leak' || fail "dlsymuser next: the leak through both interposers"

# 3. Python's ctypes.
if command -v python3 >/dev/null 2>&1; then
	cat >"$w/ct.py" <<'EOF'
import ctypes, ctypes.util, os
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
keep = [libc.malloc(24680) for _ in range(5)]
libc.free(libc.malloc(13579))
print("ok", os.getpid())
EOF
	out=$(cd "$w" && timeout 60 env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$w/py" python3 "$w/ct.py" 2>"$w/py.err")
	[ "${out% *}" = ok ] || fail "python3 ctypes: '$out' $(cat "$w/py.err")"
	# (its own exit dump: find_library runs ldconfig and gcc, which dump too)
	set -- "$w/py.${out#ok }.exit.dump"
	if [ -f "$1" ]; then
		got=$("$SC" "$1" | awk '$1 == 24680 { c += $2 } $1 == 13579 { f += $2 } END { print c + 0, f + 0 }')
		[ "$got" = "5 0" ] || fail "python3 ctypes: 24680-byte and 13579-byte blocks: $got, expected 5 0"
	else
		fail "python3 ctypes: no exit dump"
	fi
else
	echo "python3 is not installed: the ctypes case is not tested"
fi
finish
