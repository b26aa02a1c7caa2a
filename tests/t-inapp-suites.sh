#!/bin/sh
# The preload hook's tests run with the in-app hook, watching every library
# (LEAKSNAP_LIBS=''): the leak program under each unwinder, the C++
# program, real programs (python3, perl, gcc, git, a pipeline, glibc's
# pthread_getattr_np), the stress tests (threads, a dlopen/dlclose loop,
# fork and exec), the dump triggers, the API and file rules, crash dumps
# and the reachability tests, each with its own exact expectations.  Only the preload hook counts double frees (the in-app one
# cannot see every allocation, so it never calls a free invalid):
# t-hook-leaks.sh leaves that part out here.
set -u
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
LEAKSNAP_TEST_HOOK=$(cd "$B/lib" && pwd)/libleakhook-inapp.so
LEAKSNAP_LIBS=
export LEAKSNAP_TEST_HOOK LEAKSNAP_LIBS
st=0
for t in t-hook-leaks t-hook-cxx t-hook-programs t-hook-stress t-hook-triggers t-hook-api \
	t-hook-crash t-reach; do
	if ! sh "$top/tests/$t.sh" "$B" >"${TMPDIR:-/tmp}/leaksnap-inapp-suite.$$" 2>&1; then
		echo "FAIL: $t with the in-app hook:"
		sed 's/^/    /' "${TMPDIR:-/tmp}/leaksnap-inapp-suite.$$"
		st=1
	fi
done
rm -f "${TMPDIR:-/tmp}/leaksnap-inapp-suite.$$"
exit $st
