#!/bin/sh
# leaksnap addr2line and the symbolizer library on fixtures built here from
# tests/symbolizer/: gcc and clang, -O0/-O2, DWARF 4 and 5, zlib-compressed
# sections, a stripped file with a .gnu_debuglink debug file, split DWARF.
# Exact answers for marked lines; agreement with llvm-symbolizer (function,
# file, line, column, inline depth) on random addresses of each build; GNU
# addr2line's plain format; clear errors for bad files and addresses.
set -u
# no debuginfod server of the environment answers for the files made here
unset DEBUGINFOD_URLS
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
L=$(cd "$B/bin" && pwd)/leaksnap
S=$top/tests/symbolizer
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-sym.XXXXXX")
trap 'rm -rf "$w"' EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
for tool in llvm-symbolizer addr2line objdump clang gcc g++ objcopy readelf python3 c++filt; do
	command -v $tool >/dev/null 2>&1 || { echo "$tool is not installed"; exit 77; }
done
cd "$w" || exit 1
cp "$S"/*.c "$S"/*.cc .

build() { # NAME COMPILER FLAGS... : build the C or C++ fixture as NAME
	name=$1 cc=$2
	shift 2
	case $cc in
	*++) "$cc" -std=c++17 "$@" -o "$name" inline_heavy.cc ;;
	*) "$cc" "$@" -o "$name" plain.c plain2.c ;;
	esac || fail "cannot build $name"
}
build c-gcc-O0 gcc -g -O0
build c-gcc-O2 gcc -g -O2
build c-clang-O2 clang -g -O2
build c-gcc-dw4 gcc -g -gdwarf-4 -O2
build cc-gcc-O0 g++ -g -O0
build cc-gcc-O2 g++ -g -O2
build cc-gcc-dw4 g++ -g -gdwarf-4 -O2
build cc-gcc-gz g++ -g -O2 -gz=zlib
build cc-clang-O2 clang++ -g -O2
build cc-clang-dw4 clang++ -g -gdwarf-4 -O1
build cc-clang-split clang++ -g -O2 -gsplit-dwarf
# stripped, with its DWARF in a separate file named by .gnu_debuglink
cp cc-gcc-O2 cc-stripped
objcopy --only-keep-debug cc-stripped cc-stripped.debug &&
	objcopy --strip-debug --add-gnu-debuglink=cc-stripped.debug cc-stripped ||
	fail "cannot make the debuglink pair"
readelf -S cc-gcc-gz | grep -q '\.debug_info.* C ' || readelf -SW cc-gcc-gz | grep '\.debug_info' | grep -q 'C' ||
	fail "cc-gcc-gz has no compressed .debug_info"

addr_of() { # FILE SYMBOL: its address, 0x...
	readelf -sW "$1" | awk -v s="$2" '$8 == s { print "0x" $2; exit }'
}
line_of() { # SOURCE MARKER: the line number of the marker comment
	grep -n "LINE $2\$\|LINE $2 " "$1" | head -1 | cut -d: -f1
}

# Exact answers: a function's first address is in that function, on its
# marked line or one of the three after it (where the compiler puts the
# prologue: the brace, or the first statement).
near() { # GOT-LINE MARKER-LINE
	[ "$1" -ge "$2" ] && [ "$1" -le $(($2 + 3)) ]
}
for b in c-gcc-O0 c-gcc-O2 c-clang-O2 c-gcc-dw4; do
	for fn in plain_leaf plain_other; do
		a=$(addr_of $b $fn)
		src=plain.c
		[ $fn = plain_other ] && src=plain2.c
		# -i: the last two lines are the function itself (square may be
		# inlined at the very first instruction)
		"$L" addr2line -f -i -e $b "$a" | tail -2 >ans.txt
		f=$(sed -n 1p ans.txt)
		loc=$(sed -n 2p ans.txt)
		[ "$f" = $fn ] || fail "$b $fn at $a: function '$f'"
		[ "${loc%:*}" = "$w/$src" ] || fail "$b $fn at $a: file '${loc%:*}'"
		near "${loc##*:}" "$(line_of $src $fn)" || fail "$b $fn at $a: line '${loc##*:}'"
	done
done
for b in cc-gcc-O0 cc-gcc-O2 cc-clang-O2 cc-stripped cc-gcc-gz cc-clang-split; do
	a=$(addr_of $b _ZN2fx9deep_workERKSt6vectorIiSaIiEE)
	"$L" addr2line -f -i -C -e $b "$a" | tail -2 >ans.txt
	f=$(sed -n 1p ans.txt)
	loc=$(sed -n 2p ans.txt)
	[ "$f" = "fx::deep_work(std::vector<int, std::allocator<int> > const&)" ] ||
		fail "$b deep_work at $a: function '$f'"
	[ "${loc%:*}" = "$w/inline_heavy.cc" ] || fail "$b deep_work at $a: file '${loc%:*}'"
	near "${loc##*:}" "$(line_of inline_heavy.cc deep_work)" ||
		fail "$b deep_work at $a: line '${loc##*:}'"
done
# Unknown addresses; without -C, the mangled name as GNU addr2line prints it.
got=$("$L" addr2line -a -f -e cc-gcc-O0 0x10 "$(addr_of cc-gcc-O0 _ZN2fxL8clone_meEii)")
want="0x0000000000000010
??
??:0
$(printf '0x%016x' "$(addr_of cc-gcc-O0 _ZN2fxL8clone_meEii)")
_ZN2fxL8clone_meEii
$w/inline_heavy.cc:$(($(grep -n 'clone_me(int a, int unused)' inline_heavy.cc | cut -d: -f1) + 1))"
[ "$got" = "$want" ] || fail "unknown address / mangled name: got '$got', expected '$want'"

# The inline chain of a square() call inside plain_leaf (gcc -O2 inlines it).
"$L" addr2line -f -i -e c-gcc-O2 $(objdump -d --no-show-raw-insn c-gcc-O2 |
	awk '/<plain_leaf>:/ { f = 1; next } f && /imul/ { print "0x" $1; exit }' | tr -d :) >inl.txt
want="square
$w/plain.c:$(line_of plain.c square)
plain_leaf"
[ "$(head -3 inl.txt)" = "$want" ] || { fail "inline chain of square in plain_leaf:"; cat inl.txt; }

# gcc -O2 gives a lambda's std::function handler no linkage name: the
# outermost frame, below the lambda inlined into it, is named by its
# symbol, as GNU addr2line and llvm-symbolizer name it (the two lambdas'
# handlers would both be '_M_invoke', and leakdiff --by function would
# merge them).
cat >lambda.cc <<'X'
#include <cstdlib>
#include <functional>
void *keep[8];
int main(int argc, char **)
{
	std::function<void(int)> f1 = [](int n) { keep[n & 7] = malloc(1000); };
	std::function<void(int)> f2 = [](int n) { keep[n & 7] = malloc(10); };
	f1(argc);
	f2(argc + 1);
	return 0;
}
X
g++ -g -O2 -o lambda lambda.cc || fail "cannot build lambda.cc"
readelf -sW lambda | awk '$8 ~ /_M_invoke/ { print $2, $8 }' >handlers.txt
[ "$(wc -l <handlers.txt)" = 2 ] || { fail "lambda: not two _M_invoke handlers"; cat handlers.txt; }
while read -r at mangled; do
	call=$(objdump -d --no-show-raw-insn --start-address=0x$at --stop-address=$((0x$at + 64)) lambda |
		awk '/call.*malloc/ { sub(":", "", $1); print "0x" $1; exit }')
	[ -n "$call" ] || { fail "lambda: no call to malloc in $mangled"; continue; }
	got=$("$L" addr2line -f -i -C -e lambda "$call" | tail -2 | head -1)
	[ "$got" = "$(echo "$mangled" | c++filt)" ] || fail "lambda handler at $call: '$got', expected '$(echo "$mangled" | c++filt)'"
done <handlers.txt

# Agreement with llvm-symbolizer on random addresses of every build.
for b in c-gcc-O0 c-gcc-O2 c-clang-O2 c-gcc-dw4 cc-gcc-O0 cc-gcc-O2 cc-gcc-dw4 cc-gcc-gz \
	cc-clang-O2 cc-clang-dw4 cc-clang-split cc-stripped; do
	python3 "$top/tests/tools/symcmp.py" "$L" "$b" 400 7 >cmp.$b.txt 2>&1 ||
		{ fail "$b: differs from llvm-symbolizer"; cat cmp.$b.txt; }
done

# GNU addr2line's plain output, byte for byte, on the C builds (on C++ it
# differs where binutils 2.40 is wrong: DWARF 5 file indexes, inline
# chains it does not follow).
for b in c-gcc-O0 c-gcc-O2 c-clang-O2 c-gcc-dw4; do
	python3 -c "
import random, subprocess, sys
out = subprocess.run(['readelf', '-SW', sys.argv[1]], capture_output=True, text=True).stdout
sec = [l.split(']', 1)[1].split() for l in out.splitlines() if ' .text ' in l or ' .fini ' in l]
lo = int(sec[0][2], 16); hi = int(sec[-1][2], 16) + int(sec[-1][4], 16) + 16
r = random.Random(11)
print(''.join('0x%x\\n' % r.randrange(lo, hi) for _ in range(300)), end='')
" $b >$b.addrs
	[ "$(grep -c '^0x[0-9a-f]*$' $b.addrs)" = 300 ] || fail "$b: no addresses to compare"
	addr2line -a -f -i -e $b <$b.addrs >$b.gnu
	"$L" addr2line -a -f -i -e $b <$b.addrs >$b.ours
	cmp -s $b.gnu $b.ours || { fail "$b: plain output differs from GNU addr2line"; diff $b.gnu $b.ours | head; }
done

# An address only a data object's symbol covers (crtstuff's
# __frame_dummy_init_array_entry in .init_array): GNU addr2line names it by
# functions and untyped symbols only ("??"), llvm-symbolizer (-j) by the
# object.
a=$(nm c-gcc-O2 | awk '$3 == "__frame_dummy_init_array_entry" { print "0x" $1 }')
if [ -n "$a" ]; then
	addr2line -f -e c-gcc-O2 "$a" >obj.gnu
	"$L" addr2line -f -e c-gcc-O2 "$a" >obj.ours
	cmp -s obj.gnu obj.ours || { fail "data object: differs from GNU addr2line"; diff obj.gnu obj.ours; }
	"$L" addr2line -j -e c-gcc-O2 "$a" | grep -q '"FunctionName":"__frame_dummy_init_array_entry"' ||
		fail "data object: -j does not name the object as llvm-symbolizer does"
else
	fail "c-gcc-O2: no __frame_dummy_init_array_entry"
fi

# Rust (when rustc is here): v0 names (the default mangling) at -O2, and
# -O0 with the standard library's legacy-mangled code.
if command -v rustc >/dev/null 2>&1; then
	cp "$S/rustfx.rs" .
	for opt in 0 2; do
		rustc -g -C opt-level=$opt -o rust-O$opt rustfx.rs 2>rust.err || { fail "rustc -O$opt"; cat rust.err; continue; }
		python3 "$top/tests/tools/symcmp.py" "$L" rust-O$opt 400 7 >cmp.rust-O$opt.txt 2>&1 ||
			{ fail "rust-O$opt: differs from llvm-symbolizer"; cat cmp.rust-O$opt.txt; }
	done
	a=$(readelf -sW rust-O2 | awk '$8 ~ /rust_work/ { print "0x" $2; exit }')
	"$L" addr2line -f -i -C -e rust-O2 "$a" | tail -2 >rust.ans
	f=$(sed -n 1p rust.ans)
	loc=$(sed -n 2p rust.ans)
	[ "$f" = "rustfx::rust_work" ] || fail "rust_work: function '$f'"
	[ "${loc%:*}" = "$w/rustfx.rs" ] || fail "rust_work: file '${loc%:*}'"
	near "${loc##*:}" "$(line_of rustfx.rs rust_work)" || fail "rust_work: line '${loc##*:}'"
else
	echo "rustc is not installed: the Rust fixture is skipped"
fi

# stdin: one answer per line, in order; JSON objects one per line.
printf '%s\n0x10\n' "$(addr_of c-gcc-O0 plain_other)" | "$L" addr2line -f -e c-gcc-O0 >stdin.txt
printf 'plain_other\n%s\n??\n??:0\n' "$w/plain2.c:$(($(line_of plain2.c plain_other) + 1))" |
	cmp -s - stdin.txt || { fail "stdin answers"; cat stdin.txt; }
printf '0x10\n0x10\n' | "$L" addr2line -j -e c-gcc-O2 >stdin.json
[ "$(wc -l <stdin.json)" = 2 ] || fail "JSON on stdin: not one line per address"
grep -q -x '{"Address":"0x10","ModuleName":"c-gcc-O2","Symbol":\[{"Column":0,"Discriminator":0,"FileName":"","FunctionName":"","Line":0,"StartAddress":"","StartFileName":"","StartLine":0}\]}' stdin.json ||
	{ fail "JSON for an unknown address"; cat stdin.json; }

# Errors: one line, status 2.
check_err() { # WANT-STDERR ARGS...
	want=$1
	shift
	"$L" addr2line "$@" >err.out 2>err.txt </dev/null
	st=$?
	[ $st = 2 ] || fail "addr2line $*: status $st, expected 2"
	printf '%s\n' "$want" | cmp -s - err.txt || { fail "addr2line $*: stderr"; cat err.txt; }
}
check_err "leaksnap: $w/nonexistent: No such file or directory" -e "$w/nonexistent" 0x1
printf 'not elf\n' >text.txt
check_err "leaksnap: text.txt: not an ELF file" -e text.txt 0x1
head -c 100 cc-gcc-O2 >trunc.elf
shoff=$(readelf -hW cc-gcc-O2 | sed -n 's/.*Start of section headers: *\([0-9]*\).*/\1/p')
shend=$((shoff + $(readelf -hW cc-gcc-O2 | sed -n 's/.*Number of section headers: *\([0-9]*\).*/\1/p') * 64))
check_err "leaksnap: trunc.elf: byte offset $shoff: truncated ELF file: section headers end at $shend, the file has 100 bytes" -e trunc.elf 0x1
# a copy cut a few kilobytes short: its section headers (at the end) are gone
size=$(stat -c %s cc-gcc-O2)
head -c $((size - 5000)) cc-gcc-O2 >cut.elf
"$L" addr2line -e cut.elf 0x1 >/dev/null 2>cut.err
[ $? = 2 ] && grep -q "^leaksnap: cut.elf: byte offset [0-9]*: truncated ELF file: section headers end at" cut.err ||
	{ fail "ELF cut short"; cat cut.err; }
