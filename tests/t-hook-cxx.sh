#!/bin/sh
# The hook on a C++ program: new, new[] and aligned new leaks are in the
# exit dump with exact sizes, counts and stacks (operator new, then the
# caller); the containers the program destroys are not.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"

for mode in auto dwarf; do
	out="$w/$mode"
	LD_PRELOAD=$HOOK LEAKSNAP_OUT="$out" LEAKSNAP_UNWIND=$mode "$T/leaks_cc" >"$out.stdout" 2>&1
	st=$?
	[ $st = 0 ] || fail "$mode: exit status $st"
	echo done | cmp -s - "$out.stdout" || fail "$mode: stdout differs"
	d=$(ls "$out".*.exit.dump)
	"$SC" "$d" >"$d.txt" || fail "$d: stackcheck failed"
	# new[] ends in operator new (operator new[] tail-calls it); the two
	# calls may be two call sites if the loop is unrolled: count them.
	n=$(awk '$1 == 1012 && $3 == "app" && $4 == "_Znwm" && / _Z14cxx_leak_arrayv main/ { n += $2 } END { print n + 0 }' "$d.txt")
	[ "$n" = 2 ] || fail "$mode: new[] of 1012 bytes: $n allocations, expected 2"
	expect_record "$d.txt" "1013 1 app _Znwm _Z15cxx_leak_objectv main"
	expect_record "$d.txt" "1024 1 app _ZnwmSt11align_val_t _Z16cxx_leak_alignedv main"
	no_record "$d.txt" ' _Z9cxx_churnv '
done
finish
