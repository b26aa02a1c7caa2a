#!/bin/sh
# The in-app hook (libleakhook-inapp.so) on arm64 and on 32-bit ARM (Thumb
# code, REL relocations), in real processes under qemu-user: the leak
# program of tests/hook, built by `make cross`, watched by executable and
# by library (libleaker.so, loaded by dlopen after the start), under each
# unwinder.  The chosen module's records have the same stacks, as module
# offsets, as the preload hook's in the same run of the same program (the
# forked child's too); a module not chosen is not seen; the dumps say how
# they were collected.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
. "$(dirname "$0")/android-lib.sh"
android_need
for a in $ARCHES; do
	abi_vars $a
	[ -f "$XB/libleakhook-inapp.so" ] || { echo "SKIP: $XB/libleakhook-inapp.so missing (make cross)"; exit 77; }
done

# mine REL MOD: the records of REL (stackcheck --rel) made in module MOD
# (frame 0 there), sorted.
mine() {
	awk -v mod="$2" '{ m = $4; sub(/\+0x.*/, "", m); if (m == mod) print }' "$1" | sort
}

for a in $ARCHES; do
	abi_vars $a
	for u in $UNWINDERS; do
		mode=${u%%:*}
		for pick in 'exe:/leaks$:leaks' 'lib:libleaker\.so$:libleaker.so'; do
			name=${pick%%:*} rest=${pick#*:}
			re=${rest%:*} mod=${rest##*:}
			out=$w/$a-$mode-$name
			LEAKSNAP_UNWIND=$mode on_device $a "$out-pre" "$XB/libleakhook.so" \
				"$XB/tests/hook/leaks" all "$XB/tests/hook/libleaker.so" >"$out-pre.stdout" 2>&1
			LEAKSNAP_UNWIND=$mode LEAKSNAP_LIBS=$re on_device $a "$out-in" "$XB/libleakhook-inapp.so" \
				"$XB/tests/hook/leaks" all "$XB/tests/hook/libleaker.so" >"$out-in.stdout" 2>"$out-in.stderr"
			st=$?
			[ $st = 7 ] || fail "$a $mode $name: exit status $st, expected 7"
			printf 'semantics ok\nchild 1\ndone\n' | cmp -s - "$out-in.stdout" ||
				fail "$a $mode $name: stdout differs"
			[ -s "$out-in.stderr" ] && { fail "$a $mode $name: stderr not empty"; cat "$out-in.stderr"; }
			for kind in pre in; do
				n=0
				# the parent's pid comes first, the child's after it,
				# counting past pid_max's wrap (a watched library
				# alone leaves the child no zygote record to tell it by)
				for d in $(ls "$out-$kind".*.exit.dump 2>/dev/null |
					awk -F. -v max="$(cat /proc/sys/kernel/pid_max)" '
					{ pid[NR] = $(NF-2); path[NR] = $0 }
					END {
						if (NR == 2 && ((pid[1] > pid[2] && pid[1] - pid[2] < max / 2) ||
						    (pid[2] > pid[1] && pid[2] - pid[1] > max / 2))) {
							t = path[1]; path[1] = path[2]; path[2] = t
						}
						for (i = 1; i <= NR; i++)
							print path[i]
					}'); do
					n=$((n + 1))
					who=parent
					[ $n = 2 ] && who=child
					"$SC" --rel "$d" >"$d.rel" || fail "$d: stackcheck"
					mine "$d.rel" "$mod" >"$out-$kind.$who.mine"
					# nothing but the chosen module's own records
					if [ $kind = in ]; then
						others=$(awk -v mod="$mod" '{ m = $4; sub(/\+0x.*/, "", m); if (m != mod) print }' "$d.rel")
						[ -z "$others" ] || { fail "$d: records of other modules"; echo "$others" | head -3; }
						expect_meta "$d" "collector=inapp"
						expect_meta "$d" "abi=$a"
						expect_meta "$d" "inapp_watched=$XB/tests/hook/$mod"
					fi
				done
				[ $n = 2 ] || fail "$a $mode $name $kind: $n exit dumps, expected 2"
			done
			for who in parent child; do
				[ -s "$out-pre.$who.mine" ] || { fail "$a $mode $name $who: no records of $mod"; continue; }
				cmp -s "$out-pre.$who.mine" "$out-in.$who.mine" || {
					fail "$a $mode $name $who: stacks differ from the preload hook's"
					diff "$out-pre.$who.mine" "$out-in.$who.mine" | head -6
				}
			done
		done
	done
done
finish
