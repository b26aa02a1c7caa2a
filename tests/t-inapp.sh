#!/bin/sh
# The in-app hook (libleakhook-inapp.so): started by LEAKSNAP_LIBS at load,
# by `leaksnap record --libs`, and by a program that dlopen()s it
# (RTLD_LOCAL) and calls leaksnap_start()/leaksnap_stop() itself.
#  - the leak programs' chosen library's allocations are in the dumps with
#    exact sizes, counts and stacks, the same return addresses, bit for bit
#    (as module offsets), as the preload hook gives for them, operator new
#    included; a library not chosen is not seen;
#  - blocks allocated before start or by a library not chosen, freed or
#    grown by a chosen one: no invalid free, a tracked block after realloc;
#  - a library dlopen()ed after start is patched, and one with RUNPATH
#    $ORIGIN/sub still finds its plug-in by bare name; one that starts the
#    hook on itself from its constructor is patched at once;
#  - stop puts every slot back and counts those something else changed;
#    two starts, a stop without a start: -1, EALREADY / EINVAL, no change;
#  - 8 threads allocating through the slots while start/stop loop: no
#    crash, exact counts after;
#  - the dumps' metadata: collector=inapp, inapp_libs, inapp_watched, ...
#  - its TLS is initial-exec and at most 128 bytes (dlopen()ed under glibc),
#    and a dlopen after the surplus is used up fails with glibc's reason;
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
INAPP=$(cd "$B/lib" && pwd)/libleakhook-inapp.so
exe_path=$T/leaks

