#!/bin/sh
# leaksnap attach PID (attach/, cli/cmd_attach.c), through the command, on
# processes of tests/attach/target.c:
#  - with tests/attach/libfakeinapp.so, a stand-in for the in-app hook that
#    writes down the options it was given: the exact options passed, the
#    exact messages, --dump's dump paths, --detach (and what it reports),
#    "already attached"; a process blocked in read() or nanosleep() gets
#    its own result after an attach; every signal sent while attaching (300
#    queued real-time signals with their values, and SIGUSR1s) arrives; a
#    thread in a signal handler is called in only once it returned;
#    threads allocating in a tight loop survive twenty attach/detach rounds;
#  - every error, exit status 2 and the exact line, with the process still
#    running as before: no such process, another user's process, a process
#    that is not dumpable, a stopped one, one whose main thread ended or runs
#    on a small stack of its own, a static program, the preload hook
#    present (whose dump --dump takes), a library of another class or architecture, one missing
#    inside the process's root (a mount namespace), one dlopen refuses (its
#    dlerror), the process exiting during the attach, a crash in the call
#    (the process goes on, and can be attached again), usage errors;
#  - with the real libleakhook-inapp.so when it is built ($B/lib): a C++
#    service leaking through a library of its own, found by leakdiff with
#    file:line; threads in a tight allocation loop, exact counts, and ten
#    attach/dump/detach rounds while they allocate (three with reachability
#    dumps every 50 ms).  Without
#    it those parts are skipped, and say so.
set -u
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
L=$(cd "$B/bin" && pwd)/leaksnap
T=$(cd "$B/tests/attach" && pwd)
FAKE=$T/libfakeinapp.so
HOOK=$(cd "$B/lib" && pwd)/libleakhook.so
INAPP=$(cd "$B/lib" && pwd)/libleakhook-inapp.so
SC=$(cd "$B/tests" && pwd)/stackcheck
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-attach.XXXXXX")
chmod 755 "$w"
pids=
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	exec 3>&- 2>/dev/null
	rm -rf "$w"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# wait_for FILE: until it exists (10 s at most)
wait_for() {
	n=0
	while [ ! -e "$1" ] && [ $n -lt 1000 ]; do sleep 0.01; n=$((n + 1)); done
	[ -e "$1" ] || fail "$1 never appeared"
}
# start NAME MODE ARGS...: run target MODE $w/NAME.ready ARGS in the
# background (output in $w/NAME.out), wait until it is ready; $pid is it
start() {
	name=$1 mode=$2
	shift 2
	"$T/target" "$mode" "$w/$name.ready" "$@" >"$w/$name.out" 2>&1 &
	pid=$!
	pids="$pids $pid"
	wait_for "$w/$name.ready"
}
# expect NAME STATUS STDOUT STDERR COMMAND...: the command's exact result
expect() {
	name=$1 st=$2 out=$3 err=$4
	shift 4
	"$@" >"$w/out" 2>"$w/err"
	have=$?
	[ "$have" = "$st" ] || fail "$name: exit status $have, expected $st"
	printf '%s' "$out" | cmp -s - "$w/out" ||
		{ fail "$name: stdout differs"; printf '%s' "$out" | diff -u - "$w/out"; }
	printf '%s' "$err" | cmp -s - "$w/err" ||
		{ fail "$name: stderr differs"; printf '%s' "$err" | diff -u - "$w/err"; }
}
nl='
'
# untouched PID: running on, traced by nobody
untouched() {
	st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	tr=$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
	case $st in
	S | R | D) ;;
	*) fail "process $1 is in state '$st' after: $2" ;;
	esac
	[ "$tr" = 0 ] || fail "process $1 is traced by '$tr' after: $2"
}
# asleep PID: wait until the process sleeps (in the system call it was
# ready to make)
asleep() {
	n=0
	while [ $n -lt 500 ]; do
		case $(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null) in
		S) return ;;
		esac
		sleep 0.01
		n=$((n + 1))
	done
	fail "process $1 never went to sleep"
}
started() { # PID PREFIX: the options the fake received
	cat "$2.$1.fake-start" 2>/dev/null || echo "(no $2.$1.fake-start)"
}

