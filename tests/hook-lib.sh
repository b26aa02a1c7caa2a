# Shared by the hook tests (sourced): paths, a scratch directory, checks.
# Expects B (build dir) to be set.
top=$(cd "$(dirname "$0")/.." && pwd)
L=$(cd "$B/bin" && pwd)/leaksnap
HOOK=$(cd "$B/lib" && pwd)/libleakhook.so
# (the in-app suites, t-inapp-*.sh, run these tests with the in-app hook)
[ -n "${LEAKSNAP_TEST_HOOK:-}" ] && HOOK=$LEAKSNAP_TEST_HOOK
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

# expect_leaks TXT WALK parent|child: stackcheck output of a dump of
# tests/hook/leaks.c run as "leaks all LIBLEAKER.so": every leak with its
# size, count and stack, the forked child's only in the child's dump, no
# freed block and no frame of the hook.  WALK: full (each stack out to
# main), nolib (full, but libleaker.so's frame ends its walk) or caller
# (frame 0 only).  A fourth argument "nolib": libleaker.so's own record is
# not there (an in-app hook watching the executable alone).
expect_leaks() {
	_t=$1 _walk=$2 _who=$3 _lib=${4:-lib}
	while read -r _line; do
		# shellcheck disable=SC2086
		set -- $_line
		if [ "$_lib" = nolib ] && [ "$1" = 1010 ]; then
			no_record "$_t" '^1010 '
			continue
		fi
		case $_walk/$1 in
		caller/* | nolib/1010) _line="$1 $2 $3 $4" ;;
		esac
		case $_who/$1 in
		parent/1011) no_record "$_t" '^1011 ' ;;
		child/1011) expect_record "$_t" "$_line"; no_record "$_t" '^1011 1 app' ;;
		*) expect_record "$_t" "$_line" ;;
		esac
	done <<EOF
1001 3 app level8 level7 level6 level5 level4 level3 level2 level1 run_deep main
1002 2 app leak_calloc main
4003 1 app leak_realloc main
1004 1 app leak_aligned main
1005 1 app leak_aligned main
1006 1 app leak_aligned main
1007 1 app leak_aligned main
1008 1 app leak_aligned main
1017 1 app leak_aligned main
1009 1 app thread_leak
1010 1 app leaker_alloc main
1011 1 zygote child_leak main
EOF
	no_record "$_t" ' churn '
	no_record "$_t" ' (malloc|calloc|realloc|track|capture|table_insert|unwind_[a-z]*|hook_[a-z_]*) '
}

# expect_meta DUMP KEY=VALUE
expect_meta() {
	"$L" show "$1" 2>/dev/null | grep -q -x "  $2" || fail "$1: metadata '$2' missing"
}

finish() {
	if [ "$fails" != 0 ]; then
		echo "$fails failure(s)"
		exit 1
	fi
	exit 0
}
