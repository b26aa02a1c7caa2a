#!/bin/sh
# leaksnap addr2line and symbolize on the committed cross-architecture
# fixtures of tests/symbolizer/cross/ (arm64, 32-bit ARM in Thumb and in ARM
# state, x86, x86-64; cross.c built by build.sh there), whatever the host.
# Facts come from the files themselves through readelf (symbols, mapping
# symbols, program headers, DWARF call sites) and the instruction bytes;
# source lines from the LINE markers of cross.c.  Checks: exact function,
# file:line and inline chain of marked lines; call sites of captured return
# addresses (Thumb bit set), through addr2line and through a dump given to
# symbolize (the only way to pc - 1 with the Thumb bit cleared: addr2line
# looks addresses up as given); `-a` width by ELF class; mapping symbols never name code;
# agreement with llvm-symbolizer on every byte of .text (all fields but
# StartFileName, which llvm-symbolizer 14 leaves empty for DWARF 5) and
# through tests/tools/symcmp.py; GNU addr2line's plain output where the
# host's addr2line reads the file.
set -u
# no debuginfod server of the environment answers for the files made here
unset DEBUGINFOD_URLS
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
L=$(cd "$B/bin" && pwd)/leaksnap
X=$top/tests/symbolizer/cross
SRC=/fixtures/cross/cross.c # the source path written in the fixtures' DWARF
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-cross.XXXXXX")
trap 'rm -rf "$w"' EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
for tool in llvm-symbolizer readelf python3; do
	command -v $tool >/dev/null 2>&1 || { echo "$tool is not installed"; exit 77; }
done
cd "$w" || exit 1

# fixture : ELF class : machine as readelf names it : DWARF or none
cat >fixtures.txt <<'EOF'
arm64.so:64:AArch64:dwarf
thumb.so:32:ARM:dwarf
arm:32:ARM:dwarf
x86:32:Intel 80386:dwarf
x86-64:64:Advanced Micro Devices X86-64:dwarf
thumb-nodebug.so:32:ARM:none
arm-nodebug:32:ARM:none
EOF

line_of() { # MARKER: the line number of the marker comment in cross.c
	grep -n "LINE $1 \*/" "$X/cross.c" | head -1 | cut -d: -f1
}

# facts FILE: what readelf and the bytes say, one fact a line:
#   func NAME START SIZE ISA      the four functions (START: Thumb bit clear)
#   call CALLER CALLEE RET CAPTURED ISA
#                                 each DWARF call site: RET its return pc,
#                                 CAPTURED as a stack holds it (Thumb: RET|1)
#   load VADDR                    the first PT_LOAD (at file offset 0)
#   text LO HI                    .text
#   map NAME COUNT                mapping symbols ($a $t $d $x)
#   error TEXT                    a fact that does not hold
cat >facts.py <<'EOF'
import re, struct, subprocess, sys

path = sys.argv[1]
def readelf(*a):
    return subprocess.run(['readelf'] + list(a) + [path], capture_output=True, text=True,
                          check=True).stdout
hdr = readelf('-hW')
machine = re.search(r'Machine:\s+(.*)', hdr).group(1).strip()
arm, a64 = machine == 'ARM', machine == 'AArch64'
loads = []
for l in readelf('-lW').splitlines():
    f = l.split()
    if f and f[0] == 'LOAD':
        loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
data = open(path, 'rb').read()
def at(vaddr, n):
    for off, va, filesz in loads:
        if va <= vaddr and vaddr + n <= va + filesz:
            return data[off + vaddr - va:off + vaddr - va + n]
    return None
text = None
for l in readelf('-SW').splitlines():
    if ' .text ' in l:
        f = l.split(']', 1)[1].split()
        text = (int(f[2], 16), int(f[2], 16) + int(f[4], 16), l.split('[')[1].split(']')[0].strip())
