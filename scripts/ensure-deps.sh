#!/bin/sh
# Make sure the Debian packages leaksnap needs are installed: the build
# set always (what `make` needs, nothing more), and each named set on top.
# As root, installs what is missing with apt-get; otherwise says what to run.
# Usage: ensure-deps.sh [--demo|--check|--bench|--cross|--fuzz]
#   (none)   make: compilers, libraries (SQLite and libcurl for the store) and protoc-c
#   --demo   make demo: the build set (it compiles its example with gcc)
#   --check  make check: cmocka, and the programs the tests compare with or run
#            (clickhouse-server for the store's ClickHouse tests, which start
#            their own server: installed, never started as a service)
#   --bench  make bench: the peer tools the benchmarks run side by side
#   --cross  make cross: the ARM cross compilers and qemu-user
#   --fuzz   make fuzz: clang's libFuzzer and llvm-cov
set -u

# (libsqlite3-dev: the store's SQLite backend; libcurl4-openssl-dev: its
# ClickHouse backend, over HTTP)
pkgs="gcc make libc6-dev libdw-dev libelf-dev libdebuginfod-dev libjansson-dev libiberty-dev libzip-dev zlib1g-dev protobuf-c-compiler libprotobuf-c-dev libsqlite3-dev libcurl4-openssl-dev"
for arg in "$@"; do
	case "$arg" in
	--demo) ;;
	--check) pkgs="$pkgs clickhouse-server curl libcmocka-dev elfutils debuginfod dwz binutils g++ python3 perl git heaptrack llvm clang lld libc6-dbg chromium golang-go valgrind libclang-rt-dev" ;; # valgrind, libclang-rt: t-reach.sh compares with memcheck and LeakSanitizer
	--bench) pkgs="$pkgs clickhouse-server curl hyperfine heaptrack llvm elfutils binutils libc6-dbg g++ python3" ;;
	--fuzz) pkgs="$pkgs clang libclang-rt-dev llvm" ;; # libFuzzer, llvm-cov
	--cross) pkgs="$pkgs gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf libc6-dev-arm64-cross libc6-dev-armhf-cross qemu-user" ;;
	*) echo "ensure-deps: unknown option '$arg'" >&2; exit 2 ;;
	esac
done
# the man page, shell completion and --version tests (tests/t-man.sh,
# t-completion.sh, t-version.sh)
case " $* " in *" --check "*) pkgs="$pkgs mandoc groff-base zsh bash-completion pkg-config" ;; esac

if ! command -v dpkg-query >/dev/null 2>&1; then
	# Not Debian: trust the compiler to complain about missing headers.
	exit 0
fi

missing=""
for p in $pkgs; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ] && [ "$missing" = " clickhouse-server" ]; then
	echo "leaksnap: clickhouse-server is not installed: the store's ClickHouse tests will be skipped" >&2
	echo "leaksnap: (install it as root: apt-get install clickhouse-server)" >&2
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "leaksnap: missing Debian packages:$missing" >&2
	echo "leaksnap: install them as root: apt-get install$missing" >&2
	exit 1
fi

echo "leaksnap: installing missing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2 || { echo "leaksnap: apt-get update failed" >&2; exit 1; }
# clickhouse-server apart: the tests start their own server from it and
# need no service (it is not started: a policy-rc.d refuses it while the
# package installs), and where it cannot be installed its tests are
# skipped, saying so, rather than make check refused
ch=""
case " $missing " in *" clickhouse-server "*)
	ch=clickhouse-server
	missing=$(echo "$missing" | sed 's/ clickhouse-server//') ;;
esac
if [ -n "$missing" ]; then
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >&2 ||
		{ echo "leaksnap: apt-get install$missing failed" >&2; exit 1; }
fi
if [ -n "$ch" ]; then
	policy=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d &&
			policy=/usr/sbin/policy-rc.d
	fi
	apt-get install -y -qq --no-install-recommends clickhouse-server >&2 ||
		echo "leaksnap: apt-get install clickhouse-server failed: its tests will be skipped" >&2
	[ -n "$policy" ] && rm -f "$policy"
fi
