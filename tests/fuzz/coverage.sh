#!/bin/sh
# make fuzz-coverage: replay each committed corpus through its harness
# built with clang's source-based coverage, merge the profiles, and print
# line coverage of the library's files (llvm-cov report).
# Usage: coverage.sh FUZZ_BUILD_DIR NAME...
set -eu
fb=$1
shift
top=$(cd "$(dirname "$0")/../.." && pwd)
prof="$fb/coverage"
rm -rf "$prof" && mkdir -p "$prof"
objs=""
for h in "$@"; do
	LLVM_PROFILE_FILE="$prof/$h.profraw" "$fb/cov_$h" "$top/tests/fuzz/corpus/$h" >/dev/null
	if [ -z "$objs" ]; then objs="$fb/cov_$h"; else objs="$objs -object=$fb/cov_$h"; fi
done
llvm-profdata merge -sparse -o "$prof/all.profdata" "$prof"/*.profraw
# shellcheck disable=SC2086
llvm-cov report $objs -instr-profile="$prof/all.profdata" \
	"$top/libsnapshot" "$top/mapsparse" "$top/diff" "$top/symbolizer" |
	sed "s|$top/||"