print('load 0x%x' % loads[0][1])
print('text 0x%x 0x%x' % text[:2])
syms, maps = {}, []
for l in readelf('-sW').splitlines():
    f = l.split()
    if len(f) == 8 and f[0].endswith(':'):
        if f[3] == 'FUNC' and f[7] in ('cross_helper', 'cross_table', 'cross_other', 'cross_entry'):
            syms[f[7]] = (int(f[1], 16), int(f[2]))
        if re.fullmatch(r'\$[atdx](\..*)?', f[7]) and f[6] == text[2]:
            maps.append((int(f[1], 16), f[7][1]))
maps = sorted(set(maps))
for k in 'atdx':
    print('map $%s %d' % (k, sum(1 for m in maps if m[1] == k)))
def state(addr): # the mapping symbol in force at addr
    s = None
    for v, k in maps:
        if v <= addr:
            s = k
    return s
isa_of = {}
for name in ('cross_helper', 'cross_table', 'cross_other', 'cross_entry'):
    if name not in syms:
        print('error no function symbol %s' % name)
        continue
    value, size = syms[name]
    if arm:
        isa = 'thumb' if value & 1 else 'arm'
        start = value & ~1
        if state(start) != isa[0]:
            print('error %s: symbol says %s, mapping symbol $%s' % (name, isa, state(start)))
    else:
        isa, start = ('a64' if a64 else 'x86'), value
    isa_of[name] = (isa, start, size)
    print('func %s 0x%x %d %s' % (name, start, size, isa))
# DWARF call sites, by caller (the subprogram around them) and callee
dies, stack, cur = {}, [], None
try:
    info = readelf('--debug-dump=info')
except subprocess.CalledProcessError:
    info = ''
for l in info.splitlines():
    m = re.match(r'\s*<(\d+)><([0-9a-f]+)>: Abbrev Number: \d+ \((\w+)\)', l)
    if m:
        depth, off = int(m.group(1)), int(m.group(2), 16)
        del stack[depth:]
        cur = {'tag': m.group(3), 'parents': list(stack)}
        dies[off] = cur
        stack.append(off)
        continue
    m = re.match(r'\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s*(.*)', l)
    if m and cur is not None:
        cur[m.group(1)] = m.group(2).strip()
def name(off):
    d = dies.get(off, {})
    if 'DW_AT_name' in d:
        return d['DW_AT_name'].rsplit(': ', 1)[-1]
    for a in ('DW_AT_abstract_origin', 'DW_AT_specification'):
        if a in d:
            return name(int(d[a].strip('<>'), 16))
    return '?'
for off, d in sorted(dies.items()):
    if d['tag'] not in ('DW_TAG_call_site', 'DW_TAG_GNU_call_site'):
        continue
    ret = d.get('DW_AT_call_return_pc') or d.get('DW_AT_low_pc')
    org = d.get('DW_AT_call_origin') or d.get('DW_AT_abstract_origin')
    subs = [p for p in d['parents'] if dies[p]['tag'] == 'DW_TAG_subprogram']
    if not ret or not org or not subs:
        continue
    ret, caller, callee = int(ret, 16), name(subs[-1]), name(int(org.strip('<>'), 16))
    if caller not in isa_of:
        continue
    isa = isa_of[caller][0]
    # the instruction that ends at the return address is a call
    if isa == 'thumb':
        b = at(ret - 4, 4)
        h1, h2 = struct.unpack('<HH', b) if b else (0, 0)
        ok = (h1 & 0xf800) == 0xf000 and (h2 & 0xc000) == 0xc000 # BL, BLX
    elif isa == 'arm':
        b = at(ret - 4, 4)
        i = struct.unpack('<I', b)[0] if b else 0
        ok = (i & 0x0f000000) == 0x0b000000 and i >> 28 != 0xf or i >> 25 == 0x7d # BL, BLX
    elif isa == 'a64':
        b = at(ret - 4, 4)
        i = struct.unpack('<I', b)[0] if b else 0
        ok = (i & 0xfc000000) == 0x94000000 # BL
    else:
        b = at(ret - 5, 1)
        ok = b == b'\xe8' # CALL rel32
    if not ok:
        print('error %s calls %s at 0x%x: no %s call instruction ends there' % (caller, callee, ret, isa))
    if arm and state(ret - 2) != isa[0]:
        print('error %s calls %s at 0x%x: mapping symbol $%s' % (caller, callee, ret, state(ret - 2)))
    print('call %s %s 0x%x 0x%x %s' % (caller, callee, ret, ret | 1 if isa == 'thumb' else ret, isa))