# Can this machine trace at all?
start probe wait
if ! "$L" attach "$pid" --lib "$FAKE" --out "$w/probe" >"$w/out" 2>"$w/err"; then
	if grep -q 'not permitted' "$w/err"; then
		cat "$w/err"
		echo "ptrace is not permitted here"
		exit 77
	fi
fi

# The exact options ----------------------------------------------------------
start opts wait
expect "start with every option" 0 "attached to process $pid: collecting with $FAKE
only allocations made from now on are known: a leak that grew before this moment is not seen
dumps: $w/o.$pid.NNNN.dump, on 'leaksnap attach $pid --dump --out $w/o', on kill -47 $pid, every 2.5 s, and $w/o.$pid.exit.dump at exit
control: leaksnap ctl $pid stats, leaksnap watch $pid --out DIR
stop: leaksnap attach $pid --detach
" "" "$L" attach --libs 'lib(foo|bar)\.so$' "$pid" --frames 8 --unwind fp --out "$w/o" \
	--interval 2.5 --control --sample 65536 --lib "$FAKE"
[ "$(started "$pid" "$w/o")" = "size=72 libs=lib(foo|bar)\\.so\$ frames=8 unwind=fp out=$w/o interval=2.5 flags=0 control=1 sample=65536 thread=main" ] ||
	fail "options received: $(started "$pid" "$w/o")"
untouched "$pid" "start"
expect "a second attach" 2 "" "leaksnap: $pid: already attached: collection runs since an earlier attach ('leaksnap attach $pid --dump' takes a dump, --detach stops it)
" "$L" attach "$pid" --lib "$FAKE" --out "$w/o"
mkdir "$w/copy"
cp "$FAKE" "$w/copy/libfakeinapp.so"
expect "another copy loaded" 2 "" "leaksnap: $pid: the process has another libfakeinapp.so loaded ($FAKE, which stays after a detach): attach with --lib $FAKE
" "$L" attach "$pid" --lib "$w/copy/libfakeinapp.so" --out "$w/o"
expect "dump 1" 0 "$w/o.$pid.0001.dump
" "" "$L" attach "$pid" --dump --out "$w/o" --lib "$FAKE"
expect "dump 2" 0 "$w/o.$pid.0002.dump
" "" "$L" attach "$pid" --lib "$FAKE" --out "$w/o" --dump
[ "$(cat "$w/o.$pid.0002.dump" 2>/dev/null)" = "fake dump" ] || fail "dump 2 not written"
expect "dump under another prefix" 0 "" "leaksnap: $pid: warning: the process wrote a dump, but not as $w/elsewhere.$pid.NNNN.dump: give --out the prefix the attach was given
" "$L" attach "$pid" --dump --out "$w/elsewhere" --lib "$FAKE"
expect "detach" 0 "detached from process $pid: collection stopped, every GOT slot put back
" "" "$L" attach "$pid" --detach --lib "$FAKE"
expect "detach again" 2 "" "leaksnap: $pid: not attached: collection is not running
" "$L" attach "$pid" --detach --lib "$FAKE"
expect "dump after the detach" 2 "" "leaksnap: $pid: not attached: collection is not running (attach first: 'leaksnap attach $pid')
" "$L" attach "$pid" --dump --lib "$FAKE" --out "$w/o"
untouched "$pid" "detach"
# attached again after a detach, with the defaults but --reachability (which
# does not go with --sample: t-sample.sh)
rm -f "$w/o.$pid.fake-start"
expect "attach again" 0 "attached to process $pid: collecting with $FAKE
only allocations made from now on are known: a leak that grew before this moment is not seen
dumps: $w/o.$pid.NNNN.dump, on 'leaksnap attach $pid --dump --out $w/o', on kill -47 $pid, and $w/o.$pid.exit.dump at exit
stop: leaksnap attach $pid --detach
" "" "$L" attach "$pid" --lib "$FAKE" --out "$w/o" --reachability
[ "$(started "$pid" "$w/o")" = "size=72 libs=(null) frames=0 unwind=(null) out=$w/o interval=0 flags=1 control=(null) sample=0 thread=main" ] ||
	fail "default options received: $(started "$pid" "$w/o")"

