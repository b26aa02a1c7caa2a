#!/bin/sh
# LEAKSNAP_UNWIND=instrument on arm64 and 32-bit ARM (Thumb) under
# qemu-user, with the hooks of `make cross`.  tests/hook/instr is built here
# for each arch with -finstrument-functions:
#  - arm64, with frame pointers: every stack exactly as expected, and the
#    same return addresses (module offsets) as the fp walk's;
#  - arm, Thumb with unwind tables: the same return addresses as the EHABI
#    walk (auto) for the chain and the longjmp (the cases where neither has
#    a gap);
#  - arm, Thumb with neither unwind tables nor frame pointers: full stacks
#    in this mode, where auto gives one frame.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
. "$(dirname "$0")/android-lib.sh"
android_need

# build ARCH OUT FLAGS...: tests/hook/instr for ARCH.
build() {
	_a=$1 _o=$2
	shift 2
	abi_vars "$_a"
	$TRIPLE-gcc -O2 -g -D_GNU_SOURCE -std=gnu11 "$@" -c -o "$_o-plain.o" "$top/tests/hook/instr_plain.c" &&
		$TRIPLE-gcc -O2 -g -D_GNU_SOURCE -std=gnu11 "$@" -finstrument-functions -rdynamic \
			-o "$_o" "$top/tests/hook/instr.c" "$_o-plain.o" -lpthread ||
		fail "$_a: cannot build $_o"
}

# run ARCH NAME MODE PROG: its exit dump by stackcheck ($w/NAME.txt, .rel:
# the records of the 300x blocks).
run() {
	LEAKSNAP_UNWIND=$3 on_device "$1" "$w/$2" "$XB/libleakhook.so" "$4" >"$w/$2.out" 2>"$w/$2.err" ||
		fail "$2: status $?"
	[ -s "$w/$2.err" ] && { fail "$2: stderr"; cat "$w/$2.err"; }
	_d=$(ls "$w/$2".*.exit.dump 2>/dev/null | head -1)
	[ -n "$_d" ] || { fail "$2: no exit dump"; return; }
	"$SC" "$_d" | grep '^30[01][0-9] ' >"$w/$2.txt"
	"$SC" --rel "$_d" | grep '^30[01][0-9] ' >"$w/$2.rel"
}

cat >"$w/want" <<'EOF'
3001 1 app chain5 chain4 chain3 chain2 chain1 main
3001 1 app chain5 chain4 chain3 chain2 chain1 main
3002 1 app after_jump jump_root main
3003 1 app on_signal
3004 1 app cleanup cancel_thread
3005 1 app deeper after_jump jump_root main
3006 1 app bare_thread
3007 1 app plain_alloc
3008 1 app with_inline main
3009 1 app deep deep deep deep deep deep deep deep deep deep deep deep deep deep deep deep
3010 1 app after_deep main
3011 1 app deep_c2 deep_c1 deep_root main
EOF
# the names up to main (what follows is the C library's and qemu's); a
# signal handler's own frame is followed by the sigreturn trampoline
names() {
	awk '{ line = $1 " " $2 " " $3; for (i = 4; i <= NF; i++) { if ($i == "?") break;
		line = line " " $i; if ($i == "main") break } print line }' "$1"
}

# arm64: against the fp walk
abi_vars arm64
build arm64 "$w/instr64" -fno-omit-frame-pointer
run arm64 a64-in instrument "$w/instr64"
run arm64 a64-fp fp "$w/instr64"
names "$w/a64-in.txt" >"$w/a64-in.names"
cmp -s "$w/want" "$w/a64-in.names" || { fail "arm64 instrument: stacks"; diff "$w/want" "$w/a64-in.names"; }
# the same return addresses as far as the shadow stack goes (the fp walk
# goes on into the C library, which is not instrumented; the signal
# handler's and the gap's stacks differ there)
# (the loops read files, not pipes: a fail in a pipeline's subshell is lost)
for k in 3001 3002 3004 3005 3006 3008 3010 3011; do
	grep "^$k " "$w/a64-in.rel" >"$w/a64-in.$k" || fail "arm64: instrument has no $k"
	while read -r line; do
		grep -q -F -e "$line" "$w/a64-fp.rel" ||
			{ fail "arm64: instrument's $k is no prefix of fp's"; echo "  $line"; grep "^$k " "$w/a64-fp.rel"; }
	done <"$w/a64-in.$k"
done

# arm (Thumb), with unwind tables: against the EHABI walk
abi_vars arm
build arm "$w/instr32" $ABI_CFLAGS
run arm a32-in instrument "$w/instr32"
run arm a32-auto auto "$w/instr32"
names "$w/a32-in.txt" >"$w/a32-in.names"
cmp -s "$w/want" "$w/a32-in.names" || { fail "arm instrument: stacks"; diff "$w/want" "$w/a32-in.names"; }
for k in 3001 3002 3005 3008 3010; do
	grep "^$k " "$w/a32-in.rel" >"$w/a32-in.$k"
	grep "^$k " "$w/a32-auto.rel" >"$w/a32-auto.$k"
	[ -s "$w/a32-in.$k" ] || fail "arm: instrument has no $k"
	# the shadow stack ends at main's return address; EHABI may go on
	while read -r line; do
		grep -q -F -e "$line" "$w/a32-auto.$k" ||
			{ fail "arm: instrument's $k is no prefix of EHABI's"; echo "  $line"; cat "$w/a32-auto.$k"; }
	done <"$w/a32-in.$k"
done

# arm (Thumb), no unwind tables, no frame pointers: auto has one frame
build arm "$w/instr32bare" -mthumb -fno-unwind-tables -fno-asynchronous-unwind-tables \
	-fomit-frame-pointer
run arm a32b-in instrument "$w/instr32bare"
run arm a32b-auto auto "$w/instr32bare"
names "$w/a32b-in.txt" >"$w/a32b-in.names"
cmp -s "$w/want" "$w/a32b-in.names" || { fail "arm, no tables: instrument stacks"; diff "$w/want" "$w/a32b-in.names"; }
grep -q -x '3001 2 app chain5' "$w/a32b-auto.txt" ||
	{ fail "arm, no tables: auto gave more than one frame"; cat "$w/a32b-auto.txt"; }

finish