EOF

# sweep LEAKSNAP FILE DWARF SRC SCALE-LINE CALL-LINE: every byte of .text
# (and 4 either side) through `leaksnap addr2line --json` and
# llvm-symbolizer: every field agrees but StartFileName (llvm-symbolizer 14
# leaves it empty for DWARF 5; ours must be the file then), no mapping
# symbol names code, and every inlined frame is scale inlined into
# cross_entry at the marked lines.  Through plain `-a -f -i` (GNU's rules:
# DWARF names functions; JSON names the outermost frame by the symbol table
# as llvm-symbolizer does, which on x86 can be a jump table's .L label),
# each of the four functions names (outermost frame) every byte of its
# symbol.  Prints the first address of the inline chain ("inline 0x...").
cat >sweep.py <<'EOF'
import json, subprocess, sys

leaksnap, path, dwarf, src, l_scale, l_call = sys.argv[1:7]
facts = subprocess.run(['python3', 'facts.py', path], capture_output=True, text=True,
                       check=True).stdout.split('\n')
funcs, lo, hi = [], 0, 0
for f in (l.split() for l in facts):
    if f and f[0] == 'func':
        funcs.append((f[1], int(f[2], 16), int(f[3])))
    if f and f[0] == 'text':
        lo, hi = int(f[1], 16) - 4, int(f[2], 16) + 4
addrs = ['0x%x' % a for a in range(lo, hi)]
inp = ''.join(a + '\n' for a in addrs)
ref = subprocess.run(['llvm-symbolizer', '--output-style=JSON', '-e', path], input=inp,
                     capture_output=True, text=True, check=True).stdout.splitlines()
got = subprocess.run([leaksnap, 'addr2line', '--json', '-e', path], input=inp,
                     capture_output=True, text=True)
plain = subprocess.run([leaksnap, 'addr2line', '-a', '-f', '-i', '-e', path], input=inp,
                       capture_output=True, text=True)
if (got.returncode != 0 or plain.returncode != 0 or len(got.stdout.splitlines()) != len(addrs)
        or len(ref) != len(addrs)):
    sys.exit('sweep: %s: leaksnap status %d/%d, %d answers from it and %d from llvm-symbolizer '
             'for %d addresses: %s' % (path, got.returncode, plain.returncode,
                                       len(got.stdout.splitlines()), len(ref), len(addrs),
                                       got.stderr + plain.stderr))
outer, a, k = {}, None, 0 # address -> the outermost function of the plain answer
for l in plain.stdout.splitlines():
    if l.startswith('0x'):
        a, k = int(l, 16), 0
        continue
    if k % 2 == 0:
        outer[a] = l # function, then FILE:LINE, per frame
    k += 1
bad, inline = [], None
for a, r, g in zip(addrs, ref, got.stdout.splitlines()):
    r, g = json.loads(r), json.loads(g)
    rs, gs = r['Symbol'], g['Symbol']
    for fr, fg in zip(rs, gs):
        if fr['StartFileName'] == '' and fg['StartFileName'] in ('', fg['FileName']):
            fr['StartFileName'] = fg['StartFileName']
    if r != g:
        bad.append('%s: llvm-symbolizer %s\n    leaksnap        %s' % (a, json.dumps(rs), json.dumps(gs)))
        continue
    for fg in gs:
        if fg['FunctionName'].startswith('$'):
            bad.append('%s: named by the mapping symbol %s' % (a, fg['FunctionName']))
    v = int(a, 16)
    for name, start, size in funcs:
        if start <= v < start + size and outer.get(v) != name:
            bad.append('%s: in %s, named %r' % (a, name, outer.get(v)))
    if len(gs) > 1:
        chain = [(f['FunctionName'], f['FileName'], f['Line']) for f in gs]
        want = [('scale', src, int(l_scale)), ('cross_entry', src, int(l_call))]
        if chain != want:
            bad.append('%s: inline chain %s, expected %s' % (a, chain, want))
        elif inline is None:
            inline = a
