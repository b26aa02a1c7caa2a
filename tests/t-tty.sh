#!/bin/sh
# Output bound for a terminal: names from ELF files, maps and dumps can hold
# escape sequences, so on a terminal every byte a terminal could act on is
# shown as \xNN (C0 controls but newline and tab, DEL, C1 controls, bytes
# outside UTF-8), on stdout and in messages; piped output keeps the bytes.
# The terminal is a pseudo-terminal made by script(1) (util-linux).
set -eu
B=$1
L=$(cd "$B/bin" && pwd)/leaksnap
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-tty.XXXXXX")
trap 'rm -rf "$w"' EXIT
for tool in script gcc objcopy nm od; do
	command -v $tool >/dev/null 2>&1 || { echo "no $tool: cannot test terminal output"; exit 77; }
done

fail() { echo "FAIL: $*"; exit 1; }
expect_eq() { [ "$2" = "$3" ] || { printf 'FAIL: %s\n got: %s\nwant: %s\n' "$1" "$2" "$3"; exit 1; }; }
# on_tty OUT CMD...: run CMD with stdout and stderr on a pseudo-terminal,
# its output (the terminal's CRLF turned back into LF) in OUT; the status is
# CMD's.
on_tty() {
	out=$1; shift
	# script runs a shell command line: pass the words through the environment
	i=0 cmd=""
	for a in "$@"; do
		export "TTY_ARG$i=$a"; cmd="$cmd \"\$TTY_ARG$i\""; i=$((i + 1))
	done
	st=0
	script -qec "exec $cmd" /dev/null </dev/null >"$w/raw" || st=$?
	tr -d '\r' <"$w/raw" >"$out"
	return $st
}
# hexbytes FILE: the file as one line of hex
hexbytes() { od -An -v -tx1 "$1" | tr -d ' \n'; }

# 1. A function named with an OSC title sequence, a C1 CSI, a byte that is
#    not UTF-8 and a real UTF-8 letter (which stays).
printf 'void hostile_fn(void) {}\nint main(void) { hostile_fn(); return 0; }\n' >"$w/h.c"
gcc -O0 -c -o "$w/h.o" "$w/h.c" || fail "cannot build h.o"
objcopy --redefine-sym "hostile_fn=$(printf 'bad\377name\033]0;pwned\007\302\233x\303\251')" "$w/h.o" ||
	fail "objcopy --redefine-sym"
gcc -o "$w/h" "$w/h.o" || fail "cannot link h"
addr=0x$(nm "$w/h" | grep -a ' T bad' | cut -d' ' -f1)
on_tty "$w/tty.out" "$L" addr2line -f -e "$w/h" "$addr" || fail "addr2line on a terminal"
expect_eq "escaped on a terminal" "$(cat "$w/tty.out")" \
	"$(printf '%s\n%s' 'bad\xffname\x1b]0;pwned\x07\xc2\x9bx'"$(printf '\303\251')" '??:?')"
"$L" addr2line -f -e "$w/h" "$addr" >"$w/pipe.out" || fail "addr2line to a pipe"
expect_eq "bytes kept in a pipe" "$(hexbytes "$w/pipe.out")" \
	"$(printf 'bad\377name\033]0;pwned\007\302\233x\303\251\n??:?\n' >"$w/want"; hexbytes "$w/want")"

# 2. Messages: the file name of an error, on a terminal and not.
bad="$w/$(printf 'no\033[2Jsuch\302\205file\377')"
st=0; on_tty "$w/err.out" "$L" show "$bad" || st=$?
expect_eq "error status" "$st" 2
expect_eq "message on a terminal" "$(cat "$w/err.out")" \
	"leaksnap: $w/no\\x1b[2Jsuch\\xc2\\x85file\\xff: No such file or directory"
st=0; "$L" show "$bad" 2>"$w/err2.out" || st=$?
expect_eq "error status, piped" "$st" 2
cmp -s "$w/err.out" "$w/err2.out" || fail "messages differ between a terminal and a pipe"

# 3. A maps path with controls, through `leaksnap maps`.
printf '7f0000000000-7f0000001000 r-xp 00000000 08:01 7 /data/app/x\033]0;t\007\302\233y.so\n' >"$w/m.maps"
on_tty "$w/maps.out" "$L" maps "$w/m.maps" || fail "maps on a terminal"
grep -q '/data/app/x\\x1b\]0;t\\x07\\xc2\\x9by\.so' "$w/maps.out" || fail "maps path not escaped: $(cat "$w/maps.out")"
if tr -d '\n\t -~' <"$w/maps.out" | grep -q .; then fail "maps on a terminal: raw control or non-ASCII bytes left"; fi

# 4. Much well-formed UTF-8 (2-, 3- and 4-byte characters) crosses every
#    buffer boundary unchanged.
i=0
while [ $i -lt 3000 ]; do
	printf '%012x-%012x r-xp 00000000 08:01 %d /system/lib64/lib\303\251\342\202\254\360\237\230\200%d.so\n' \
		$((0x700000000000 + i * 8192)) $((0x700000000000 + i * 8192 + 4096)) $i $i
	i=$((i + 1))
done >"$w/many.maps"
on_tty "$w/many.tty" "$L" maps "$w/many.maps" || fail "maps on a terminal, UTF-8"
"$L" maps "$w/many.maps" >"$w/many.pipe" || fail "maps to a pipe, UTF-8"
cmp -s "$w/many.tty" "$w/many.pipe" || fail "well-formed UTF-8 changed on a terminal"
expect_eq "UTF-8 lines" "$(grep -c 'libé€😀' "$w/many.tty")" 6000
# 5. convert --to android-text on a terminal: the library writes the
#    descriptor itself; the fingerprint and paths are escaped all the same,
#    and the same bytes go to a pipe raw.
{
	printf 'Android Native Heap Dump v1.2\n\nBuild fingerprint: '"'"'fp\033[32mX\302\233\377'"'"'\n\n'
	printf 'Total memory: 10\nAllocation records: 1\nBacktrace size: 1\n\n'
	printf 'z 0  sz       10  num    1  bt 7f0000000010\nMAPS\n'
	printf '7f0000000000-7f0000001000 r-xp 00000000 08:01 7 /data/app/x\033]0;t\007y.so\nEND\n'
} >"$w/c.txt"
on_tty "$w/conv.tty" "$L" convert --to android-text "$w/c.txt" - || fail "convert on a terminal"
if tr -d '\n\t -~' <"$w/conv.tty" | grep -q .; then fail "convert on a terminal: raw control or non-ASCII bytes left"; fi
grep -q "^Build fingerprint: 'fp\\\\x1b\[32mX\\\\xc2\\\\x9b\\\\xff'\$" "$w/conv.tty" ||
	fail "convert on a terminal: fingerprint not escaped: $(grep Build "$w/conv.tty")"
"$L" convert --to android-text "$w/c.txt" - >"$w/conv.pipe" || fail "convert to a pipe"
cmp -s "$w/c.txt" "$w/conv.pipe" || fail "convert to a pipe: bytes changed"
echo "t-tty: passed"
