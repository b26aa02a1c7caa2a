# Shared by the hook tests (sourced): paths, a scratch directory, checks.
# Expects B (build dir) to be set.
top=$(cd "$(dirname "$0")/.." && pwd)
L=$(cd "$B/bin" && pwd)/leaksnap
HOOK=$(cd "$B/lib" && pwd)/libleakhook.so
T=$(cd "$B/tests/hook" && pwd)
SC=$(cd "$B/tests" && pwd)/stackcheck
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-hook.XXXXXX")
trap 'rm -rf "$w"' EXIT
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# expect_record FILE "SIZE COUNT KIND fn0 fn1 ...": a record line of
# stackcheck output starts with exactly these fields (more frames may follow).
expect_record() {
	if ! grep -q -e "^$2\$" -e "^$2 " "$1"; then
		fail "$1: no record '$2'"
		grep "^${2%% *} " "$1" | head -3 | sed 's/^/    have: /'
	fi
}

# no_record FILE REGEX: no line matches.
no_record() {
	if grep -q -E "$2" "$1"; then
		fail "$1: unexpected record matching '$2'"
		grep -E "$2" "$1" | head -3 | sed 's/^/    have: /'
	fi
}

# expect_meta DUMP KEY=VALUE
expect_meta() {
	"$L" show "$1" | grep -q -x "  $2" || fail "$1: metadata '$2' missing"
}

finish() {
	if [ "$fails" != 0 ]; then
		echo "$fails failure(s)"
		exit 1
	fi
	exit 0
}