# Its thread-local storage is initial-exec, as the preload hook's (no TLS
# descriptor or __tls_get_addr call in an allocation), and small enough for
# the room glibc keeps for a dlopen()ed library's (about 1,700 bytes with
# glibc 2.36, shared with every other such library): 128 bytes at most.
tls=$(readelf -lW "$INAPP" | awk '$1 == "TLS" { print $6 }')
[ -n "$tls" ] && [ $((tls)) -le 128 ] || fail "in-app TLS segment of $tls bytes, expected 1..128"
readelf -dW "$INAPP" | grep -q 'FLAGS.*STATIC_TLS' || fail "in-app library not marked STATIC_TLS"
readelf -rW "$INAPP" | grep -E 'TLSDESC|DTPMOD|DTPOFF' && fail "in-app library has dynamic TLS relocations"
readelf -sW "$INAPP" | grep -q '__tls_get_addr' && fail "in-app library calls __tls_get_addr"
# What is left of that room after another library took it: dlopen fails with
# glibc's reason, and a bigger surplus (docs/inapp.md) lets it load.
out=$("$T/dlopen_each" "$T/libbigtls.so" "$INAPP")
[ "$out" = "$T/libbigtls.so: ok
$INAPP: cannot allocate memory in static TLS block" ] || fail "static TLS used up: got '$out'"
out=$(GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096 "$T/dlopen_each" "$T/libbigtls.so" "$INAPP")
[ "$out" = "$T/libbigtls.so: ok
$INAPP: ok" ] || fail "static TLS with a bigger surplus: got '$out'"

# "leaks all libleaker.so" under the in-app hook watching the executable
# only, under each unwinder.
for mode in auto dwarf fp; do
	out="$w/exe-$mode"
	LD_PRELOAD=$INAPP LEAKSNAP_LIBS='/leaks$' LEAKSNAP_OUT="$out" LEAKSNAP_UNWIND=$mode \
		LEAKSNAP_DUMP_ON_EXIT=all "$T/leaks" all "$T/libleaker.so" >"$out.stdout" 2>"$out.stderr"
	st=$?
	[ $st = 7 ] || fail "exe $mode: exit status $st, expected 7"
	printf 'semantics ok\nchild 1\ndone\n' | cmp -s - "$out.stdout" || fail "exe $mode: stdout differs"
	[ -s "$out.stderr" ] && { fail "exe $mode: stderr not empty"; cat "$out.stderr"; }
	set -- "$out".*.exit.dump
	[ $# = 2 ] || { fail "exe $mode: $# exit dumps, expected 2"; continue; }
	parent="" child=""
	for d in "$@"; do
		"$SC" "$d" >"$d.txt" || fail "$d: stackcheck failed"
		if grep -q ' zygote ' "$d.txt"; then child=$d; else parent=$d; fi
	done
	[ -n "$parent" ] && [ -n "$child" ] || { fail "exe $mode: no parent/child pair"; continue; }
	walk=full
	[ $mode = fp ] && walk=caller
	for who in parent child; do
		eval "d=\$$who"
		expect_leaks "$d.txt" $walk $who nolib
		# nothing but the executable's
		n=$(wc -l <"$d.txt")
		[ "$who" = parent ] && want=10 || want=11
		[ "$n" = $want ] || { fail "$d: $n records, expected $want"; cat "$d.txt"; }
		expect_meta "$d" "collector=inapp"
		"$L" show "$d" | grep -q -x -F '  inapp_libs=/leaks$' || fail "$d: inapp_libs"
		expect_meta "$d" "inapp_watched=$exe_path"
		expect_meta "$d" "invalid_frees=0"
		expect_meta "$d" "trigger=exit"
		"$L" show "$d" >"$d.show"
		grep -q '^  inapp_started=[0-9]*\.[0-9]\{9\}$' "$d.show" || fail "$d: inapp_started"
		grep -q '^  inapp_slots=[1-9][0-9]*$' "$d.show" || fail "$d: inapp_slots"
		[ "$(grep -c '^  inapp_watched=' "$d.show")" = 1 ] || fail "$d: more than one module watched"
		grep -q '^  inapp_skipped=' "$d.show" && fail "$d: a module skipped"
	done
done

# Only the chosen library: libleaker.so, loaded by dlopen after start.
out="$w/lib"
LD_PRELOAD=$INAPP LEAKSNAP_LIBS='libleaker\.so$' LEAKSNAP_OUT="$out" \
	"$T/leaks" all "$T/libleaker.so" >"$out.stdout" 2>&1
[ $? = 7 ] || fail "libleaker: exit status"
for d in "$out".*.exit.dump; do
	"$SC" "$d" >"$d.txt"
	printf '1010 1 app leaker_alloc main\n' >"$d.want"
	cut -d' ' -f1-5 "$d.txt" | cmp -s - "$d.want" || { fail "$d: not only libleaker's record"; cat "$d.txt"; }
	expect_meta "$d" "inapp_watched=$T/libleaker.so"
done

# Same stacks as the preload hook, bit for bit: every record of the chosen
# module's allocations (frame 0 there, or operator new's frames in the C++
# runtime then the module) with the same return addresses as module
# offsets.
same_stacks() { # $1 = name, $2 = regex, $3 = module file name, then the command
	name=$1 re=$2 mod=$3
	shift 3
	LD_PRELOAD=$HOOK LEAKSNAP_OUT="$w/pre-$name" "$@" >/dev/null 2>&1
	LD_PRELOAD=$INAPP LEAKSNAP_LIBS="$re" LEAKSNAP_OUT="$w/in-$name" "$@" >/dev/null 2>&1
	for kind in pre in; do
		for d in "$w/$kind-$name".*.exit.dump; do
			"$SC" --rel "$d" >"$d.rel" || fail "$d: stackcheck"
			grep -q ' zygote ' "$d.rel" && who=child || who=parent
			# operator new's own frames (in the C++ runtime), then the module
			awk -v mod="$mod" '{
				for (i = 4; i <= NF; i++) {
					m = $i; sub(/\+0x.*/, "", m)
					fn = $i; sub(/^[^:]*:/, "", fn)
					if (m == mod) { print; next }
					if (m !~ /^libstdc\+\+/ || fn !~ /^_Zn/) next
				}
			}' "$d.rel" | sort >"$w/$kind-$name.$who.mine"
		done
	done
	for who in parent child; do
		[ -f "$w/pre-$name.$who.mine" ] || continue
		[ -s "$w/pre-$name.$who.mine" ] || fail "$name $who: no records of $mod"
		cmp -s "$w/pre-$name.$who.mine" "$w/in-$name.$who.mine" || {
			fail "$name $who: stacks differ from the preload hook's"
			diff "$w/pre-$name.$who.mine" "$w/in-$name.$who.mine" | head -10
		}
	done
}
same_stacks leaks '/leaks$' leaks "$T/leaks" all "$T/libleaker.so"
same_stacks leaker 'libleaker' libleaker.so "$T/leaks" --thread "$T/libleaker.so"
same_stacks cxx '/leaks_cc$' leaks_cc "$T/leaks_cc"
# operator new's records are among them, frame 0 in the C++ runtime
grep -q ' libstdc++[^ ]*:_Znwm leaks_cc+0x[0-9a-f]*:_Z15cxx_leak_objectv ' "$w/in-cxx.parent.mine" ||
	fail "cxx: no operator new record"
grep -q ' libstdc++[^ ]*:_ZnwmSt11align_val_t ' "$w/in-cxx.parent.mine" ||
	fail "cxx: no aligned operator new record"

# A C++ plug-in dlopen()ed RTLD_LOCAL by a C program: its C++ runtime is in
# no global scope (dlsym cannot find operator new), as an Android app's
# libc++_shared.so: the same four leaks, the same stacks.
same_stacks cxxlocal 'libinappcxx' libinappcxx.so "$T/inapp_api" cxx "$INAPP" "$w/unused" "$T"
for f in cxxplug_leak_array cxxplug_leak_object cxxplug_leak_aligned cxxplug_leak_nothrow; do
	grep -q " libinappcxx.so+0x[0-9a-f]*:$f " "$w/in-cxxlocal.parent.mine" || fail "cxxlocal: no $f record"
done
[ "$(wc -l <"$w/in-cxxlocal.parent.mine")" = 4 ] ||
	{ fail "cxxlocal: not 4 records"; cat "$w/in-cxxlocal.parent.mine"; }

# The same sampled at every byte: each of the 200 deletes of the churn takes
# its block out of the filter too (they left their counters up: the live
# count grew until the filter did, to 4096 counters, and each free after a
# delete took the table lock for nothing, "4096 200 200").  An unrelated
# free may share a counter with one of the few sampled blocks live: a
# handful of unsampled lookups at most.
LD_PRELOAD=$INAPP LEAKSNAP_LIBS=libinappcxx LEAKSNAP_SAMPLE=1 LEAKSNAP_OUT="$w/cxxsample" \
	"$T/inapp_api" cxx "$INAPP" "$w/unused" "$T" >/dev/null 2>&1 || fail "cxx sampled: exit status"
d=$(ls "$w"/cxxsample.*.exit.dump)
"$L" show "$d" >"$d.show"
grep -q '^records: *4 (4 sampled allocations, 28049 sampled bytes)$' "$d.show" ||
	{ fail "cxx sampled: not the 4 leaks"; grep '^records' "$d.show"; }
set -- $(sed -n 's/^  sample_filter=//p' "$d.show")
[ $# = 3 ] && [ "$1" = 1024 ] && [ "$2" -ge 200 ] && [ "$3" -le 5 ] ||
	{ fail "cxx sampled: sample_filter=$*, expected 1024, 200 or more, 5 or fewer"; }

# The C++ program watched whole: the same leaks as t-hook-cxx, nothing of
# the containers it destroys.
d=$(ls "$w"/in-cxx.*.exit.dump)
"$SC" "$d" >"$d.txt"
n=$(awk '$1 == 1012 && $3 == "app" && $4 == "_Znwm" && / _Z14cxx_leak_arrayv main/ { n += $2 } END { print n + 0 }' "$d.txt")
[ "$n" = 2 ] || fail "cxx: new[] of 1012 bytes: $n allocations, expected 2"
expect_record "$d.txt" "1013 1 app _Znwm _Z15cxx_leak_objectv main"
expect_record "$d.txt" "1024 1 app _ZnwmSt11align_val_t _Z16cxx_leak_alignedv main"
no_record "$d.txt" ' _Z9cxx_churnv '
[ "$(wc -l <"$d.txt")" = 4 ] || { fail "cxx: records other than the leaks"; cat "$d.txt"; }

# The program that starts and stops the hook itself.
api() { # $1 = scenario, then its arguments; stdout into $w/api-$1.out
	s=$1
	shift
	"$T/inapp_api" "$s" "$INAPP" "$w/api-$s" "$@" >"$w/api-$s.out" 2>&1
	st=$?
	[ $st = 0 ] || { fail "inapp_api $s: exit status $st"; cat "$w/api-$s.out"; }
}
api_expect() { # $1 = scenario; stdin = the exact output
	cmp -s - "$w/api-$1.out" || { fail "inapp_api $1: output differs"; cat "$w/api-$1.out"; }
}
api_records() { # $1 = dump, $2 = the records' first five fields, exactly
	# (the compiler's clones, f.constprop.0, named as f)
	"$SC" "$1" | awk '{ $0 = $1 " " $2 " " $3 " " $4 " " $5; print }' |
		sed 's/\.\(constprop\|isra\|part\)\.[0-9]*//g' >"$1.txt"
	printf '%s\n' "$2" | cmp -s - "$1.txt" || { fail "$1: records differ"; cat "$1.txt"; }
}

api api
api_expect api <<'EOF'
global lookup: none
stop before start: -1 EINVAL
size 0: -1 EINVAL
frames 257: -1 EINVAL
unwind sideways: -1 EINVAL
libs (: -1 EINVAL
flags 0x100: -1 EINVAL
interval -1: -1 EINVAL
slot unchanged: yes
stop after bad starts: -1 EINVAL
start: 0 
slot patched: yes
start again: -1 EALREADY
start other: -1 EALREADY
slot same: yes
stop: 0 
slot restored: yes
stop again: -1 EINVAL
restart: 0 
stop: 0 
slot restored: yes
start before dlclose: 0 
dlclose: 0
allocating after dlclose: ok
EOF
api_records "$w/api-api.api1.dump" "2001 1 app api_leak run_api"
# the restart's own settings: 4 frames
"$SC" "$w/api-api.api2.dump" >"$w/api2.txt"
[ "$(awk '{ print NF - 3 }' "$w/api2.txt")" = 4 ] || { fail "restart: not 4 frames"; cat "$w/api2.txt"; }
grep -q '^2002 1 app api_leak_again' "$w/api2.txt" || fail "restart: no 2002 record"
expect_meta "$w/api-api.api1.dump" "inapp_watched=$T/inapp_api"
expect_meta "$w/api-api.api1.dump" "trigger=api"
# (RTLD_LOCAL) no exit dump: LEAKSNAP_START_NO_EXIT_DUMP
ls "$w"/api-api.*.exit.dump >/dev/null 2>&1 && fail "api: an exit dump despite NO_EXIT_DUMP"

api foreign "$T/libleaker.so"
api_expect foreign <<'EOF'
global lookup: none
start: 0 
stop: 0 
EOF
api_records "$w/api-foreign.foreign.dump" "3004 1 app foreign_realloc main"
expect_meta "$w/api-foreign.foreign.dump" "invalid_frees=0"

# A watched library unloaded unseen and loaded again in place: the new
# load's slots are patched (its block is in the dump) and stop puts them
# all back (it took the new load for the old one: "stop: 2", 3102 missing).
api reload "$T/libleaker.so"
api_expect reload <<'EOF'
global lookup: none
start: 0 
unloaded: 0
same place: yes
stop: 0 
EOF
api_records "$w/api-reload.reload.dump" "3101 1 app leaker_alloc run_reload
3102 1 app leaker_alloc run_reload"
# The same loaded again unseen too (no scan since): stop leaves none of the
# new load's slots, none of which is ours ("stop: 2" before); its block is
# not seen.
api reloadraw "$T/libleaker.so"
api_expect reloadraw <<'EOF'
global lookup: none
start: 0 
unloaded: 0
same place: yes
stop: 0 
EOF
api_records "$w/api-reloadraw.reload.dump" "3101 1 app leaker_alloc run_reload"

api tamper
api_expect tamper <<'EOF'
global lookup: none
start: 0 
patched: yes
stop: 1 
malloc restored: yes
free restored: yes
calloc left as set: yes
EOF

api stop
api_expect stop <<'EOF'
global lookup: none
dump signal default before: yes
start: 0 
dump signal default while started: no
interval dumps: yes
stop: 0 
a dump at stop: yes
dump signal default after: yes
no dumps after stop: yes
EOF
# the last one, stop's: the leak, and the metadata of the watched module
last=$(ls "$w"/api-stop.*.dump | sort | tail -n 1)
expect_meta "$last" "trigger=api"
expect_meta "$last" "inapp_watched=$T/inapp_api"
"$SC" "$last" | grep -q '^2003 1 app api_leak' || fail "$last: no 2003 record"

# (the same loaded without a start: the protections of the libraries'
# mappings, their RELRO pages, the same after stop)
api unwatched "$T"
api later "$T"
{
	printf 'global lookup: none\nstart: 0 \nplug loaded: yes\nstop: 0 \n'
	sed -n '/^\/libinapp/p' "$w/api-unwatched.out"
} >"$w/later.want"
api_expect later <"$w/later.want"
grep -q '^/libinappplug.so: r--p r-xp r--p r--p rw-p$' "$w/api-unwatched.out" ||
	fail "unwatched: the plug-in's mappings: $(grep plug "$w/api-unwatched.out")"
# every way to malloc: a jump slot, GLOB_DAT, an absolute pointer in data
# and one in a RELRO table
api_records "$w/api-later.later.dump" "5001 1 app inappdl_alloc load_later
5002 1 app plug_alloc inappdl_call_plug
5003 1 app inappdl_alloc_ptr load_later
5004 1 app inappdl_alloc_data load_later
5005 1 app inappdl_alloc_relro load_later"
expect_meta "$w/api-later.later.dump" "inapp_watched=$T/libinappdl.so"
expect_meta "$w/api-later.later.dump" "inapp_watched=$T/sub/libinappplug.so"
# (without the hook, the plug-in is found the same way)
"$T/inapp_api" later /nonexistent/lib.so "$w/x" "$T" >/dev/null 2>&1 && fail "later: ran without the hook"

# A library that loads and starts the hook from its own load-time entry
# (JNI_OnLoad's place), watching itself: it is patched though its dlopen
# has not returned yet; the program's own malloc is not watched.
api jni "$T"
api_expect jni <<'EOF'
global lookup: none
started at load: 0
stop: 0 
EOF
api_records "$w/api-jni.jni.dump" "6001 1 app jni_alloc run_jni"
expect_meta "$w/api-jni.jni.dump" "inapp_watched=$T/libinappjni.so"

for round in 1 2 3; do
	api threads
	api_expect threads <<'EOF'
global lookup: none
start/stop failures: 0
start: 0 
stop: 0 
threads kept: 8
EOF
	"$SC" "$w/api-threads.threads.dump" >"$w/threads.txt"
	grep -q '^4005 800 app thread_keep worker' "$w/threads.txt" ||
		{ fail "threads: not 800 blocks of 4005 bytes"; cat "$w/threads.txt"; }
	[ "$(grep -c '^4005 ' "$w/threads.txt")" = 1 ] || fail "threads: 4005 split"
	expect_meta "$w/api-threads.threads.dump" "invalid_frees=0"
	rm -f "$w"/api-threads.*
done

# leaksnap record --libs
out="$w/rec"
"$L" record --libs '/leaks$' --out "$out" -- "$T/leaks" all "$T/libleaker.so" >"$out.stdout" 2>"$out.stderr"
[ $? = 7 ] || fail "record --libs: exit status"
grep -q "^leaksnap: wrote $out\.[0-9]*\.exit\.dump: 10 records" "$out.stderr" ||
	{ fail "record --libs: no parent dump listed"; cat "$out.stderr"; }
for d in "$out".*.exit.dump; do
	expect_meta "$d" "collector=inapp"
	"$L" show "$d" | grep -q -x -F '  inapp_libs=/leaks$' || fail "$d: inapp_libs"
	"$SC" "$d" | grep -q '^1010 ' && fail "$d: libleaker.so seen"
done
"$L" record --libs '(' -- true >"$w/bad.out" 2>&1
st=$?
[ $st = 2 ] || fail "record --libs '(': status $st, expected 2"
[ "$(wc -l <"$w/bad.out")" = 1 ] && grep -q "^leaksnap: record: --libs (: not a valid extended regular expression" "$w/bad.out" ||
	{ fail "record --libs '(': message"; cat "$w/bad.out"; }
LEAKSNAP_HOOK_INAPP=/nonexistent "$L" record --libs x -- true >"$w/nohook.out" 2>&1
[ $? = 2 ] && grep -q "^leaksnap: /nonexistent: hook library not found" "$w/nohook.out" ||
	{ fail "record --libs: missing in-app hook"; cat "$w/nohook.out"; }
"$L" record --help | grep -q -- '--libs REGEX' || fail "record --help: no --libs"

# A bad LEAKSNAP_LIBS: one line, the program runs untouched.
LD_PRELOAD=$INAPP LEAKSNAP_LIBS='(' LEAKSNAP_OUT="$w/badenv" "$T/leaks" >"$w/badenv.out" 2>&1
[ $? = 7 ] || fail "bad LEAKSNAP_LIBS: exit status"
grep -q "^leaksnap: LEAKSNAP_LIBS=(: not a valid extended regular expression; not collecting$" "$w/badenv.out" ||
	{ fail "bad LEAKSNAP_LIBS: message"; cat "$w/badenv.out"; }
ls "$w"/badenv.* 2>/dev/null | grep -q dump && fail "bad LEAKSNAP_LIBS: dumps written"

# start/stop racing a thread that forks, one that loads and unloads a
# library, and allocating threads: every round ends (fork took the tables'
# locks before the in-app lock, and dlclose waited for the lock while
# counted in: both deadlocked against leaksnap_stop).
for mode in 1 2 4 7; do
	timeout -k 5 120 "$T/inapp_race" "$INAPP" "$T/libleaker.so" $mode 300 "$w/race" >"$w/race.$mode" 2>&1
	st=$?
	[ $st = 0 ] && [ "$(cat "$w/race.$mode")" = ok ] ||
		{ fail "race mode $mode: status $st"; head -3 "$w/race.$mode"; }
done

# Loaded but not started: nothing interposed, no dumps.
LD_PRELOAD=$INAPP LEAKSNAP_OUT="$w/idle" "$T/leaks" all "$T/libleaker.so" >/dev/null 2>&1
[ $? = 7 ] || fail "idle: exit status"
ls "$w"/idle.* >/dev/null 2>&1 && fail "idle: dumps written without LEAKSNAP_LIBS"
# and the preload hook's leaksnap_start says ENOSYS
nm -D --defined-only "$HOOK" | grep -q ' T leaksnap_start$' || fail "libleakhook.so: no leaksnap_start"
exports=$(nm -D --defined-only "$INAPP" | awk '$2 == "T" { print $3 }' | sort | tr '\n' ' ')
[ "$exports" = "free_malloc_leak_info get_malloc_leak_info leaksnap_dump leaksnap_start leaksnap_stop " ] ||
	fail "libleakhook-inapp.so exports: $exports"

finish
