#!/bin/sh
# The hook on the C leak program: every kind of leak (deep call chain,
# calloc, realloc growth, the aligned allocators, a thread, a dlopen'ed
# library, a forked child) is in the exit dump with its exact size, count
# and stack, under each unwinder; freed blocks are not; the program runs
# unchanged; the dump's metadata and file modes are right.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"

check_dumps() { # $1 = mode, $2 = executable
	mode=$1 exe=$2
	out="$w/$mode-$(basename "$exe")"
	LD_PRELOAD=$HOOK LEAKSNAP_OUT="$out" LEAKSNAP_UNWIND=$mode LEAKSNAP_DUMP_ON_EXIT=all \
		"$exe" all "$T/libleaker.so" >"$out.stdout" 2>"$out.stderr"
	st=$?
	[ $st = 7 ] || fail "$mode: exit status $st, expected 7"
	printf 'semantics ok\nchild 1\ndone\n' | cmp -s - "$out.stdout" || fail "$mode: stdout differs"
	[ -s "$out.stderr" ] && { fail "$mode: stderr not empty"; cat "$out.stderr"; }
	set -- "$out".*.exit.dump
	[ $# = 2 ] || { fail "$mode: $# exit dumps, expected 2 (parent, child)"; return; }
	# The child's dump is the one with the zygote record.
	parent="" child=""
	for d in "$@"; do
		"$SC" "$d" >"$d.txt" || fail "$d: stackcheck failed"
		if grep -q ' zygote ' "$d.txt"; then child=$d; else parent=$d; fi
	done
	[ -n "$parent" ] && [ -n "$child" ] || { fail "$mode: no parent/child pair"; return; }
	if [ "$mode" = fp ] && [ "$exe" = "$T/leaks" ]; then
		walk=caller # no frame pointers in the program: frame 0 is exact
	elif [ "$mode" = fp ]; then
		walk=nolib # libleaker.so has no frame pointers: its frame ends the walk
	else
		walk=full
	fi
	expect_leaks "$parent.txt" $walk parent
	expect_leaks "$child.txt" $walk child
	for d in "$parent" "$child"; do
		"$L" show "$d" >"$d.show" 2>"$d.err" || fail "$d: show failed"
		if [ "$mode" = fp ] && [ "$exe" = "$T/leaks" ]; then
			# Most walks stop after frame 0: the dump and show say why.
			expect_meta "$d" "frame_pointers=missing"
			n=$(sed -n 's/^  fp_shallow=\([0-9]*\)\/\([0-9]*\)$/\1 \2/p' "$d.show")
			# shellcheck disable=SC2086
			set -- $n
			[ $# = 2 ] && [ $(($1 * 2)) -gt "$2" ] || fail "$d: fp_shallow '$n', expected most"
			[ "$(cat "$d.err")" = "leaksnap: $d: warning: the program seems to lack frame pointers: $1 of $2 stacks end after their first frame under --unwind fp (frame_pointers=missing); record with --unwind auto (LEAKSNAP_UNWIND=auto) for whole stacks" ] ||
				{ fail "$d: show did not say the program lacks frame pointers"; cat "$d.err"; }
		else
			[ -s "$d.err" ] && { fail "$d: show warned"; cat "$d.err"; }
			grep -q "^  frame_pointers=" "$d.show" && fail "$d: frame_pointers= in the metadata"
			case $mode in
			fp) grep -q "^  fp_shallow=[0-9]*/[0-9]*$" "$d.show" || fail "$d: no fp_shallow=" ;;
			*) grep -q "^  fp_shallow=" "$d.show" && fail "$d: fp_shallow= under $mode" ;;
			esac
		fi
		perms=$(stat -c %a "$d")
		[ "$perms" = 600 ] || fail "$d: mode $perms, expected 600"
		m=${d%.dump}.maps
		[ -f "$m" ] || fail "$m missing"
		expect_meta "$d" "trigger=exit"
		expect_meta "$d" "invalid_frees=0"
		expect_meta "$d" "abi=$(uname -m | sed 's/aarch64/arm64/')"
		expect_meta "$d" "exe=$exe"
		expect_meta "$d" "cmdline=$exe all $T/libleaker.so"
		case $mode in
		fp) expect_meta "$d" "unwinder=fp" ;;
		dwarf) expect_meta "$d" "unwinder=dwarf" ;;
		auto) expect_meta "$d" "unwinder=dwarf+fp" ;;
		esac
		id=$(readelf -n "$exe" | sed -n 's/.*Build ID: //p')
		grep -q -x "  build_id=$id $exe" "$d.show" || fail "$d: no build_id line for $exe"
		grep -q "  build_id=[0-9a-f]* .*/libleaker.so" "$d.show" || fail "$d: no build_id for libleaker.so"
		grep -q "  build_id=[0-9a-f]* .*/$(basename "$HOOK")$" "$d.show" || fail "$d: no build_id for the hook itself"
		# The maps file beside the dump is the dump's own maps text.
		"$L" maps "$m" >"$d.m1" && "$L" maps "$d" >"$d.m2" && cmp -s "$d.m1" "$d.m2" ||
			fail "$d: maps file differs from the dump's maps"
	done
}

check_dumps auto "$T/leaks"
check_dumps dwarf "$T/leaks"
check_dumps fp "$T/leaks"
check_dumps fp "$T/leaks-fp"

# A double free of a tracked block is counted, not passed on.  (Not by
# the in-app hook, which cannot see every allocation: t-inapp-suites.sh.)
[ -n "${LEAKSNAP_TEST_HOOK:-}" ] && finish
out="$w/df"
LD_PRELOAD=$HOOK LEAKSNAP_OUT="$out" "$T/leaks" --double-free >"$out.stdout" 2>&1
st=$?
[ $st = 7 ] || fail "double free: exit status $st, expected 7"
d=$(ls "$out".*.exit.dump)
expect_meta "$d" "invalid_frees=1"

# A frame record that is not one (what code without frame pointers leaves
# in the register) ends an fp walk unless its return address is in code:
# data, the stack, the hook's own malloc and a small number are not taken.
out=$(LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/junk" LEAKSNAP_UNWIND=fp "$T/fpjunk")
case $out in
"fpjunk ok")
	d=$(ls "$w"/junk.*.exit.dump)
	"$SC" "$d" >"$d.txt" || fail "fpjunk: stackcheck failed"
	for size in 1101 1102 1103 1104; do
		grep -q -x "$size 1 app junk_alloc" "$d.txt" ||
			{ fail "fpjunk: $size: expected frame 0 alone"; grep "^$size " "$d.txt"; }
	done
	grep -q -x "1105 1 app junk_alloc main" "$d.txt" ||
		{ fail "fpjunk: 1105: expected junk_alloc main"; grep "^1105 " "$d.txt"; }
	;;
"fpjunk skipped") echo "skipped: fpjunk (x86-64 only)" ;;
*) fail "fpjunk: '$out'" ;;
esac

# Without the hook the program behaves the same.
"$T/leaks" all "$T/libleaker.so" >"$w/bare.stdout" 2>&1
[ $? = 7 ] || fail "bare run: status"
printf 'semantics ok\nchild 1\ndone\n' | cmp -s - "$w/bare.stdout" || fail "bare run: stdout"
finish
