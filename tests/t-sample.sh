#!/bin/sh
# Sampled collection in the hook (LEAKSNAP_SAMPLE, record --sample): blocks
# of the interval or more are always recorded, exactly; smaller ones at the
# rate sampling theory gives; freed unsampled blocks leave nothing; the dump
# says sample_interval=; a seed makes runs repeatable; bad settings warn
# and fall back to full tracking; record --sample reaches the hook and
# refuses what the hook would not take; no reachability with sampling; an
# in-app restart and a fork's child sample afresh (a restart clears the
# filter by giving its pages back); eight threads through
# every allocation function leave exact records, and the filter of sampled
# blocks grows; sampled dumps have no invalid_frees.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"

# run NAME ENV...: tests/hook/sampleleak big under the hook, its exit dump
# read by stackcheck into $w/NAME.txt.
run() {
	_n=$1
	shift
	env "$@" LEAKSNAP_OUT="$w/$_n" LD_PRELOAD="$HOOK" "$T/sampleleak" big 2>"$w/$_n.err" ||
		fail "$_n: status $?"
	_d=$(ls "$w/$_n".*.exit.dump)
	"$SC" "$_d" >"$w/$_n.txt" || fail "$_n: stackcheck"
}

# 64 KiB: the three blocks of 64 KiB and more are there, once each; of the
# 1000 blocks of 64 bytes about one is; the 10000 freed blocks none.
run s1 LEAKSNAP_SAMPLE=65536 LEAKSNAP_SAMPLE_SEED=7
expect_record "$w/s1.txt" "65536 1 app big_site main"
expect_record "$w/s1.txt" "100000 1 app big_site main"
expect_record "$w/s1.txt" "1000000 1 app big_site main"
no_record "$w/s1.txt" '^100 '
small=$(awk '$1 == 64 && $4 == "small_site" { print $2 }' "$w/s1.txt")
[ "${small:-0}" -le 8 ] || fail "64 KiB sampling: ${small} of 1000 blocks of 64 bytes sampled"
expect_meta "$(ls "$w"/s1.*.exit.dump)" "sample_interval=65536"
[ -s "$w/s1.err" ] && { fail "s1: the hook said something"; cat "$w/s1.err"; }

# The same seed, the same draws.
run s2 LEAKSNAP_SAMPLE=65536 LEAKSNAP_SAMPLE_SEED=7
cmp -s "$w/s1.txt" "$w/s2.txt" || fail "one seed, two different dumps"

# 640 bytes: a block of 64 bytes is sampled with probability 1 - e^-0.1
# (0.0952): 95 of 1000 expected, standard deviation 9.3; 5 of them allowed.
for seed in 1 2 3; do
	run r$seed LEAKSNAP_SAMPLE=640 LEAKSNAP_SAMPLE_SEED=$seed
	k=$(awk '$1 == 64 && $4 == "small_site" { print $2 }' "$w/r$seed.txt")
	[ "${k:-0}" -ge 49 ] && [ "${k:-0}" -le 141 ] ||
		fail "640-byte sampling, seed $seed: ${k:-0} of 1000 blocks of 64 bytes (expected 95 +- 46)"
	# every block of 640 bytes or more stands for itself
	expect_record "$w/r$seed.txt" "65536 1 app big_site main"
	no_record "$w/r$seed.txt" '^100 '
done
cmp -s "$w/r1.txt" "$w/r2.txt" && fail "seeds 1 and 2 drew the same samples"

# Without sampling every block is there, and no sample_interval line; the
# double frees counted (invalid_frees=), which a sampled dump leaves out (a
# free learns only whether its block was sampled: none are looked for).
run full
expect_record "$w/full.txt" "64 1000 app small_site main"
d=$(ls "$w"/full.*.exit.dump)
"$L" show "$d" | grep -q 'sample_interval' && fail "full tracking: sample_interval in the metadata"
"$L" show "$d" | grep -q 'sample_filter' && fail "full tracking: sample_filter in the metadata"
expect_meta "$d" "invalid_frees=0"
"$L" show "$(ls "$w"/s1.*.exit.dump)" | grep -q 'invalid_frees' &&
	fail "sampled dump: invalid_frees in the metadata"
