#!/bin/sh
# What each make target asks of the machine: `make` (the programs and
# libraries) needs the build packages only; `make check` installs the
# tests' packages (cmocka, the peer tools) before it builds a test; `make
# demo` needs no more than `make`.  Checked two ways, without installing
# anything: the commands make would run (make -n into an empty build
# directory), and the package lists scripts/ensure-deps.sh asks for, with
# dpkg-query, id and apt-get replaced by stand-ins that say nothing is
# installed and the user is not root.
set -u
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-deps.XXXXXX")
trap 'rm -rf "$w"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Packages only the tests (or the benchmarks, fuzzing, cross builds) use.
test_only="libcmocka-dev chromium golang-go valgrind heaptrack llvm clang lld zsh mandoc hyperfine
	qemu-user gcc-aarch64-linux-gnu"

# 1. The commands of `make all`, `make demo` and `make tests` from nothing.
for goal in all demo; do
	make -n -C "$top" B="$w/b" "$goal" >"$w/$goal.cmds" 2>&1 || fail "make -n $goal failed: $(tail -1 "$w/$goal.cmds")"
	grep -q '^sh scripts/ensure-deps.sh$' "$w/$goal.cmds" ||
		fail "make $goal does not check the build packages (sh scripts/ensure-deps.sh)"
	if grep -n 'ensure-deps.sh --' "$w/$goal.cmds" >"$w/$goal.extra"; then
		fail "make $goal asks for more than the build packages: $(cat "$w/$goal.extra")"
	fi
	grep -q -- '-lcmocka' "$w/$goal.cmds" && fail "make $goal builds a test program"
done
make -n -C "$top" B="$w/b" tests >"$w/tests.cmds" 2>&1 || fail "make -n tests failed"
check_line=$(grep -n '^sh scripts/ensure-deps.sh --check$' "$w/tests.cmds" | head -1 | cut -d: -f1)
cmocka_line=$(grep -n -- '-lcmocka' "$w/tests.cmds" | head -1 | cut -d: -f1)
if [ -z "$check_line" ]; then
	fail "make check does not install the tests' packages (ensure-deps.sh --check)"
elif [ -z "$cmocka_line" ]; then
	fail "make -n tests builds no cmocka test (the check above proves nothing)"
elif [ "$check_line" -gt "$cmocka_line" ]; then
	fail "make check builds a cmocka test (line $cmocka_line) before installing cmocka (line $check_line)"
fi

# 2. The package lists, as a user who is not root with nothing installed.
mkdir "$w/bin"
printf '#!/bin/sh\nexit 1\n' >"$w/bin/dpkg-query"
printf '#!/bin/sh\necho 1000\n' >"$w/bin/id"
printf '#!/bin/sh\necho "apt-get ran: $*" >>"%s/apt.log"\nexit 1\n' "$w" >"$w/bin/apt-get"
chmod +x "$w/bin/dpkg-query" "$w/bin/id" "$w/bin/apt-get"
missing() { # the packages ensure-deps.sh [$1] says are missing
	PATH="$w/bin:$PATH" sh "$top/scripts/ensure-deps.sh" "$@" 2>&1 >/dev/null |
		sed -n 's/^leaksnap: missing Debian packages: *//p'
}
build=$(missing)
[ -n "$build" ] || fail "ensure-deps.sh names no build package when none is installed"
for p in gcc libdw-dev libelf-dev libjansson-dev libiberty-dev libzip-dev libprotobuf-c-dev libsqlite3-dev \
	libcurl4-openssl-dev protobuf-c-compiler; do
	case " $build " in *" $p "*) ;; *) fail "the build set lacks $p: $build" ;; esac
done
for p in $test_only; do
	case " $build " in *" $p "*) fail "the build set asks for $p, which only tests need" ;; esac
done
demo=$(missing --demo)
[ "$demo" = "$build" ] || fail "make demo asks for '$demo', not just the build set '$build'"
check=$(missing --check)
for p in $build libcmocka-dev chromium valgrind heaptrack llvm clang zsh; do
	case " $check " in *" $p "*) ;; *) fail "the check set lacks $p: $check" ;; esac
done
PATH="$w/bin:$PATH" sh "$top/scripts/ensure-deps.sh" 2>"$w/err" >/dev/null
st=$?
[ $st = 1 ] || fail "ensure-deps.sh as a user with packages missing: status $st, not 1"
grep -q '^leaksnap: install them as root: apt-get install ' "$w/err" ||
	fail "no 'install them as root' line: $(cat "$w/err")"
[ -e "$w/apt.log" ] && fail "apt-get ran without root: $(cat "$w/apt.log")"

[ $fails = 0 ] || exit 1
echo "ok"