if dwarf == 'dwarf' and inline is None:
    bad.append('no address has scale inlined into cross_entry')
for b in bad[:10]:
    print('sweep: %s: %s' % (path, b))
if bad:
    sys.exit('sweep: %s: %d of %d addresses wrong' % (path, len(bad), len(addrs)))
if inline:
    print('inline', inline)
EOF

hex() { printf '0x%x' "$1"; }

while IFS=: read -r f class machine dwarf <&3; do
	F=$X/$f
	[ -f "$F" ] || { fail "$f: missing"; continue; }
	# the fixture is what it says it is
	readelf -hW "$F" >hdr.txt || { fail "$f: readelf cannot read it"; continue; }
	grep -q "Class: *ELF$class\$" hdr.txt || fail "$f: not ELFCLASS$class"
	grep -q "Machine: *$machine\$" hdr.txt || fail "$f: not $machine"
	case $f in
	*.so) grep -q 'Type: *DYN ' hdr.txt || fail "$f: not ET_DYN" ;;
	*) grep -q 'Type: *EXEC ' hdr.txt || fail "$f: not ET_EXEC" ;;
	esac
	if [ $dwarf = dwarf ]; then
		readelf -SW "$F" | grep -q ' \.debug_info ' || fail "$f: no .debug_info"
	else
		readelf -SW "$F" | grep -q ' \.debug_' && fail "$f: has DWARF"
	fi
	python3 facts.py "$F" >facts.$f || { fail "$f: facts.py failed"; continue; }
	grep '^error ' facts.$f | while read -r _ e; do echo "FAIL: $f: $e"; done
	grep -q '^error ' facts.$f && fails=$((fails + 1))
	width=$((class / 4))

	# mapping symbols: $t, $a and $d in the 32-bit ARM files, $x in arm64;
	# each ARM file has code in both states
	case $machine in
	ARM)
		for m in a t d; do
			grep -q "^map \\\$$m [1-9]" facts.$f || fail "$f: no \$$m mapping symbol in .text"
		done
		grep -q '^func .* thumb$' facts.$f || fail "$f: no Thumb function"
		grep -q '^func .* arm$' facts.$f || fail "$f: no ARM function"
		;;
	AArch64) grep -q '^map \$x [1-9]' facts.$f || fail "$f: no \$x mapping symbol" ;;
	esac
	[ "$(grep -c '^func ' facts.$f)" = 4 ] || fail "$f: not four functions"

	# each function from its symbol: the name, -a as wide as the class, and
	# (with DWARF) its declaration line and start exactly, as JSON has them
	grep '^func ' facts.$f | while read -r _ name start _ isa; do
		got=$("$L" addr2line -a -f -e "$F" "$start")
		a=$(printf '0x%0*x' $width $((start)))
		if [ $dwarf = dwarf ]; then
			case $(echo "$got" | sed -n 3p) in
			"$SRC:"[0-9]*) loc_ok=1 ;;
			*) loc_ok=0 ;;
			esac
		else
			[ "$(echo "$got" | sed -n 3p)" = "??:?" ] && loc_ok=1 || loc_ok=0
		fi
		[ "$(echo "$got" | sed -n 1p)" = "$a" ] && [ "$(echo "$got" | sed -n 2p)" = "$name" ] &&
			[ "$(echo "$got" | wc -l)" = 3 ] && [ $loc_ok = 1 ] ||
			echo "FAIL: $f: $name at $start: got '$got', expected '$a', '$name', and ${SRC}:LINE or ??:?"
		# the symbol's own value (Thumb bit set) is the same function
		if [ $isa = thumb ]; then
			got1=$("$L" addr2line -f -e "$F" "$(hex $((start | 1)))" | head -1)
			[ "$got1" = "$name" ] || echo "FAIL: $f: $name at its symbol value $(hex $((start | 1))): '$got1'"
		fi
		j=$("$L" addr2line --json -e "$F" "$start")
		if [ $dwarf = dwarf ]; then
			want="\"FileName\":\"$SRC\",\"FunctionName\":\"$name\",.*\"StartAddress\":\"$(hex $start)\",\"StartFileName\":\"$SRC\",\"StartLine\":$(line_of $name)}]}]"
		else
			want="\"FileName\":\"\",\"FunctionName\":\"$name\",\"Line\":0,\"StartAddress\":\"$(hex $start)\","
		fi
		echo "$j" | grep -q "$want" || echo "FAIL: $f: $name: JSON $j"
	done >func.$f
	[ -s func.$f ] && { cat func.$f; fail "$f: function starts"; }

	# every byte of .text agrees with llvm-symbolizer; inline chains
	python3 sweep.py "$L" "$F" $dwarf "$SRC" "$(line_of scale)" "$(line_of scale_call)" >sweep.$f 2>&1 ||
		{ cat sweep.$f; fail "$f: differs from llvm-symbolizer"; }
	python3 "$top/tests/tools/symcmp.py" "$L" "$F" 1000 7 >cmp.$f 2>&1 ||
		{ cat cmp.$f; fail "$f: symcmp: differs from llvm-symbolizer"; }
	if [ $dwarf = dwarf ]; then
		# the inline chain in GNU's plain form: the inlined function, then
		# its caller at the call's line (the loop's code has discriminators)
		a=$(sed -n 's/^inline //p' sweep.$f)
		if [ -n "$a" ]; then
			got=$("$L" addr2line -f -i -e "$F" "$a" | sed 's/ (discriminator [0-9]*)$//')
			want="scale
