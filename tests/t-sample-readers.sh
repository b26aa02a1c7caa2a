#!/bin/sh
# The readers of a sampled snapshot agree on its estimates: show, symbolize
# and leakdiff print the same figures for the same dump, text and JSON,
# because each follows one rule (docs/diff.md, "Sampled snapshots"): a
# record's estimates are rounded, and a total is the sum of its records'
# rounded estimates.  mkfixture's sampled2.dump is one where rounding the
# unrounded sum once gives other figures: 20639.8 + 4357.3 unreachable bytes
# (24997 as the sum of 20640 and 4357, 24998 rounded once) in 322.5 + 8.7
# blocks (332 as 323 + 9, 331 rounded once).
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
LC_ALL=C.UTF-8
export LC_ALL

"$B/tests/mkfixture" "$w/fx" || fail "mkfixture"
cd "$w" || exit 1

# json_num FILE KEY: the first "KEY": NUMBER of FILE.
json_num() {
	sed -n "s/.*\"$2\": \\([0-9-]*\\).*/\\1/p" "$1" | head -1
}

"$L" diff --json fx/sampled1.dump fx/sampled2.dump >diff.json || fail "diff --json: status $?"
"$L" diff fx/sampled1.dump fx/sampled2.dump >diff.txt || fail "diff: status $?"
for k in 1 2; do
	"$L" show --json fx/sampled$k.dump >show$k.json || fail "show --json sampled$k: status $?"
	"$L" show fx/sampled$k.dump >show$k.txt || fail "show sampled$k: status $?"
	# leakdiff's line for this snapshot in its JSON
	grep "\"file\": \"fx/sampled$k.dump\"" diff.json >snap$k.json ||
		fail "diff --json: no snapshot sampled$k"
	for key in estimated_bytes estimated_count; do
		a=$(json_num show$k.json $key)
		b=$(json_num snap$k.json $key)
		[ -n "$a" ] && [ "$a" = "$b" ] ||
			fail "sampled$k: show says $key $a, leakdiff $b"
	done
	# show's estimated_unreachable {bytes, allocations} against leakdiff's
	a=$(sed -n 's/.*"estimated_unreachable": {"bytes": \([0-9]*\), "allocations": \([0-9]*\)}.*/\1 \2/p' show$k.json)
	b="$(json_num snap$k.json estimated_unreachable_bytes) $(json_num snap$k.json estimated_unreachable_count)"
	[ "$a" = "$b" ] || fail "sampled$k: show's estimated unreachable $a, leakdiff's $b"
	# show's records add up to its totals
	sum=$(sed -n 's/.*"estimated_bytes": \([0-9]*\), "estimated_count".*"frames".*/\1/p' show$k.json |
		awk '{ s += $1 } END { print s + 0 }')
	[ "$sum" = "$(json_num show$k.json estimated_bytes)" ] ||
		fail "sampled$k: show's records add up to $sum, its total says $(json_num show$k.json estimated_bytes)"
done

# The exact figures, in each reader's words.
[ "$(json_num show2.json estimated_bytes)" = 62545 ] || fail "sampled2: estimated bytes"
grep -q -x 'unreachable:     832 bytes in 6 sampled allocations (≈24997 bytes in ≈332)' show2.txt ||
	{ fail "show: unreachable line"; grep '^unreachable' show2.txt; }
grep -q -x 'last snapshot: ≈24997 unreachable bytes in ≈332 allocations (6 sampled, 832 bytes)' diff.txt ||
	{ fail "leakdiff: last snapshot line"; grep '^last snapshot' diff.txt; }
grep -q -x '                 are of sampled blocks; estimated ≈62545 bytes in ≈672 allocations' show2.txt ||
	fail "show: estimated total"
grep -q -E '^  2  fx/sampled2.dump +4242 +≈672 +≈62545 +≈24997$' diff.txt ||
	{ fail "leakdiff: snapshot row"; grep sampled2 diff.txt; }
"$L" symbolize fx/sampled2.dump >sym2.txt 2>/dev/null || fail "symbolize: status $?"
grep -q -x 'unreachable:     832 bytes in 6 sampled allocations (≈24997 bytes in ≈332)' sym2.txt ||
	fail "symbolize: unreachable line"

# Outside a UTF-8 locale the mark is '~'.
LC_ALL=C "$L" diff fx/sampled1.dump fx/sampled2.dump >diff-c.txt || fail "diff in C: status $?"
grep -q -E '^     growth +~\+516 +~\+33025$' diff-c.txt || { fail "C locale: growth row"; cat diff-c.txt; }
grep -q -x '1 suspect grew by ~33025 bytes, ~+516 allocations' diff-c.txt || fail "C locale: summary"

# Unsampled dumps: no mark, no sampled figures.
"$L" diff fx/reach-diff1.dump fx/reach-diff2.dump >plain.txt || fail "unsampled diff: status $?"
grep -q -e '≈' -e 'sampled' plain.txt && { fail "unsampled diff: estimates marked"; cat plain.txt; }
"$L" diff --json fx/reach-diff1.dump fx/reach-diff2.dump >plain.json || fail "unsampled json"
grep -q -e 'estimated_' -e 'sampled_' plain.json && fail "unsampled diff: estimated_ or sampled_ keys"

finish
