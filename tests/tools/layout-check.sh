#!/bin/sh
# The layout rules of the tree that a program can check (docs/architecture.md):
#
#  1. Library code never prints: no library object refers to standard
#     output or error, to the calls that print there (printf, puts, perror,
#     assert's __assert_fail, err/warn, ...) or to the ones that end the
#     process (exit, abort).  Writing a file through a FILE * the caller
#     gave (fprintf, fputs, fwrite, ...) is allowed only to the writers
#     named in WRITERS below.  nm -u cannot see which stream a call writes
#     to: that is why the streams themselves (stdout, stderr) are refused.
#  2. Every symbol libleaksnap.so (and libleaksnap-export.so) exports
#     carries the project's prefix, leaksnap_.
#  3. A folder never includes another folder's private header: each
#     #include "..." names a file of the same folder (a header generated
#     from one of its files counts: GENERATED), a kit header (kit/*.h), or,
#     from cli/, the one header of a folder of the tool's own (TOOL_HEADERS:
#     the report page's, the device driver's, attach's, the control
#     client's and the store's, never installed; adb/ may include the
#     control client's);
#     each #include <leaksnap/X.h> names a public header (those the build
#     installs in $B/include/leaksnap); no "../" in an include.  The kit,
#     below every stage, includes no public header but <leaksnap/error.h>;
#     the library folders never include the kit's process runner
#     (kit_run.h: the tool's).
#
# Usage: sh tests/tools/layout-check.sh BUILD_DIR (LAYOUT_TOP: another tree
# to check, for its own test).  Prints every offender, one a
# line; exits 0 when all rules hold, 1 when one does not, 77 (skip) when
# the build is missing.
set -u
B=${1:-build}
if ! B=$(cd "$B" 2>/dev/null && pwd); then
	echo "layout-check: no build directory ${1:-build} (run make first)"
	exit 77
fi
top=${LAYOUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1

# The library folders: their objects must not print (rule 1).  attach/,
# control/ and store/ are the tool's, and never print either: they fill
# error records.
LIB_DIRS="libsnapshot mapsparse symbolizer resolve diff kit export report attach control store"
# The folders whose includes are checked (rule 3).
SRC_DIRS="libsnapshot mapsparse symbolizer resolve diff export report adb attach control store hook kit cli"
# The writers, the only library objects that may call stdio's file output
# (on a FILE * their caller gave them): the LEAKSNAP writer's metadata
# (libsnapshot/write.c; write_text.c and output.c write through output.c's
# own buffer with write(2)), the pprof encoder (export/pprof.c) and the
# report page (report/page.c), the folded stacks (export/fold.c) and the
# kit's streamed JSON document (kit/json.c).
WRITERS="libsnapshot/write.o export/pprof.o export/fold.o report/page.o kit/json.o"
# The process-running module ends a forked child with _exit(127) when the
# program cannot be started (the parent learns why through a pipe): it alone
# may refer to _exit.
CHILD_EXIT="kit/kit_run.o"
# Calls that print on standard output or error, or end the process: never
# in a library object.  (stdout and stderr are the streams themselves.)
NEVER="printf vprintf puts putchar putchar_unlocked perror psignal psiginfo herror
	__printf_chk __vprintf_chk stdout stderr _IO_2_1_stdout_ _IO_2_1_stderr_
	err errx verr verrx warn warnx vwarn vwarnx error error_at_line syslog vsyslog
	__assert_fail __assert_perror_fail __assert
	exit _exit _Exit quick_exit abort"
# stdio's file output (and dprintf, to a descriptor): writers only.
WRITE_CALLS="fprintf vfprintf __fprintf_chk __vfprintf_chk fputs fputs_unlocked fputc
	fputc_unlocked putc putc_unlocked _IO_putc fwrite fwrite_unlocked fputws fputwc
	fwprintf vfwprintf dprintf vdprintf __dprintf_chk __vdprintf_chk"
# Headers the build generates, each with the file of the folder it is made
# from: a folder holding that file may include the header.
GENERATED="profile.pb-c.h:profile.proto report_assets.h:report.css"
# The one header of each folder the tool has for itself (not installed):
# the commands (cli/) may include it.
TOOL_HEADERS="report/report.h adb/adb.h attach/attach.h control/control.h store/store.h"
# The device driver reaches a process's control socket through adb
# forward: adb/ may include the control client's header too.
ADB_TOOL_HEADERS="control/control.h"

lib=$B/lib/libleaksnap.so
if [ ! -f "$lib" ] || [ ! -d "$B/obj" ]; then
	echo "layout-check: no build in $B (run make first)"
	exit 77
fi
command -v nm >/dev/null 2>&1 || { echo "layout-check: nm is not installed"; exit 77; }

failed=0
# offenders of the rule $1, one a line on stdin: printed, and counted
report() {
	n=0
	while IFS= read -r line; do
		echo "layout-check: $1: $line"
		n=$((n + 1))
	done
	echo "layout-check: $1: $n offender$([ "$n" = 1 ] || echo s)"
	[ "$n" = 0 ]
}
# shellcheck disable=SC2086 # (split into words on purpose)
words() { printf '%s\n' $1; }

# Rule 1 ----------------------------------------------------------------------
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-layout.XXXXXX")
trap 'rm -rf "$w"' EXIT INT TERM
words "$NEVER" | sort -u >"$w/never"
words "$WRITE_CALLS" | sort -u >"$w/write"
for d in $LIB_DIRS; do
	for o in "$B/obj/$d"/*.o; do
		[ -f "$o" ] || continue
		rel=$d/${o##*/}
		# undefined symbols, without their version (fprintf@GLIBC_2.2.5)
		nm -u "$o" | awk '{ sub(/@.*/, "", $NF); print $NF }' | sort -u >"$w/u"
		case " $CHILD_EXIT " in
		*" $rel "*) grep -vx _exit "$w/never" ;;
		*) cat "$w/never" ;;
		esac >"$w/n"
		bad=$(comm -12 "$w/u" "$w/n" | tr '\n' ' ')
		[ -n "$bad" ] && echo "$rel prints or exits: ${bad% }"
		case " $WRITERS " in
		*" $rel "*) ;;
		*)	bad=$(comm -12 "$w/u" "$w/write" | tr '\n' ' ')
			[ -n "$bad" ] && echo "$rel writes with stdio but is not a writer: ${bad% }" ;;
		esac
	done