$SRC:$(line_of scale)
cross_entry
$SRC:$(line_of scale_call)"
			[ "$got" = "$want" ] || fail "$f: inline chain at $a: got '$got', expected '$want'"
		fi
	fi

	# call sites: each captured return address (Thumb bit set where the
	# caller is Thumb code) answers with itself and its caller; the byte
	# before it (Thumb bit cleared first, as leaksnap_sym_file_call_site does) is
	# the call, on the marked line
	[ "$(grep -c '^call ' facts.$f)" = $([ $dwarf = dwarf ] && echo 4 || echo 0) ] ||
		fail "$f: $(grep -c '^call ' facts.$f) DWARF call sites, expected 4"
	grep '^call ' facts.$f | while read -r _ caller callee _ captured isa; do
		case $caller/$callee in
		cross_entry/cross_helper) m=helper_call ;;
		cross_entry/cross_table) m=table_call ;;
		cross_entry/cross_other) m=other_from_entry ;;
		cross_other/cross_helper) m=other_call ;;
		*) echo "FAIL: $f: unexpected call from $caller to $callee"; continue ;;
		esac
		site=$(hex $(((captured & ~1) - 1)))
		[ $isa = thumb ] && [ $((captured & 1)) != 1 ] && echo "FAIL: $f: Thumb return address $captured is even"
		got=$("$L" addr2line -a -f -e "$F" "$captured" | head -2)
		want="$(printf '0x%0*x' $width $((captured)))
$caller"
		[ "$got" = "$want" ] || echo "FAIL: $f: return address $captured ($isa): got '$got', expected '$want'"
		got=$("$L" addr2line -f -i -e "$F" "$site" | tail -2)
		want="$caller