check_err "leaksnap: .: not a regular file" -e . 0x1
# a blank line is address 0 and a leading '+' is allowed, as in GNU's
a=$(addr_of c-gcc-O2 plain_leaf)
printf '%s\n\n+%s\n' "$a" "$a" | "$L" addr2line -a -f -e c-gcc-O2 >blank.ours 2>&1 ||
	fail "addr2line: a blank line or '+' was refused"
printf '%s\n\n+%s\n' "$a" "$a" | addr2line -a -f -e c-gcc-O2 >blank.gnu
cmp -s blank.ours blank.gnu || { fail "addr2line: blank line / '+' not as GNU's"; diff blank.gnu blank.ours; }
mkfifo fifo.elf
check_err "leaksnap: fifo.elf: not a regular file" -e fifo.elf 0x1
head -c 63 c-gcc-O2 >short.elf
check_err "leaksnap: short.elf: truncated ELF file: 63 bytes, less than its header" -e short.elf 0x1
check_err "leaksnap: '': No such file or directory" -e '' 0x1
check_err "leaksnap: addr2line: missing -e FILE (see 'leaksnap addr2line --help')" 0x1
check_err "leaksnap: zz: not a hexadecimal address" -e c-gcc-O2 zz
[ "$(cat err.out)" = "??:0" ] || fail "a bad address is not answered as unknown"
printf '0x10\nzz\n' | "$L" addr2line -e c-gcc-O2 >bad.out 2>bad.err
[ $? = 2 ] || fail "bad address on stdin: status"
grep -q -x 'leaksnap: <stdin>: line 2: not a hexadecimal address' bad.err || fail "bad address on stdin: message"
[ "$(wc -l <bad.out)" = 2 ] || fail "bad address on stdin: answers out of step"