# slots left alone are reported
FAKE_LEFT=3 start left wait
"$L" attach "$pid" --lib "$FAKE" --out "$w/l" >/dev/null 2>&1
expect "detach, slots left" 0 "detached from process $pid: collection stopped; 3 GOT slots left as they were (something else changed them since the attach)
" "" "$L" attach "$pid" --detach --lib "$FAKE"
FAKE_LEFT=1 start left1 wait
"$L" attach "$pid" --lib "$FAKE" --out "$w/l" >/dev/null 2>&1
expect "detach, one slot left" 0 "detached from process $pid: collection stopped; 1 GOT slot left as it was (something else changed it since the attach)
" "" "$L" attach "$pid" --detach --lib "$FAKE"

# A process in a system call ------------------------------------------------
mkfifo "$w/fifo"
exec 3<>"$w/fifo"
"$T/target" read "$w/read.ready" <"$w/fifo" >"$w/read.out" 2>&1 &
pid=$!
pids="$pids $pid"
wait_for "$w/read.ready"
asleep "$pid"
"$L" attach "$pid" --lib "$FAKE" --out "$w/r" >/dev/null 2>"$w/err" || fail "attach in read: $(cat "$w/err")"
"$L" attach "$pid" --dump --lib "$FAKE" --out "$w/r" >/dev/null 2>"$w/err" || fail "dump in read: $(cat "$w/err")"
printf hello >&3
wait "$pid"
[ "$(cat "$w/read.out")" = "read 5: hello" ] || fail "read after the attach: $(cat "$w/read.out")"

start sleep nanosleep 3000
asleep "$pid"
"$L" attach "$pid" --lib "$FAKE" --out "$w/s" >/dev/null 2>"$w/err" || fail "attach in nanosleep: $(cat "$w/err")"
kill -0 "$pid" 2>/dev/null || fail "nanosleep: the process ended before the attach was over"
# the sleep goes on in restart_syscall: a second attach is told it is
# attached already, and --detach reaches it there
"$L" attach "$pid" --lib "$FAKE" --out "$w/s" >/dev/null 2>"$w/err"
[ $? = 2 ] && grep -q "^leaksnap: $pid: already attached" "$w/err" ||
	fail "second attach in restart_syscall: $(cat "$w/err")"
"$L" attach "$pid" --detach --lib "$FAKE" >/dev/null 2>"$w/err" ||
	fail "detach in restart_syscall: $(cat "$w/err")"
wait "$pid"
[ "$(cat "$w/sleep.out")" = "nanosleep 0: slept" ] || fail "nanosleep after the attach: $(cat "$w/sleep.out")"

# Signals sent while attaching: none is lost ---------------------------------
start sig signals 300
: >"$w/sig.ready.go"
i=0
while [ $i -lt 15 ]; do
	"$L" attach "$pid" --lib "$FAKE" --out "$w/g" >/dev/null 2>"$w/err" || fail "attach $i (signals): $(cat "$w/err")"
	"$L" attach "$pid" --detach --lib "$FAKE" >/dev/null 2>"$w/err" || fail "detach $i (signals): $(cat "$w/err")"
	i=$((i + 1))
done
: >"$w/sig.ready.stop"
n=0
while kill -0 "$pid" 2>/dev/null && [ $n -lt 1000 ]; do sleep 0.01; n=$((n + 1)); done
wait "$pid"
[ "$(cat "$w/sig.out")" = "SIGRTMIN 300, sum 45150, SIGUSR1 seen" ] || fail "signals: $(cat "$w/sig.out")"

# In a signal handler (which may have interrupted a lock): not called in
# until the handler returned
start hnd handler 1500
kill -USR1 "$pid"
n=0
while [ "$(cut -d' ' -f3 "/proc/$pid/stat" | tr -d '\n')" != S ] || [ "$n" -lt 20 ]; do
	sleep 0.01
	n=$((n + 1))
done
"$L" attach "$pid" --lib "$FAKE" --out "$w/h" >/dev/null 2>"$w/err" || fail "attach in a handler: $(cat "$w/err")"
[ -e "$w/hnd.ready.handled" ] || fail "attached in a signal handler, before it returned"
[ -e "$w/h.$pid.fake-start" ] || fail "in a handler: not started"

