#!/bin/sh
# Real programs run unchanged under the hook (same output, same exit
# status) and every dump they leave is readable: python3, perl, gcc
# compiling a file, git in a temporary repository, a shell pipeline.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"

# run NAME CMD...: compare the bare run with the hooked one.
run() {
	name=$1
	shift
	(cd "$w/bare" && "$@") >"$w/$name.bare" 2>&1
	sb=$?
	(cd "$w/hook" && LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/dumps/$name" "$@") >"$w/$name.hook" 2>&1
	sh_=$?
	[ "$sb" = "$sh_" ] || fail "$name: exit status $sh_ under the hook, $sb without"
	cmp -s "$w/$name.bare" "$w/$name.hook" || { fail "$name: output differs"; diff "$w/$name.bare" "$w/$name.hook" | head -5; }
	set -- "$w/dumps/$name".*.dump
	[ -f "$1" ] || { fail "$name: no dump written"; return; }
	for d in "$@"; do
		"$L" show "$d" >/dev/null 2>"$d.err" || { fail "$d: not readable"; cat "$d.err"; }
	done
}

mkdir -p "$w/bare" "$w/hook" "$w/dumps"
for dir in bare hook; do
	cat >"$w/$dir/prog.c" <<'X'
#include <stdio.h>
int main(void) { puts("compiled"); return 0; }
X
done

if command -v python3 >/dev/null; then
	run python3 python3 -c 'import json, hashlib, re
d = {str(i): [i] * 50 for i in range(20000)}
s = json.dumps(d)
print(len(s), hashlib.sha256(s.encode()).hexdigest()[:16], len(re.findall(r"\d+", s)))
raise SystemExit(3)'
else
	fail "python3 not installed"
fi
for mode in fp dwarf; do
	LEAKSNAP_UNWIND=$mode
	export LEAKSNAP_UNWIND
	run "perl-$mode" perl -e 'my @a = map { { n => $_, s => "x" x ($_ % 50) } } 1..50000; print scalar(@a), "\n"'
	unset LEAKSNAP_UNWIND
done
run perl perl -e 'my %h; $h{$_} = "x" x ($_ % 100) for 1..100000; my $t = 0; $t += length($h{$_}) for keys %h; print "$t\n"; exit 4'
run gcc sh -c 'gcc -O2 -c prog.c -o prog.o && gcc prog.o -o prog && ./prog && cmp prog.o prog.o && echo ok'
cmp -s "$w/bare/prog.o" "$w/hook/prog.o" || fail "gcc: object files differ"
if command -v git >/dev/null; then
	run git sh -c 'export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z" HOME=$PWD
rm -rf repo && git init -q repo && cd repo && for i in 1 2 3 4 5; do seq $i 1000 >f$i; done &&
git add . && git commit -q -m first && git log --format=%H && git gc -q && git fsck 2>&1 | wc -l'
else
	fail "git not installed"
fi
run pipeline sh -c 'seq 1 20000 | sort -r | uniq | awk "{s+=\$1} END {print s}"'
finish