# Corrupt DWARF (bytes of .debug_info overwritten): one error line for the
# unit, every address still answered (from the symbol table there).
python3 - cc-gcc-O2 cor.elf <<'EOF'
import random, subprocess, sys
src, dst = sys.argv[1:]
out = subprocess.run(['readelf', '-SW', src], capture_output=True, text=True, check=True).stdout
sec = [l.split(']', 1)[1].split() for l in out.splitlines() if ' .debug_info ' in l][0]
off, size = int(sec[3], 16), int(sec[4], 16)
b = bytearray(open(src, 'rb').read())
r = random.Random(5)
for _ in range(200):
    b[off + r.randrange(size)] = r.randrange(256)
open(dst, 'wb').write(b)
EOF
python3 -c "
import random
r = random.Random(1)
print(''.join('0x%x\\n' % r.randrange(0x1100, 0x2f00) for _ in range(500)), end='')" >cor.addrs
"$L" addr2line -f -e cor.elf <cor.addrs >cor.out 2>cor.err
[ $? = 2 ] || fail "corrupt DWARF: status"
[ "$(wc -l <cor.err)" = 1 ] && grep -q "^leaksnap: cor.elf: corrupt DWARF in the unit at offset 0x[0-9a-f]*: " cor.err ||
	{ fail "corrupt DWARF: stderr"; head -3 cor.err; }