# Threads allocating in a tight loop ------------------------------------------
start spin spin 4
i=0
while [ $i -lt 20 ]; do
	"$L" attach "$pid" --lib "$FAKE" --out "$w/p" >/dev/null 2>"$w/err" || fail "attach $i (spin): $(cat "$w/err")"
	"$L" attach "$pid" --detach --lib "$FAKE" >/dev/null 2>"$w/err" || fail "detach $i (spin): $(cat "$w/err")"
	i=$((i + 1))
done
untouched "$pid" "20 attach/detach rounds in a tight loop"
[ "$(started "$pid" "$w/p" | sed 's/.* thread=/thread=/')" = "thread=main" ] || fail "spin: $(started "$pid" "$w/p")"

# Errors: one line, exit status 2, the process as it was ------------------------
expect "no such process" 2 "" "leaksnap: 99999999: no such process
" "$L" attach 99999999 --lib "$FAKE"
expect "missing PID" 2 "" "leaksnap: attach: missing PID (see 'leaksnap attach --help')
" "$L" attach --lib "$FAKE"
expect "not a PID" 2 "" "leaksnap: attach: '12x' is not a process id (see 'leaksnap attach --help')
" "$L" attach 12x
expect "dump with options" 2 "" "leaksnap: attach: --dump takes no collection option (those are the attach's) (see 'leaksnap attach --help')
" "$L" attach 1 --dump --frames 4
expect "dump and detach" 2 "" "leaksnap: attach: --dump and --detach go alone (see 'leaksnap attach --help')
" "$L" attach 1 --dump --detach
expect "bad regex" 2 "" "leaksnap: attach: --libs '(': Unmatched ( or \\( (see 'leaksnap attach --help')
" "$L" attach 1 --libs '('

start static wait
kill "$pid"
wait "$pid" 2>/dev/null
"$T/target-static" wait "$w/static2.ready" >/dev/null 2>&1 &
pid=$!
pids="$pids $pid"
wait_for "$w/static2.ready"
expect "a static program" 2 "" "leaksnap: $pid: a statically linked program: it has no dynamic loader to load a library with
" "$L" attach "$pid" --lib "$FAKE"
untouched "$pid" "static"

start small smallstack
"$L" attach "$pid" --lib "$FAKE" --out "$w/x" >"$w/out" 2>"$w/err"
st=$?
sed 's/([0-9]* KiB below its stack pointer, at 0x[0-9a-f]*)/(N KiB below its stack pointer, at ADDR)/' "$w/err" >"$w/err.n"
[ "$st" = 2 ] && [ "$(cat "$w/err.n")" = "leaksnap: $pid: the main thread runs on a small stack (N KiB below its stack pointer, at ADDR): too little for dlopen; try again when it is back on its own stack" ] ||
	fail "a small stack: status $st, $(cat "$w/err")"
untouched "$pid" "a small stack"
[ -e "$w/x.$pid.fake-start" ] && fail "a small stack: the library was started"

start mainexit mainexit
n=0
while [ "$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$pid/status")" != Z ] && [ $n -lt 500 ]; do
	sleep 0.01
	n=$((n + 1))
done
expect "the main thread ended" 2 "" "leaksnap: $pid: its main thread has ended (the process runs on in 1 other thread): attaching calls in the main thread
" "$L" attach "$pid" --lib "$FAKE"

start stopped wait
kill -STOP "$pid"
sleep 0.1
expect "a stopped process" 2 "" "leaksnap: $pid: the process is stopped (state T): let it run first (kill -CONT $pid); attaching would resume it
" "$L" attach "$pid" --lib "$FAKE"
kill -CONT "$pid"

LD_PRELOAD=$HOOK LEAKSNAP_OUT=$w/pre "$T/target" wait "$w/pre.ready" >/dev/null 2>&1 &
pid=$!
pids="$pids $pid"
wait_for "$w/pre.ready"
hook_real=$(readlink -f "$HOOK")
expect "the preload hook" 2 "" "leaksnap: $pid: already attached: the process runs under the preload hook $hook_real (LD_PRELOAD), which records everything already (take a dump with kill -47 $pid)
" "$L" attach "$pid" --lib "$FAKE"
expect "detach the preload hook" 2 "" "leaksnap: $pid: the process runs under the preload hook $hook_real (LD_PRELOAD), which cannot be detached
" "$L" attach "$pid" --detach
# --dump calls the preload hook's own leaksnap_dump(NULL)
expect "dump the preload hook" 0 "$w/pre.$pid.0001.dump
" "" "$L" attach "$pid" --dump --out "$w/pre"
"$L" show "$w/pre.$pid.0001.dump" >"$w/show.out" 2>&1 || fail "the preload hook's dump: $(cat "$w/show.out")"
grep -q "^pid: *$pid\$" "$w/show.out" || fail "the preload hook's dump is not of $pid"
untouched "$pid" "a dump of the preload hook"

