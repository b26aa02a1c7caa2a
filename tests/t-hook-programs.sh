#!/bin/sh
# Real programs run unchanged under the hook (same output, same exit
# status) and every dump they leave is readable: python3, perl, gcc
# compiling a file, git in a temporary repository, a shell pipeline, a
# program asking glibc for its threads' stacks first thing (and a Rust one
# when rustc is installed).
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
# A thread whose first allocation happens inside pthread_getattr_np() on
# itself (glibc allocates there with the thread's lock held): as Rust's
# runtime does on every thread it starts, and C code sizing its stack.
# Under a time limit: the hook once waited on that lock for ever.
cat >"$w/getattr.c" <<'X'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static void *run(void *arg)
{
	pthread_attr_t a;
	size_t size;
	void *lo;
	(void)arg;
	if (pthread_getattr_np(pthread_self(), &a) || pthread_attr_getstack(&a, &lo, &size))
		return NULL;
	pthread_attr_destroy(&a);
	return malloc(size > 4096 ? 100 : 1);
}
int main(void)
{
	pthread_attr_t a;
	if (pthread_getattr_np(pthread_self(), &a))
		return 1;
	pthread_attr_destroy(&a);
	void *r = NULL;
	for (int i = 0; i < 8; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, run, NULL) || pthread_join(t, &r) || !r)
			return 2;
	}
	puts("stack sizes known");
	return 0;
}
X
gcc -O2 -pthread -o "$w/getattr" "$w/getattr.c" || fail "cannot build getattr.c"
run getattr timeout 20 "$w/getattr"
if command -v rustc >/dev/null 2>&1; then
	printf 'fn main() { let t = std::thread::spawn(|| vec![1u8; 100].len()); println!("{}", t.join().unwrap()); }\n' \
		>"$w/thr.rs"
	if rustc -O -o "$w/thr" "$w/thr.rs" 2>/dev/null; then
		run rust timeout 20 "$w/thr"
	else
		echo "rustc cannot build a program here: the Rust run is skipped"
	fi
fi
finish
