#!/bin/sh
# The hook on arm64 and on 32-bit ARM (Thumb code), in real processes under
# qemu-user: the leak program of tests/hook, built by `make cross`, under
# each unwinder.  Every leak is in the exit dumps with its size, count and
# stack (stackcheck); 32-bit dumps have 4-byte records (header and file
# size checked byte for byte); the metadata name the ABI, the unwinder and
# each module's build ID.  On the host, `leaksnap symbolize` of those dumps
# gives the same records, sites and source lines (function, file, line,
# column, for every frame in the program and its library) as the x86-64 run
# of the same program, and `leakdiff` between two runs the same growth from
# the same sites.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
. "$(dirname "$0")/android-lib.sh"
android_need python3

# check_header DUMP PSIZE: the LEAKSNAP header's pointer size and record
# size, and the file is exactly header + records + maps + metadata.
check_header() {
	python3 - "$1" "$2" "$("$L" show --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["record_count"])')" <<'EOF' || fail "$1: header"
import os, struct, sys
path, psize, nrec = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
h = open(path, 'rb').read(64)
assert h[:8] == b'LEAKSNAP', h[:8]
(ver, ps, flags, bt, pid, meta, t, total, info, recs, maps) = struct.unpack('<HBBIIIQQQQQ', h[8:])
assert ps == psize, 'pointer size %d, expected %d' % (ps, psize)
assert bt == 16 and info == psize * (2 + bt), 'info size %d for %d frames' % (info, bt)
assert recs == nrec * info, 'records_size %d for %d records' % (recs, nrec)
assert os.path.getsize(path) == 64 + recs + maps + meta, 'file size'
EOF
}

x86_reference

for a in $ARCHES; do
	abi_vars $a
	for u in $UNWINDERS; do
		mode=${u%%:*} walk=${u##*:} unwinder=${u#*:}
		unwinder=${unwinder%:*}
		out=$w/$a-$mode
		LEAKSNAP_UNWIND=$mode on_device $a "$out" "$XB/libleakhook.so" \
			"$XB/tests/hook/leaks" all "$XB/tests/hook/libleaker.so" >"$out.stdout" 2>"$out.stderr"
		st=$?
		[ $st = 7 ] || fail "$a $mode: exit status $st, expected 7"
		printf 'semantics ok\nchild 1\ndone\n' | cmp -s - "$out.stdout" || fail "$a $mode: stdout differs"
		[ -s "$out.stderr" ] && { fail "$a $mode: stderr not empty"; cat "$out.stderr"; }
		exit_dumps "$out"
		[ -n "$parent" ] && [ -n "$child" ] || { fail "$a $mode: no parent and child dumps"; continue; }
		expect_leaks "$parent.txt" $walk parent
		expect_leaks "$child.txt" $walk child
		for d in "$parent" "$child"; do
			check_header "$d" $PSIZE
			"$L" show "$d" >"$d.show" 2>"$d.err" || fail "$d: show failed"
			[ -s "$d.err" ] && { fail "$d: show warned"; cat "$d.err"; }
			grep -q -x "pointer size:    $PSIZE" "$d.show" || fail "$d: pointer size not $PSIZE"
			expect_meta "$d" "abi=$a"
			expect_meta "$d" "unwinder=$unwinder"
			expect_meta "$d" "exe=$XB/tests/hook/leaks"
			for m in tests/hook/leaks tests/hook/libleaker.so libleakhook.so; do
				id=$(readelf -n "$XB/$m" | sed -n 's/.*Build ID: //p')
				grep -q -x "  build_id=$id $XB/$m" "$d.show" || fail "$d: no build_id line for $m"
			done
		done
		[ $walk = full ] || continue
		# symbolized on the host: the x86-64 run's records, sites and lines
		for who in parent child; do
			eval d=\$$who
			"$L" symbolize --json "$d" >"$out.$who.json" || fail "$d: symbolize"
			$S records "$out.$who.json" $MODS >"$out.$who.sites"
			cmp -s "$w/x86.$who.sites" "$out.$who.sites" ||
				{ fail "$a $mode $who: sites differ from x86-64"; diff "$w/x86.$who.sites" "$out.$who.sites" | head -8; }
		done
	done
done

# leakdiff: a run with the thread and the library's leaks against a run
# without; the same growth, from the same sites, on all three ABIs.
run_pair() { # NAME RUNNER...: two runs, then leakdiff --json --by site
	n=$1
	shift
	"$@" "$w/$n-a" "$w/$n-a" >/dev/null 2>&1
	"$@" "$w/$n-b" "$w/$n-b" --thread "$libleaker" >/dev/null 2>&1
	"$L" diff --json --by site "$w/$n-a".*.exit.dump "$w/$n-b".*.exit.dump >"$w/$n.diff.json" ||
		fail "$n: leakdiff"
	$S diff "$w/$n.diff.json" $MODS >"$w/$n.diff"
}
native() { # OUT OUT ARGS...
	o=$1
	shift 2
	LD_PRELOAD=$HOOK LEAKSNAP_OUT="$o" LEAKSNAP_DUMP_ON_EXIT=all "$T/leaks" "$@"
}
device() { # OUT OUT ARGS...
	o=$1
	shift 2
	on_device $dev_arch "$o" "$XB/libleakhook.so" "$XB/tests/hook/leaks" "$@"
}
libleaker=$T/libleaker.so
run_pair x86 native
printf '%s\n' \
	"1009 1 new grew | thread_leak $top/tests/hook/leaks.c:$(grep -n 'HOLD(malloc(1009))' "$top/tests/hook/leaks.c" | cut -d: -f1):2" \
	"1010 1 new grew | leaker_alloc $top/tests/hook/libleaker.c:8:12 | main $top/tests/hook/leaks.c:$(grep -n 'fn(1010)' "$top/tests/hook/leaks.c" | cut -d: -f1):3" |
	sort | cmp -s - "$w/x86.diff" || { fail "x86-64: leakdiff suspects"; cat "$w/x86.diff"; }
for a in $ARCHES; do
	abi_vars $a
	dev_arch=$a libleaker=$XB/tests/hook/libleaker.so
	run_pair $a device
	cmp -s "$w/x86.diff" "$w/$a.diff" || { fail "$a: leakdiff differs from x86-64"; diff "$w/x86.diff" "$w/$a.diff"; }
done
finish
