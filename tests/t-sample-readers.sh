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

# The pages: the same figures, marked (in a real browser; skipped without
# one, as tests/t-report.sh is).
"$L" diff --html diff.html fx/sampled1.dump fx/sampled2.dump >/dev/null 2>&1 || fail "diff --html"
"$L" symbolize --html sym.html fx/sampled2.dump >/dev/null 2>&1 || fail "symbolize --html"
BROWSER="python3 $top/tests/tools/browser.py --timeout 60"
$BROWSER diff.html "$top/tests/report/sampled-steps.js" >diff-dom.json 2>browser.err
st=$?
if [ $st = 3 ]; then
	echo "no browser: the pages were not loaded in one"
else
	[ $st = 0 ] || fail "browser, leakdiff page: $(cat browser.err)"
	python3 - diff-dom.json <<'EOF' || fail "leakdiff page (above)"
import json, sys
j = json.loads(open(sys.argv[1]).read())
A = "\u2248"
want = {
    "cards": ["Definite leaks: 1 | and 1 one-off; " + A + "24.4 KiB in " + A +
              "332 allocations (6 sampled) unreachable in the last snapshot",
              "Suspects: 1 | grew by " + A + "+32.3 KiB, " + A + "+516 allocations",
              "All records: " + A + "+32.3 KiB | " + A + "28.8 KiB \u2192 " + A +
              "61.1 KiB, " + A + "+516 allocations; blocks sampled 6 \u2192 14",
              "Caches: 0 | grew, then stopped: not leaks"],
    "snapshots": [[A + "156", A + "28.8 KiB", "", "6", A + "4.25 KiB"],
                  [A + "672", A + "61.1 KiB", "", "14", A + "24.4 KiB"]],
    "suspects": [[A + "+32.3 KiB", A + "+516"]],
    "detail": ["bytes (estimated): 8,256 \u2192 41,281", "count (estimated): 129 \u2192 645",
               "sampled: 2 \u2192 10", "unreachable bytes (estimated): 0 \u2192 20,640",
               "unreachable count (estimated): 0 \u2192 323", "unreachable sampled: 0 \u2192 5"],
}
bad = [k for k in want if j.get(k) != want[k]]
for k in bad:
    print("%s: got %r\n  expected %r" % (k, j.get(k), want[k]))
sys.exit(1 if bad or j["ready"] != "1" or not j["note"] else 0)
EOF
	$BROWSER sym.html "$top/tests/report/sampled-steps.js" >sym-dom.json 2>browser.err ||
		fail "browser, symbolize page: $(cat browser.err)"
	python3 - sym-dom.json <<'EOF' || fail "symbolize page (above)"
import json, sys
j = json.loads(open(sys.argv[1]).read())
facts = [f for f in j["facts"] if f.split(":")[0] in
         ("Total memory", "Records", "Unreachable", "Estimated")]
want = ["Total memory: 10.1 KiB (10,368 bytes) in sampled blocks",
        "Records: 3, 14 sampled allocations, 10.1 KiB sampled",
        "Unreachable: 832 B in 6 sampled allocations no pointer reached "
        "(\u224824.4 KiB in \u2248332)",
        "Estimated: \u224861.1 KiB in \u2248672 allocations"]
if facts != want:
    print("facts: got %r\n  expected %r" % (facts, want))
# the records: every estimate marked, the sampled counts beside them (the
# unreachable ones too), as show gives them
head = ["#", "Bytes (estimated)", "Size", "Count (estimated)", "Sampled",
        "Unreachable (estimated)", "Unreachable sampled", "Site"]
rows = [["1", "\u224840.3 KiB", "64", "\u2248645", "10", "\u2248323", "5leak"],
        ["2", "\u224812.8 KiB", "512", "\u224826", "3", "\u22489", "1leak"],
        ["3", "\u22488.00 KiB", "8,192", "\u22481", "1", "\u22480", "0"]]
if j["recordsHead"] != head:
    print("records head: got %r\n  expected %r" % (j["recordsHead"], head))
if j["records"] != rows:
    print("records: got %r\n  expected %r" % (j["records"], rows))
sys.exit(0 if facts == want and j["recordsHead"] == head and j["records"] == rows and
         j["ready"] == "1" else 1)
EOF
fi

finish