done | report "library objects that print" || failed=1

# Rule 2 ----------------------------------------------------------------------
for so in "$lib" "$B/lib/libleaksnap-export.so"; do
	[ -f "$so" ] || continue
	# every defined dynamic symbol but the version nodes (type A)
	nm -D --defined-only "$so" | awk -v so="${so##*/}" \
		'$(NF-1) != "A" { s = $NF; sub(/@.*/, "", s); if (s !~ /^leaksnap_/) print so ": " s }'
done | report "exported symbols without the leaksnap_ prefix" || failed=1

# Rule 3 ----------------------------------------------------------------------
for h in "$B/include/leaksnap"/*.h; do
	[ -f "$h" ] && echo "${h##*/}"
done | sort >"$w/public"
# the generated header $1 may be included from folder $2
generated_for() {
	for g in $GENERATED; do
		[ "${g%%:*}" = "$1" ] || continue
		[ -n "$(find "$2" -name "${g#*:}" -print | head -1)" ] && return 0
	done
	return 1
}
for d in $SRC_DIRS; do
	[ -d "$d" ] || continue
	find "$d" -name '*.[ch]' | sort | while IFS= read -r f; do
		sed -n 's/^[ \t]*#[ \t]*include[ \t]*\([<"][^>"]*[>"]\).*/\1/p' "$f" |
		while IFS= read -r inc; do
			name=${inc#?}
			name=${name%?}
			case $inc in
			\"*)
				case $name in
				*../*|..)
					echo "$f: #include $inc (a path out of the folder)"
					continue ;;
				esac
				dir=${f%/*}
				[ -f "$dir/$name" ] && continue
				case $name in
				kit_run.h)
					case " $LIB_DIRS " in
					*" $d "*) [ "$f" = kit/kit_run.c ] ||
						echo "$f: #include $inc (the tool's process runner, in a library folder)"
						continue ;;
					esac
					continue ;;
				kit*.h) [ -f "kit/$name" ] && continue ;;
				esac
				generated_for "$name" "$d" && continue
				if [ "$d" = cli ]; then
					case " $TOOL_HEADERS " in
					*"/$name "*) continue ;;
					esac
				fi
				if [ "$d" = adb ]; then
					case " $ADB_TOOL_HEADERS " in
					*"/$name "*) continue ;;
					esac
				fi
				# shellcheck disable=SC2086 # (the folders, as words)
				owner=$(find $SRC_DIRS -path "*/$name" 2>/dev/null | head -1)
				echo "$f: #include $inc (${owner:-not found in the tree}; not a file of $d/ or a kit header)"
				;;
			\<leaksnap/*)
				if ! grep -qx "${name#leaksnap/}" "$w/public"; then
					echo "$f: #include $inc (not a public header)"
				elif [ "$d" = kit ] && [ "$name" != leaksnap/error.h ]; then
					echo "$f: #include $inc (the kit includes no stage's header)"
				fi
				;;
			esac
		done
	done
done | report "includes of another folder's private header" || failed=1

exit $failed
