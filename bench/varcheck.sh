#!/bin/sh
# bench/varcheck.sh STACKCHECK DUMP THREADS: check that the exit dump of a
# varbench run holds its live blocks (1024 per thread) with full stacks,
# each a real call path of the program (bench/varbench.c): 16 frames,
#   site_* chain x 11 caller_a|caller_b work run <main or libc>
# and every site and both callers present (records the program's libc
# makes on its own, stdio buffers and thread stacks, are left out).  So a
# fast hooked run cannot come from not unwinding.  Prints one line; exits 1 on a mismatch.
set -eu
SC=$1 DUMP=$2 THREADS=$3
"$SC" "$DUMP" | awk -v want=$((1024 * THREADS)) -v dump="$DUMP" '
$4 !~ /^site_/ { next }
{
	bad = NF != 3 + 16 || $4 !~ /^site_(malloc|calloc|realloc|memalign)$/ ||
	      $16 !~ /^caller_[ab]$/ || $17 != "work" || $18 != "run"
	for (i = 5; i <= 15; i++)
		if ($i != "chain")
			bad = 1
	if (bad) {
		printf "varcheck: %s: not a call path of varbench: %s\n", dump, $0
		failed = 1
		exit 1
	}
	blocks += $2
	recs++
	seen[$4]++
	seen[$16]++
}
END {
	if (failed)
		exit 1
	if (blocks != want) {
		printf "varcheck: %s: %d live blocks, expected %d\n", dump, blocks, want
		exit 1
	}
	n = split("site_malloc site_calloc site_realloc site_memalign caller_a caller_b", k, " ")
	for (i = 1; i <= n; i++)
		if (!(k[i] in seen)) {
			printf "varcheck: %s: no stack through %s\n", dump, k[i]
			exit 1
		}
	printf "%d blocks in %d records, every stack 16 frames through site/chain x 11/caller/work/run\n", blocks, recs
}'