# the filter of sampled blocks: its counters, the frees that took the
# table lock (the three big blocks are not freed, 10000 of 100 bytes are)
"$L" show "$(ls "$w"/s1.*.exit.dump)" | grep -q -x '  sample_filter=1024 [0-9]* [0-9]*' ||
	fail "sampled dump: no sample_filter=1024 N M (the filter as it starts)"

# Eight threads at once through every allocation function
# (tests/hook/samplethreads.c): after everything is freed no record of
# theirs; blocks of the interval or more there exactly, once each per
# thread, a block realloc moved or shrank and grew again once, at its last
# size; then none again.  At 256 bytes most blocks are sampled and the
# filter of sampled blocks grows under the threads (from 65,536 counters).
for I in 256 65536 full; do
	mkdir "$w/st$I"
	if [ $I = full ]; then
		set -- LEAKSNAP_SAMPLE=0
		I=65536 dir=$w/stfull
	else
		set -- LEAKSNAP_SAMPLE=$I
		dir=$w/st$I
	fi
	env "$@" LEAKSNAP_DUMP_ON_EXIT=0 LD_PRELOAD="$HOOK" "$T/samplethreads" "$dir" $I \
		>"$dir/out" 2>"$dir/err" || { fail "samplethreads $*: status $?"; cat "$dir/err"; continue; }
	grep -q -x 'moved [1-8]' "$dir/out" || fail "samplethreads $*: no realloc moved a block"
	[ -s "$dir/err" ] && { fail "samplethreads $*: the hook said something"; cat "$dir/err"; }
	for d in empty kept end; do
		"$SC" "$dir/$d.dump" | grep ' st_' | awk '{ print $1, $2, $3, $4 }' | sort -n \
			>"$dir/$d.txt" || fail "samplethreads $*: stackcheck $d"
	done
	[ -s "$dir/empty.txt" ] && { fail "samplethreads $*: records after every block was freed"; cat "$dir/empty.txt"; }
	[ -s "$dir/end.txt" ] && { fail "samplethreads $*: records at the end"; cat "$dir/end.txt"; }
	for k in 0 64 128 192 256; do
		echo "$((I + k)) 8 app st_keep"
	done >"$dir/want"
	{ echo "$((2 * I + 512)) 8 app st_keep"; echo "$((3 * I + 576)) 8 app st_keep";
	  echo "$((4 * I + 384)) 8 app st_keep"; } >>"$dir/want"
	sort -n "$dir/want" | cmp -s - "$dir/kept.txt" ||
		{ fail "samplethreads $*: the kept blocks"; diff "$dir/want" "$dir/kept.txt"; }
done
c=$("$L" show "$w/st256/empty.dump" | sed -n 's/^  sample_filter=\([0-9]*\) .*/\1/p')
[ "${c:-0}" -ge 262144 ] || fail "samplethreads 256: the filter did not grow (${c:-none} counters)"
"$L" show "$w/stfull/kept.dump" | grep -q -x '  invalid_frees=0' || fail "samplethreads full: invalid_frees"

# A bad setting: one warning, full tracking.
run bad LEAKSNAP_SAMPLE=64k
grep -q -x 'leaksnap: LEAKSNAP_SAMPLE=64k: not a number from 0 to 1073741824; using 0' "$w/bad.err" ||
	{ fail "LEAKSNAP_SAMPLE=64k: warning"; cat "$w/bad.err"; }
expect_record "$w/bad.txt" "64 1000 app small_site main"
run bad2 LEAKSNAP_SAMPLE=1073741825
grep -q 'LEAKSNAP_SAMPLE=1073741825: not a number' "$w/bad2.err" || fail "LEAKSNAP_SAMPLE too large: no warning"
run bad3 LEAKSNAP_SAMPLE=65536 LEAKSNAP_SAMPLE_SEED=-1
grep -q -x 'leaksnap: LEAKSNAP_SAMPLE_SEED=-1: not a number from 0 to [0-9]*; using 0' "$w/bad3.err" ||
	{ fail "LEAKSNAP_SAMPLE_SEED=-1: warning"; cat "$w/bad3.err"; }

# record --sample sets LEAKSNAP_SAMPLE.
"$L" record --out "$w/rec" --sample 65536 -- "$T/sampleleak" big 2>"$w/rec.err" ||
	fail "record --sample: status $?"