start libs wait
cp "$FAKE" "$w/lib32.so"
printf '\001' | dd of="$w/lib32.so" bs=1 seek=4 conv=notrunc 2>/dev/null
expect "a 32-bit library" 2 "" "leaksnap: $w/lib32.so: a 32-bit x86-64 library cannot be loaded into process $pid, a 64-bit x86-64 program
" "$L" attach "$pid" --lib "$w/lib32.so"
cp "$FAKE" "$w/libarm64.so"
printf '\267\000' | dd of="$w/libarm64.so" bs=1 seek=18 conv=notrunc 2>/dev/null
expect "an arm64 library" 2 "" "leaksnap: $w/libarm64.so: a 64-bit arm64 library cannot be loaded into process $pid, a 64-bit x86-64 program
" "$L" attach "$pid" --lib "$w/libarm64.so"
printf 'not a library\n' >"$w/libtext.so"
expect "not ELF" 2 "" "leaksnap: $w/libtext.so: not an ELF file
" "$L" attach "$pid" --lib "$w/libtext.so"
expect "no library" 2 "" "leaksnap: $w/nothere.so: in-app hook library not found: No such file or directory (from --lib)
" "$L" attach "$pid" --lib "$w/nothere.so"
expect "dlopen fails" 2 "" "leaksnap: $T/libunresolved.so: cannot be loaded in process $pid: $T/libunresolved.so: undefined symbol: leaksnap_test_no_such_function
" "$L" attach "$pid" --lib "$T/libunresolved.so"
expect "no leaksnap_start" 2 "" "leaksnap: $T/libservleak.so: has no leaksnap_start: not a build of the in-app hook (libleakhook-inapp.so)
" "$L" attach "$pid" --lib "$T/libservleak.so"
expect "dump, nothing loaded" 2 "" "leaksnap: $pid: not attached: the process has no libleakhook-inapp.so loaded (attach first: 'leaksnap attach $pid')
" "$L" attach "$pid" --dump
untouched "$pid" "the library errors"
expect "out directory" 2 "" "leaksnap: $w/none/x: directory '$w/none': No such file or directory
" "$L" attach "$pid" --lib "$FAKE" --out "$w/none/x"

start exits wait
expect "exits during the attach" 2 "" "leaksnap: $pid: the process exited during the attach (exit status 7)
" "$L" attach "$pid" --lib "$FAKE" --libs fake:exit --out "$w/x"
wait "$pid"
st=$?
[ "$st" = 7 ] || fail "the process that exited: status $st"

start crash wait
"$L" attach "$pid" --lib "$FAKE" --libs fake:crash --out "$w/x" >"$w/out" 2>"$w/err"
st=$?
sed 's/at pc 0x[0-9a-f]*)/at pc ADDR)/' "$w/err" >"$w/err.n"
[ "$st" = 2 ] && [ "$(cat "$w/err.n")" = "leaksnap: $pid: leaksnap_start crashed (signal 11 at pc ADDR); its registers were put back as they were before the call (what the call did before the crash stays)" ] ||
	fail "a crash in the call: status $st, $(cat "$w/err")"
untouched "$pid" "a crash in the call"
expect "attach after a crash" 0 "attached to process $pid: collecting with $FAKE
only allocations made from now on are known: a leak that grew before this moment is not seen
dumps: $w/c.$pid.NNNN.dump, on 'leaksnap attach $pid --dump --out $w/c', on kill -47 $pid, and $w/c.$pid.exit.dump at exit
stop: leaksnap attach $pid --detach
" "" "$L" attach "$pid" --lib "$FAKE" --out "$w/c"

