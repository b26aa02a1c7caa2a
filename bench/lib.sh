# Shell helpers shared by the benchmark scripts (sourced, not run).

# Single-quote $1 for a shell command line.
q() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

# Print the words as one shell command line.
quoted() {
	line=""
	for w in "$@"; do
		line="$line${line:+ }$(q "$w")"
	done
	printf '%s\n' "$line"
}

# Median of the numbers on standard input, one per line.
median() {
	sort -n | awk '{ v[NR] = $1 }
		END {
			if (NR == 0) exit 1
			if (NR % 2) print v[(NR + 1) / 2]
			else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2
		}'
}