expect_meta "$(ls "$w"/rec.*.exit.dump)" "sample_interval=65536"
for bad in 0 1073741825 64k -1; do
	"$L" record --sample "$bad" -- true 2>"$w/rb.err"
	st=$?
	[ $st = 2 ] || fail "record --sample $bad: status $st"
	grep -q -x "leaksnap: record: --sample must be a number of bytes from 1 to 1073741824 (see 'leaksnap record --help')" "$w/rb.err" ||
		{ fail "record --sample $bad: message"; cat "$w/rb.err"; }
done

# Reachability with sampling: refused (a sampled block held only through
# unsampled blocks would be counted unreachable): one warning, no
# reachability section, the metadata says why; record refuses the pair.
run reach LEAKSNAP_SAMPLE=65536 LEAKSNAP_SAMPLE_SEED=7 LEAKSNAP_REACHABILITY=1
printf '%s\n' 'leaksnap: reachability is off with LEAKSNAP_SAMPLE: a sampled block held only through unsampled blocks would be counted unreachable' |
	cmp -s - "$w/reach.err" || { fail "sampled reachability: warning"; cat "$w/reach.err"; }
d=$(ls "$w"/reach.*.exit.dump)
expect_meta "$d" "reachability=off: sampled collection (LEAKSNAP_SAMPLE)"
"$L" show "$d" 2>/dev/null | grep -q 'unreachable' && fail "sampled dump: a reachability section"
expect_record "$w/reach.txt" "65536 1 app big_site main"
"$L" record --out "$w/rr" --sample 4096 --reachability -- true 2>"$w/rr.err"
st=$?
[ $st = 2 ] || fail "record --sample --reachability: status $st"
printf '%s\n' "leaksnap: record: --sample and --reachability do not go together: a sample cannot tell which blocks are unreachable (see 'leaksnap record --help')" |
	cmp -s - "$w/rr.err" || { fail "record --sample --reachability: message"; cat "$w/rr.err"; }
ls "$w"/rr.*.dump >/dev/null 2>&1 && fail "record --sample --reachability: ran"
"$L" attach --sample 4096 --reachability 1 2>"$w/ar.err"
st=$?
[ $st = 2 ] || fail "attach --sample --reachability: status $st"
printf '%s\n' "leaksnap: attach: --sample and --reachability do not go together: a sample cannot tell which blocks are unreachable (see 'leaksnap attach --help')" |
	cmp -s - "$w/ar.err" || { fail "attach --sample --reachability: message"; cat "$w/ar.err"; }

# The in-app build: leaksnap_start()'s sample option (one over the limit
# refused with EINVAL).
INAPP=$(cd "$B/lib" && pwd)/libleakhook-inapp.so
"$T/inapp_api" sample "$INAPP" "$w/ia" >"$w/ia.out" 2>&1 || fail "inapp_api sample: status $?"
printf '%s\n' 'global lookup: none' 'start sample=1073741825: -1 EINVAL' 'start sample=65536: 0 ' \
	'stop: 0 ' | cmp -s - "$w/ia.out" || { fail "inapp_api sample: output"; cat "$w/ia.out"; }
"$SC" "$w/ia.sample.dump" >"$w/ia.txt" || fail "inapp sample: stackcheck"
expect_record "$w/ia.txt" "70000 1 app main"
k=$(awk '$1 == 64 && $4 == "sample_small" { print $2 }' "$w/ia.txt")
[ "${k:-0}" -le 8 ] || fail "in-app 64 KiB sampling: $k of 1000 blocks of 64 bytes"
expect_meta "$w/ia.sample.dump" "sample_interval=65536"

# An in-app stop then start: the new session's sampling (4096 bytes, then
# none) starts afresh on every thread, not from the distance the session
# before drew (up to 1 GiB): every block of 100000 bytes is recorded.
"$T/inapp_api" restart "$INAPP" "$w/rs" >"$w/rs.out" 2>&1 || fail "inapp_api restart: status $?"
printf '%s\n' 'global lookup: none' 'start sample=1073741824: 0 ' 'stop: 0 ' 'start sample=4096: 0 ' \
	'stop: 0 ' 'start sample=1073741824: 0 ' 'stop: 0 ' 'start sample=0: 0 ' 'stop: 0 ' |
	cmp -s - "$w/rs.out" || { fail "inapp_api restart: output"; cat "$w/rs.out"; }