start einval wait
expect "leaksnap_start fails" 2 "" "leaksnap: $pid: leaksnap_start failed in the process: Invalid argument
" "$L" attach "$pid" --lib "$FAKE" --libs fake:einval --out "$w/x"
untouched "$pid" "leaksnap_start failed"

# inside another mount namespace, where the library's directory is empty
mkdir -p "$w/libdir"
cp "$FAKE" "$w/libdir/libfakeinapp.so"
if command -v unshare >/dev/null 2>&1 &&
	unshare -m --propagation private true 2>/dev/null; then
	unshare -m --propagation private sh -c 'mount -t tmpfs none "$1" && exec "$2" wait "$3"' \
		sh "$w/libdir" "$T/target" "$w/ns.ready" >/dev/null 2>&1 &
	pid=$!
	pids="$pids $pid"
	wait_for "$w/ns.ready"
	expect "missing inside the root" 2 "" "leaksnap: $w/libdir/libfakeinapp.so: not found inside process $pid's root (/proc/$pid/root$w/libdir/libfakeinapp.so: No such file or directory): the process sees other files (a container?); put the library at the same path there
" "$L" attach "$pid" --lib "$w/libdir/libfakeinapp.so"
	untouched "$pid" "missing inside the root"
else
	echo "SKIP: a library missing inside the process's root (unshare -m is not permitted here)"
fi

# permissions: as another user
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	start root wait
	expect "another user's process" 2 "" "leaksnap: $pid: not permitted: the process runs as user 0 and leaksnap as user 65534; tracing another user's process needs CAP_SYS_PTRACE (run leaksnap as root or as that user)
" as_nobody "$L" attach "$pid" --lib "$FAKE"
	untouched "$pid" "another user"
	mkdir -m 777 "$w/nobody"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$T/target" undumpable \
		"$w/nobody/undump.ready" >/dev/null 2>&1 &
	pid=$!
	pids="$pids $pid"
	wait_for "$w/nobody/undump.ready"
	expect "not dumpable" 2 "" "leaksnap: $pid: not permitted: the process is not dumpable (a set-user-ID program, or it called prctl(PR_SET_DUMPABLE, 0)); tracing it needs CAP_SYS_PTRACE (run leaksnap as root)
" as_nobody "$L" attach "$pid" --lib "$FAKE"
	untouched "$pid" "not dumpable"
else
	echo "SKIP: the permission errors (need root and setpriv to act as another user)"
fi

# With the real in-app hook ---------------------------------------------------------
if [ ! -f "$INAPP" ]; then
	echo "SKIP: the real in-app hook: $INAPP is not built; attaching a C++ service and exact counts untested"
else
	# a C++ service leaking through libservleak.so, found by leakdiff
	mkfifo "$w/svc.fifo"
	exec 3<>"$w/svc.fifo"
	"$T/service" "$w/svc.ready" <"$w/svc.fifo" >/dev/null 2>&1 &
	pid=$!
	pids="$pids $pid"
	wait_for "$w/svc.ready"
	inapp_real=$(readlink -f "$INAPP")
	expect "attach the service" 0 "attached to process $pid: collecting with $inapp_real
