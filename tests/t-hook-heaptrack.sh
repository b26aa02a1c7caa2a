#!/bin/sh
# The exit dump against heaptrack on the same leak programs: the bytes
# leaked at each of the programs' leak sites (attributed to the innermost
# function of the program) are equal.  heaptrack 1.4 does not intercept
# memalign or pvalloc, so at leak_aligned it sees 1004 + 1008 bytes less:
# that gap is asserted exactly, not ignored.  (Runs without fork, which
# heaptrack does not follow, and without realloc(p, 0), which heaptrack
# counts as a leak.)
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null || {
	echo "heaptrack is not installed"
	exit 77
}

# (C++ names first: "leak_aligned" is also part of "cxx_leak_aligned")
FNS="cxx_leak_array cxx_leak_object cxx_leak_aligned level8 leak_calloc leak_realloc leak_aligned thread_leak leaker_alloc"

# ours DUMP: "function bytes" per leak site, from the exit dump.
ours() {
	"$SC" "$1" | awk -v fns="$FNS" '
		BEGIN { n = split(fns, f, " ") }
		{
			for (i = 4; i <= NF; i++)
				for (k = 1; k <= n; k++)
					if (index($i, f[k])) { sum[f[k]] += $1 * $2; next }
		}
		END { for (k in sum) print k, sum[k] }' | sort
}

# theirs FLAMEGRAPH: the same from heaptrack's leaked-bytes stacks
# ("outer;...;inner (file); BYTES").
theirs() {
	awk -v fns="$FNS" '
		BEGIN { n = split(fns, f, " ") }
		{
			bytes = $NF
			m = split($0, fr, ";")
			for (i = m - 1; i >= 1; i--)
				for (k = 1; k <= n; k++)
					if (index(fr[i], f[k])) { sum[f[k]] += bytes; next }
		}
		END { for (k in sum) if (sum[k]) print k, sum[k] }' "$1" | sort
}

compare() { # NAME CMD...
	name=$1
	shift
	(cd "$w" && heaptrack -o "$w/$name-ht" "$@") >"$w/$name.ht.log" 2>&1
	[ -f "$w/$name-ht.zst" ] || { fail "$name: heaptrack run failed"; cat "$w/$name.ht.log"; return; }
	heaptrack_print "$w/$name-ht.zst" -F "$w/$name.fg" --flamegraph-cost-type leaked \
		>/dev/null 2>&1 || { fail "$name: heaptrack_print failed"; return; }
	LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/$name" "$@" >/dev/null 2>&1
	ours "$(ls "$w/$name".*.exit.dump)" >"$w/$name.ours"
	theirs "$w/$name.fg" >"$w/$name.theirs"
	[ -s "$w/$name.ours" ] || fail "$name: no leak sites found in our dump"
	# heaptrack's known gap: memalign (1004) and pvalloc (1008) not seen.
	awk '$1 == "leak_aligned" { $2 -= 2012 } { print }' "$w/$name.ours" >"$w/$name.ours-adj"
	if ! cmp -s "$w/$name.ours-adj" "$w/$name.theirs"; then
		fail "$name: leaked bytes per site differ from heaptrack's"
		echo "  ours (leak_aligned minus 2012):"; sed 's/^/    /' "$w/$name.ours-adj"
		echo "  heaptrack:"; sed 's/^/    /' "$w/$name.theirs"
	fi
	tot_o=$(awk '{ s += $2 } END { print s + 0 }' "$w/$name.ours-adj")
	tot_t=$(awk '{ s += $2 } END { print s + 0 }' "$w/$name.theirs")
	gap=""
	grep -q '^leak_aligned ' "$w/$name.ours" && gap=" (+2012 from memalign/pvalloc)"
	echo "$name: leaked at the program's sites: leaksnap $tot_o$gap, heaptrack $tot_t"
}

compare c "$T/leaks" --thread "$T/libleaker.so"
compare cxx "$T/leaks_cc"
finish