[ "$(wc -l <cor.out)" = 1000 ] || fail "corrupt DWARF: $(wc -l <cor.out) lines for 500 addresses"

# Threads (LEAKSNAP_JOBS: units indexed on threads, addresses found ahead):
# the same output, errors and status as with none -- on a program of many
# units (the benchmark's generator, small), on every build above, from
# standard input with bad lines among the addresses, from the command line,
# as JSON, and on copies with a corrupt unit.
rand_addrs() { # FILE N SEED: N random addresses in its .text
	python3 - "$@" <<'EOF'
import random, subprocess, sys
path, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = subprocess.run(['readelf', '-SW', path], capture_output=True, text=True, check=True).stdout
sec = [l.split(']', 1)[1].split() for l in out.splitlines() if ' .text ' in l][0]
lo, size = int(sec[2], 16), int(sec[4], 16)
r = random.Random(seed)
print(''.join('0x%x\n' % r.randrange(lo, lo + size) for _ in range(n)), end='')
EOF
}
same_jobs() { # NAME ARGS...: addr2line ARGS <NAME.in alike with 0, 2 and 5 jobs
	n=$1
	shift
	for j in 0 2 5; do
		LEAKSNAP_JOBS=$j "$L" addr2line "$@" <$n.in >$n.$j.out 2>$n.$j.err
		echo $? >$n.$j.st
	done
	for j in 2 5; do
		cmp -s $n.0.out $n.$j.out && cmp -s $n.0.err $n.$j.err && cmp -s $n.0.st $n.$j.st ||
			{ fail "$n: $j jobs answer otherwise than none"; diff $n.0.out $n.$j.out | head -5
			  diff $n.0.err $n.$j.err | head -5; }
	done
}
mkdir gen && python3 "$top/bench/gen_cxx.py" --units 12 --funcs 6 --seed 3 gen >gen.log 2>&1 &&
	make -s -C gen >gen.log 2>&1 || { fail "cannot build the many-unit program"; cat gen.log; }