only allocations made from now on are known: a leak that grew before this moment is not seen
dumps: $w/svc.$pid.NNNN.dump, on 'leaksnap attach $pid --dump --out $w/svc', on kill -47 $pid, and $w/svc.$pid.exit.dump at exit
control: leaksnap ctl $pid stats, leaksnap watch $pid --out DIR
stop: leaksnap attach $pid --detach
" "" "$L" attach "$pid" --libs 'libservleak\.so$' --out "$w/svc" --control
	# --control: the control socket answers for the attached process
	v=$("$L" ctl "$pid" version 2>&1)
	case $v in "leaksnap "*", pid $pid, control protocol 1") ;; *) fail "ctl version after attach --control: '$v'" ;; esac
	echo 100 >&3
	wait_for "$w/svc.ready.done.1"
	d1=$("$L" attach "$pid" --dump --out "$w/svc" 2>"$w/err") || fail "service dump 1: $(cat "$w/err")"
	echo 250 >&3
	wait_for "$w/svc.ready.done.2"
	d2=$("$L" attach "$pid" --dump --out "$w/svc" 2>"$w/err") || fail "service dump 2: $(cat "$w/err")"
	[ "$d1" = "$w/svc.$pid.0001.dump" ] && [ "$d2" = "$w/svc.$pid.0002.dump" ] ||
		fail "service dumps: '$d1' '$d2'"
	line=$(grep -n 'new Entry;' "$top/tests/attach/libservleak.cc" | cut -d: -f1)
	"$L" diff "$d1" "$d2" >"$w/diff.out" 2>&1 || fail "leakdiff: status $?"
	# the first suspect: the 250 entries of the second batch, at their new
	grep -q '^#1  +50000 bytes, +250 allocations  score' "$w/diff.out" &&
		sed -n '/^#1 /,/^$/p' "$w/diff.out" |
		grep -q -E "^  > #[0-9]+ .*  servleak_handle  $top/tests/attach/libservleak.cc:$line:[0-9]+\$" ||
		{ fail "leakdiff does not find the leak at libservleak.cc:$line"; head -30 "$w/diff.out"; }
	"$L" ctl "$pid" stats --json | grep -q "^{\"pid\":$pid,\"live_bytes\":[1-9]" ||
		fail "ctl stats after attach --control: $("$L" ctl "$pid" stats --json 2>&1)"
	"$L" attach "$pid" --detach >/dev/null 2>"$w/err" || fail "detach the service: $(cat "$w/err")"
	# (detached: the socket is closed with the rest)
	"$L" ctl "$pid" version >/dev/null 2>&1 && fail "ctl still answers after the detach"
	untouched "$pid" "the service"

	# threads in a tight allocation loop: exact counts after they quiesce
	start leak leak 4 50 "$w/leakflag"
	"$L" attach "$pid" --libs "$(basename "$T")/target\$" --out "$w/m" >/dev/null 2>"$w/err" ||
		fail "attach the loop: $(cat "$w/err")"
	: >"$w/leakflag"
	for t in 0 1 2 3; do wait_for "$w/leakflag.$t"; done
	dump=$("$L" attach "$pid" --dump --out "$w/m" 2>"$w/err") || fail "loop dump: $(cat "$w/err")"
	"$SC" "$dump" >"$w/sc.out" 2>&1 || fail "stackcheck $dump"
	for t in 0 1 2 3; do
		n=$(awk -v s=$((4000 + t)) '$1 == s { c += $2 } END { print c + 0 }' "$w/sc.out")
		[ "$n" = 50 ] || fail "thread $t: $n blocks of $((4000 + t)) bytes, expected 50"
	done
	untouched "$pid" "the allocation loop"
	# patched and put back while the threads allocate: ten rounds
	expect "detach the loop" 0 "detached from process $pid: collection stopped, every GOT slot put back
" "" "$L" attach "$pid" --detach
	i=0
	while [ $i -lt 10 ]; do
		"$L" attach "$pid" --libs "$(basename "$T")/target\$" --out "$w/m" >/dev/null 2>"$w/err" ||
			fail "loop attach $i: $(cat "$w/err")"
		"$L" attach "$pid" --dump --out "$w/m" >/dev/null 2>"$w/err" || fail "loop dump $i: $(cat "$w/err")"
		"$L" attach "$pid" --detach >"$w/out" 2>"$w/err" || fail "loop detach $i: $(cat "$w/err")"
		i=$((i + 1))
	done
	untouched "$pid" "ten attach/dump/detach rounds with the real hook"
	# with reachability dumps every 50 ms: its pause stops the main thread in
	# a signal handler, which is never called in (it deadlocked)
	i=0
	while [ $i -lt 3 ]; do
		"$L" attach "$pid" --libs "$(basename "$T")/target\$" --reachability --interval 0.05 \
			--out "$w/rc" >/dev/null 2>"$w/err" || fail "reachability attach $i: $(cat "$w/err")"
		sleep 0.2
		"$L" attach "$pid" --dump --out "$w/rc" >/dev/null 2>"$w/err" ||
			fail "reachability dump $i: $(cat "$w/err")"
		"$L" attach "$pid" --detach >/dev/null 2>"$w/err" || fail "reachability detach $i: $(cat "$w/err")"
		i=$((i + 1))
	done
	untouched "$pid" "reachability rounds with the real hook"
fi

[ $fails = 0 ] || exit 1
echo "attach: options, messages, dumps, detach, system calls, signals and every error checked"