$SRC:$(line_of $m)"
		[ "$got" = "$want" ] || echo "FAIL: $f: call site $site of $caller -> $callee ($isa): got '$got', expected '$want'"
		echo "$captured $caller $(line_of $m) $isa" >>calls.$f
	done >calls-fail.$f
	[ -s calls-fail.$f ] && { cat calls-fail.$f; fail "$f: call sites"; }

	# GNU addr2line's plain output, byte for byte, on every byte of .text,
	# where this host's addr2line (or the target's) reads the file.  Not
	# without DWARF: binutils 2.40 then names ARM code by its mapping
	# symbols ($t, $d) and the symbol before a Thumb function's first byte
	# (it keeps the Thumb bit), where we follow llvm-symbolizer.
	gnu=
	[ $dwarf = dwarf ] || continue
	for g in addr2line aarch64-linux-gnu-addr2line arm-linux-gnueabihf-addr2line; do
		command -v $g >/dev/null 2>&1 || continue
		$g -e "$F" 0x0 >/dev/null 2>&1 && { gnu=$g; break; }
	done
	if [ -n "$gnu" ]; then
		set -- $(sed -n 's/^text //p' facts.$f)
		python3 -c "import sys; print(''.join('0x%x\n' % a for a in range(int(sys.argv[1], 16), int(sys.argv[2], 16))), end='')" "$1" "$2" >addrs.$f
		$gnu -a -f -i -e "$F" <addrs.$f >gnu.$f
		"$L" addr2line -a -f -i -e "$F" <addrs.$f >ours.$f
		cmp -s gnu.$f ours.$f || { fail "$f: plain output differs from $gnu"; diff gnu.$f ours.$f | head; }
	else
		echo "note: $f: no addr2line here reads it; GNU's plain output not compared"
	fi
done 3<fixtures.txt

# symbolize: a dump (Android text) whose one record holds the captured return
# addresses of a fixture's call sites, the file mapped as Android maps a
# library (at a high base) or an executable (at its own address).  Each
# frame is its call site, looked up at pc - 1 with the Thumb bit cleared
# first: the caller on the marked line, as llvm-symbolizer answers for that
# address; without DWARF, caller+OFFSET from the symbol's start with the
# Thumb bit cleared.  With --no-adjust, the captured address as it is.
while IFS=: read -r f class machine dwarf <&3; do
	case $f in # without DWARF: the call sites of the same code with DWARF
	*-nodebug*) calls=calls.${f%%-nodebug*}${f#*-nodebug} ;;
	*) calls=calls.$f ;;
	esac
	[ -s "$calls" ] || { fail "$f: no call sites to symbolize"; continue; }
	width=$((class / 4))
	load=$(sed -n 's/^load //p' facts.$f)
	case $f in
	*.so) [ $class = 32 ] && base=0xe0000000 mod=/system/lib/libcross.so ||
		base=0x7012340000 mod=/system/lib64/libcross.so ;;
	*) base=$load mod=/system/bin/cross ;;
	esac
	mkdir -p "syms.$f${mod%/*}" && cp "$X/$f" "syms.$f$mod"
	{
		printf 'Android Native Heap Dump v1.2\n\nTotal memory: 48\nAllocation records: 1\n'
		printf 'Backtrace size: %d\n\nz 0  sz       48  num    1  bt' "$(wc -l <"$calls")"
		while read -r captured _; do
			printf ' %0*x' $width $((base + captured - load))
		done <"$calls"
		printf '\nMAPS\n%0*x-%0*x r-xp 00000000 fd:00 1234 %s\nEND\n' \
			$width $((base)) $width $((base + 0x1000)) $mod
	} >dump.$f
	for adjust in yes no; do
		opt=
		[ $adjust = no ] && opt=--no-adjust
		: >want.$f
		while read -r captured caller line isa; do
			a=$captured
			[ $adjust = yes ] && a=$(hex $(((captured & ~1) - 1)))
			if [ $dwarf = dwarf ]; then
				llvm-symbolizer -e "$X/$f" "$a" </dev/null | head -2 | tr '\n' ' ' | sed 's/ $//' >>want.$f
				echo >>want.$f
				# the call site is the marked line
				[ $adjust = yes ] && ! tail -1 want.$f | grep -q "^$caller $SRC:$line:" &&
					fail "$f: llvm-symbolizer puts the call at $a elsewhere: $(tail -1 want.$f)"
			else
				start=$(sed -n "s/^func $caller \([^ ]*\) .*/\1/p" facts.$f)
				echo "$caller+$(hex $((a - start)))" >>want.$f
			fi
		done <"$calls"
		"$L" symbolize $opt --symbols syms.$f dump.$f >sym.$f 2>&1 || { fail "$f: symbolize $opt failed"; cat sym.$f; }
		awk '$1 ~ /^#[0-9][0-9]$/ { print $4 ($5 == "" ? "" : " " $5) }' sym.$f >got.$f
		cmp -s want.$f got.$f || {
			fail "$f: symbolize $opt frames"
			diff want.$f got.$f
		}
	done
