#!/bin/sh
# Accuracy of sampled collection, end to end: tests/hook/sampleleak leaks
# 1 MiB in 4096 blocks of 256 bytes among 100 MB of churn whose live set
# does not grow, sampled every 64 KiB, with the seeds 1 to 20
# (LEAKSNAP_SAMPLE_SEED: the same draws on every run of this test).
#  - leakdiff ranks the leak (leak_site) first in at least 19 of the 20;
#  - the mean of the 20 estimates of the leak is within 10% of 1 MiB;
#  - their spread is no wider than sampling theory predicts: a block of
#    256 bytes is sampled with p = 1 - e^(-256/65536), so the estimate's
#    relative standard deviation is sqrt((1 - p) / (4096 p)) = 0.250; the
#    20 runs' may be at most 1.5 times that (the 99.5% point of a
#    chi-square with 19 degrees of freedom is 1.43 times).
# The distribution is printed (sorted estimates, mean, deviation, theory).
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }

: >"$w/runs"
seed=1
while [ $seed -le 20 ]; do
	d="$w/s$seed"
	mkdir "$d"
	LEAKSNAP_SAMPLE=65536 LEAKSNAP_SAMPLE_SEED=$seed LEAKSNAP_DUMP_ON_EXIT=0 LD_PRELOAD="$HOOK" \
		"$T/sampleleak" accuracy "$d" || fail "seed $seed: status $?"
	"$L" diff --json "$d/a.dump" "$d/b.dump" >"$d/diff.json" 2>"$d/diff.err" ||
		{ fail "seed $seed: leakdiff status $?"; cat "$d/diff.err"; }
	python3 - "$d/diff.json" "$seed" >>"$w/runs" <<'EOF' || fail "seed $seed: cannot read the diff"
import json, sys
doc = json.load(open(sys.argv[1]))
def fn(g):
    return next((f["function"] for f in g["frames"] if f.get("function")), "?")
s = doc["suspects"]
leak = [g for g in s if fn(g) == "leak_site"]
est = leak[0]["estimated_bytes"][-1] if leak else 0
print(sys.argv[2], fn(s[0]) if s else "-", est, leak[0]["sampled_counts"][-1] if leak else 0)
EOF
	seed=$((seed + 1))
done

python3 - "$w/runs" <<'EOF' || fail "accuracy out of bounds (above)"
import math, sys
rows = [l.split() for l in open(sys.argv[1])]
truth = 1 << 20
est = [int(r[2]) for r in rows]
first = sum(1 for r in rows if r[1] == "leak_site")
n = len(est)
mean = sum(est) / n
sd = math.sqrt(sum((e - mean) ** 2 for e in est) / (n - 1))
p = 1 - math.exp(-256 / 65536)
theory = math.sqrt((1 - p) / (4096 * p))
print("sampled 64 KiB, a leak of 1 MiB in 256-byte blocks, %d seeds" % n)
print("estimates (KiB), sorted:", " ".join("%.0f" % (e / 1024) for e in sorted(est)))
print("samples of the leak per run:", " ".join(r[3] for r in rows))
print("ranked first: %d of %d" % (first, n))
print("mean %.0f KiB (%+.1f%%), relative sd %.3f, theory %.3f (ratio %.2f)" %
      (mean / 1024, 100 * (mean - truth) / truth, sd / truth, theory, sd / truth / theory))
ok = first >= 19 and abs(mean - truth) <= 0.10 * truth and sd / truth <= 1.5 * theory
sys.exit(0 if ok else 1)
EOF

finish