"$SC" "$w/rs.restart1.dump" >"$w/rs1.txt" || fail "restart1: stackcheck"
expect_record "$w/rs1.txt" "100000 20 app restart_big main"
expect_meta "$w/rs.restart1.dump" "sample_interval=4096"
"$SC" "$w/rs.restart2.dump" >"$w/rs2.txt" || fail "restart2: stackcheck"
expect_record "$w/rs2.txt" "100001 20 app restart_big main"
"$L" show "$w/rs.restart2.dump" | grep -q 'sample_interval' && fail "restart2: sample_interval in the metadata"

# A restart after the filter of sampled blocks grew to 16 MiB: the next
# session's filter is that one cleared by giving its pages back (not by
# writing 16 MiB of zeros), and it works: the new session's blocks recorded,
# the freed ones found.
"$T/inapp_api" filterclear "$INAPP" "$w/fc" >"$w/fc.out" 2>&1 || fail "inapp_api filterclear: status $?"
printf '%s\n' 'global lookup: none' 'start sample=1: 0 ' 'stop: 0 ' 'start sample=4096: 0 ' \
	'filter pages given back: yes' 'stop: 0 ' |
	cmp -s - "$w/fc.out" || { fail "inapp_api filterclear: output"; cat "$w/fc.out"; }
"$SC" "$w/fc.filterclear.dump" >"$w/fc.txt" || fail "filterclear: stackcheck"
expect_record "$w/fc.txt" "100000 5 app clear_after main"
[ "$(grep -c . "$w/fc.txt")" = 1 ] || { fail "filterclear: records"; cat "$w/fc.txt"; }
expect_meta "$w/fc.filterclear.dump" "sample_filter=4194304 5 0"

# A fork's child draws samples of its own: the same allocations after the
# fork, sampled with the parent's generator, gave the very same records
# (seed 3: the parent samples 202 of its 2000, the child 177).
mkdir "$w/fk"
LEAKSNAP_DUMP_ON_EXIT=0 LEAKSNAP_SAMPLE=640 LEAKSNAP_SAMPLE_SEED=3 LEAKSNAP_OUT="$w/fk/x" \
	LD_PRELOAD="$HOOK" "$T/sampleleak" fork "$w/fk" 2>"$w/fk.err" || fail "sampleleak fork: status $?"
"$SC" "$w/fk/parent.dump" >"$w/fk.parent" || fail "fork: stackcheck parent"
"$SC" "$w/fk/child.dump" | sed 's/ zygote / app /' >"$w/fk.child" || fail "fork: stackcheck child"
[ "$(grep -c small_site "$w/fk.parent")" = 2 ] || { fail "fork: parent's records"; cat "$w/fk.parent"; }
cmp -s "$w/fk.parent" "$w/fk.child" && { fail "fork: the child drew the parent's samples"; cat "$w/fk.child"; }

# The readers' pages and profiles say that a sampled snapshot's values are
# estimates (the text and JSON outputs: golden tests *-sampled*).
"$B/tests/mkfixture" "$w/fx" || fail "mkfixture"
"$L" convert --to pprof "$w/fx/sampled2.dump" "$w/s.pb.gz" 2>/dev/null || fail "convert --to pprof"
gzip -dc "$w/s.pb.gz" | grep -a -q 'values are estimated from a sampled snapshot (sample_interval=4096)' ||
	fail "pprof of a sampled snapshot: no comment that values are estimated"
gzip -dc "$w/s.pb.gz" | grep -a -q 'sampled_count' || fail "pprof: no sampled_count label"
"$L" diff --pprof "$w/d.pb.gz" "$w/fx/sampled1.dump" "$w/fx/sampled2.dump" >/dev/null 2>&1 ||
	fail "diff --pprof"
gzip -dc "$w/d.pb.gz" | grep -a -q 'values are estimated from sampled snapshots (sample_interval=4096)' ||
	fail "diff --pprof of sampled snapshots: no comment that values are estimated"
"$L" symbolize --html "$w/s.html" "$w/fx/sampled2.dump" >/dev/null 2>&1 || fail "symbolize --html"
"$L" diff --html "$w/d.html" "$w/fx/sampled1.dump" "$w/fx/sampled2.dump" >/dev/null 2>&1 ||
	fail "diff --html"
for page in s d; do
	grep -q '"sample_interval": *4096' "$w/$page.html" || fail "$page.html: no sample_interval"
	grep -q "Values are estimated" "$w/$page.html" || fail "$page.html: no note that values are estimated"
done

finish