done 3<fixtures.txt

# A library of the other ELF class under the module's name: Android text
# dumps carry no build ID, and a 64-bit process's /system/lib64/libcross.so
# must not be symbolized with the 32-bit system/lib/libcross.so that the
# search by name meets first; the 64-bit vendor/lib64 copy is used.  With
# only the other class there, every frame is (build-id mismatch), never a
# name; the same for a 32-bit process (a LEAKSNAP dump, which says its
# pointer size) and a 64-bit file.  A text dump whose addresses all fit 32
# bits does not say it, so there any class is used.
frames() { awk '$1 ~ /^#[0-9][0-9]$/ { $1 = $2 = $3 = ""; sub(/^ +/, ""); print }' "$1"; }
mkdir -p mixed/system/lib mixed/vendor/lib64 only32/system/lib only64/system/lib64
cp "$X/thumb.so" mixed/system/lib/libcross.so
cp "$X/arm64.so" mixed/vendor/lib64/libcross.so
cp "$X/thumb.so" only32/system/lib/libcross.so
cp "$X/arm64.so" only64/system/lib64/libcross.so
"$L" symbolize --symbols syms.arm64.so dump.arm64.so >class.want 2>&1 || fail "class: reference run"
"$L" symbolize -v --symbols mixed dump.arm64.so >class.got 2>&1 || fail "class: mixed tree"
frames class.want >class.want.f
frames class.got >class.got.f
[ -s class.want.f ] && cmp -s class.want.f class.got.f ||
	{ fail "class: the mixed tree's frames are not the 64-bit file's"; diff class.want.f class.got.f; }
grep -q "^  /system/lib64/libcross.so  mixed/vendor/lib64/libcross.so  (build-id unverified)$" class.got ||
	{ fail "class: symbol file of the mixed tree"; grep -A2 '^symbol files' class.got; }
"$L" convert dump.thumb.so dump.thumb.dump || fail "class: convert"
for pair in only32:dump.arm64.so:32:64 only64:dump.thumb.dump:64:32; do
	IFS=: read -r dir dump has want <<EOF
$pair
EOF
	"$L" symbolize -v --symbols $dir $dump >class.$dir 2>&1 || fail "class: $dir"
	frames class.$dir | sort -u >class.$dir.f
	[ "$(cat class.$dir.f)" = "(ELF class mismatch: only $has-bit files, for a $want-bit process)" ] ||
		{ fail "class: $dir: not every frame a class mismatch"; cat class.$dir; }
	grep -q "^  /system/lib[64]*/libcross.so  $dir/[^ ]*libcross.so  (ELF class mismatch: only $has-bit files, for a $want-bit process)$" class.$dir ||
		{ fail "class: $dir: symbol files"; grep -A2 '^symbol files' class.$dir; }
done
"$L" symbolize --symbols only64 dump.thumb.so >class.open 2>&1 || fail "class: text, 32 bits"
grep -q "(build-id mismatch)" class.open && { fail "class: a text dump's guessed size was enforced"; cat class.open; }

[ $fails = 0 ] || { echo "$fails failure(s)"; exit 1; }
exit 0