[ "$(readelf --debug-dump=info gen/symbench 2>/dev/null | grep -c 'DW_TAG_compile_unit')" -ge 12 ] ||
	fail "the many-unit program has fewer than 12 units"
rand_addrs gen/symbench 3000 9 | awk 'NR % 500 == 7 { print "zz" } { print }' >many.in
same_jobs many -a -f -i -C -e gen/symbench
[ "$(cat many.0.st)" = 2 ] && [ "$(grep -c 'not a hexadecimal address' many.0.err)" = 6 ] ||
	fail "many units: the bad lines are not said"
[ "$(grep -c '^0x' many.0.out)" = 3006 ] || fail "many units: answers out of step"
cp many.in many-json.in
same_jobs many-json -j -e gen/symbench
: >args.in
same_jobs args -f -i -C -e gen/symbench $(rand_addrs gen/symbench 150 4) zz 0x10
same_jobs args -j -e gen/symbench $(rand_addrs gen/symbench 150 4)
for b in c-gcc-O0 c-gcc-O2 c-clang-O2 c-gcc-dw4 cc-gcc-O0 cc-gcc-O2 cc-gcc-dw4 cc-gcc-gz \
	cc-clang-O2 cc-clang-dw4 cc-clang-split cc-stripped; do
	rand_addrs $b 300 5 >jobs-$b.in
	same_jobs jobs-$b -f -i -C -e $b
