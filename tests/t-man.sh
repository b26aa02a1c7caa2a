#!/bin/sh
# The man pages (docs/man): mandoc -T lint, and groff with warnings on, find
# nothing to warn about; every option that a command's --help prints is in
# that command's part of its page (leaksnap(1): the subsection
# "leaksnap CMD" or the options every snapshot reader shares; leakdiff(1)
# for diff and leakdiff), and every environment variable a --help names is
# in the pages.  The lists come from the --help texts of the binary under
# test, so an option added without documentation fails here.
set -u
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$B/bin" && pwd)
man=$top/docs/man
command -v mandoc >/dev/null 2>&1 || { echo "mandoc is not installed"; exit 77; }
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-man.XXXXXX")
trap 'rm -rf "$w"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
bs=$(printf '\b')

pages="leaksnap.1 leaksnap-attach.1 leaksnap-ctl.1 leaksnap-watch.1 leaksnap-store.1 leakdiff.1 libleakhook.7 leaksnap-format.5"
for p in $pages; do
	[ -f "$man/$p" ] || { fail "$p: missing"; continue; }
	mandoc -T lint -W warning "$man/$p" >"$w/lint" 2>&1
	[ -s "$w/lint" ] && { fail "$p: mandoc -T lint"; cat "$w/lint"; }
	if command -v groff >/dev/null 2>&1; then
		groff -mandoc -Tutf8 -ww -z "$man/$p" >"$w/groff" 2>&1
		[ -s "$w/groff" ] && { fail "$p: groff -ww"; cat "$w/groff"; }
	fi
	# the page as a reader sees it, without overstrike
	mandoc -T ascii "$man/$p" | sed "s/.$bs//g" >"$w/$p.txt"
done

# options HELP-FILE: the options its option lines start with (-x, --long)
options() {
	sed -n 's/^  *\(-[A-Za-z0-9]\), \(--[a-z0-9-]*\).*/\1 \2/p; s/^  *\(--*[A-Za-z0-9][a-z0-9-]*\).*/\1/p' "$1" |
		tr ' ' '\n' | grep -E '^--?[A-Za-z0-9]' | sort -u
}
# envvars HELP-FILE: the environment variables it names: $NAME, NAME=,
# NAME at the start of an indented line, or LEAKSNAP_*, ANDROID_*, LD_*
envvars() {
	{
		grep -o -E '\$[A-Z][A-Z0-9_]*|[A-Z][A-Z0-9_]*_[A-Z0-9_]*=' "$1"
		sed -n 's/^  *\([A-Z][A-Z0-9]*_[A-Z0-9_]*\)  .*/\1/p' "$1"
		grep -o -E '(LEAKSNAP|ANDROID|LD)_[A-Z0-9_]*[A-Z0-9]' "$1"
	} | tr -d '$=' | sort -u
}
# section PAGE TITLE: the lines of subsection TITLE of a rendered page
section() {
	awk -v h="   $2" '$0 == h { on = 1; next } on && /^([^ ]| [^ ]|  [^ ]|   [^ ])/ { exit } on { print }' "$w/$1.txt"
}
has() { # TEXT-FILE WORD: WORD appears as a word
	grep -q -E -e "(^|[^A-Za-z0-9-])$2([^A-Za-z0-9-]|\$)" "$1"
}
check_help() { # NAME HELP-FILE TEXT-FILE
	n=0
	for o in $(options "$2"); do
		n=$((n + 1))
		has "$3" "$o" || fail "$1: $o is in --help, not in its man page"
	done
	[ $n -gt 0 ] || fail "$1: no options found in its --help"
	for v in $(envvars "$2"); do
		cat "$w/leaksnap.1.txt" "$w/libleakhook.7.txt" "$w/leakdiff.1.txt" \
			"$w/leaksnap-attach.1.txt" "$w/leaksnap-ctl.1.txt" "$w/leaksnap-watch.1.txt" "$w/leaksnap-store.1.txt" >"$w/all.txt"
		has "$w/all.txt" "$v" || fail "$1: \$$v is in --help, not in the man pages"
	done
}

"$bin/leaksnap" --help >"$w/main.help" || fail "leaksnap --help"
cmds=$(sed -n '/^Commands:/,/^$/p' "$w/main.help" | awk 'NF > 1 && $1 != "Commands:" { print $1 }')
[ -n "$cmds" ] || fail "no commands in leaksnap --help"
section leaksnap.1 "Options of every command that reads a snapshot" >"$w/common.txt"
[ -s "$w/common.txt" ] || fail "leaksnap.1: no shared options subsection"
for c in $cmds; do
	"$bin/leaksnap" "$c" --help >"$w/$c.help" 2>&1 || fail "leaksnap $c --help: status $?"
	if [ "$c" = diff ]; then
		cp "$w/leakdiff.1.txt" "$w/$c.txt"
	elif [ -f "$w/leaksnap-$c.1.txt" ]; then
		# a command with a page of its own (leaksnap-attach(1), leaksnap-store(1))
		cp "$w/leaksnap-$c.1.txt" "$w/$c.txt"
	else
		section leaksnap.1 "leaksnap $c" >"$w/$c.txt"
		[ -s "$w/$c.txt" ] || { fail "leaksnap.1: no subsection 'leaksnap $c'"; continue; }
		cat "$w/common.txt" >>"$w/$c.txt"
	fi
	check_help "leaksnap $c" "$w/$c.help" "$w/$c.txt"
	has "$w/leaksnap.1.txt" "$c" || fail "leaksnap.1: command $c not named"
done
"$bin/leakdiff" --help >"$w/leakdiff.help" || fail "leakdiff --help"
check_help leakdiff "$w/leakdiff.help" "$w/leakdiff.1.txt"
# what the top-level help names: --help, --version, every command
for o in $(grep -o -E -e '--[a-z][a-z0-9-]*' "$w/main.help" | sort -u); do
	has "$w/leaksnap.1.txt" "$o" || fail "leaksnap: $o is in --help, not in leaksnap.1"
done
# the checks can fail: an option the page does not have is found missing
printf '  --no-such-option     x\n' >"$w/fake.help"
printf 'nothing here\n' >"$w/fake.txt"
( fails=0; check_help fake "$w/fake.help" "$w/fake.txt" >/dev/null; [ $fails = 1 ] ) ||
	fail "the option check does not catch a missing option"

[ $fails = 0 ] || exit 1
echo "man pages: lint clean; the options of $(echo $cmds | wc -w) commands and leakdiff documented"