done
# libc with libc6-dbg's debug file (compressed, found by build ID: opened
# with its sections inflated on threads), when it is installed
libc=/lib/x86_64-linux-gnu/libc.so.6
bid=$(readelf -n $libc 2>/dev/null | sed -n 's/.*Build ID: //p' | head -n 1)
if [ -n "$bid" ] && [ -f "/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug" ]; then
	rand_addrs $libc 3000 6 >libc.in
	same_jobs libc -a -f -i -C -e $libc
	cp libc.in libc-json.in
	same_jobs libc-json -j -e $libc
	grep -q ':[1-9]' libc.0.out || fail "libc: no source lines (is libc6-dbg's file read?)"
fi
# a corrupt unit (its DIEs overwritten), said once, by its first address
for k in 3 5 7; do
	python3 - gen/symbench cor-many$k.elf $k <<'EOF'
import subprocess, sys
src, dst, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = subprocess.run(['readelf', '-SW', src], capture_output=True, text=True, check=True).stdout
sec = [l.split(']', 1)[1].split() for l in out.splitlines() if ' .debug_info ' in l][0]
off, size = int(sec[3], 16), int(sec[4], 16)
b = bytearray(open(src, 'rb').read())
at = off + size * k // 10
b[at:at + 64] = b'\xff' * 64
open(dst, 'wb').write(b)
EOF
	rand_addrs gen/symbench 2000 $k >cor-many$k.in
	same_jobs cor-many$k -a -f -i -e cor-many$k.elf
	[ "$(cat cor-many$k.0.st)" = 2 ] && [ "$(wc -l <cor-many$k.0.err)" = 1 ] &&
		grep -q "^leaksnap: cor-many$k.elf: corrupt DWARF" cor-many$k.0.err ||
		{ fail "corrupt unit $k: not said once"; head -3 cor-many$k.0.err; }
done

[ $fails = 0 ] || { echo "$fails failure(s)"; exit 1; }
exit 0
