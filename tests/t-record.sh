#!/bin/sh
# record: runs the program with the hook preloaded and the hook's environment
# set; stdout, stdin and the exit status are the program's; signals are
# forwarded (SIGINT/SIGQUIT ignored; one record inherited ignored stays
# ignored); new dumps of any pid are listed in order, old and zero-padded
# numbers alike, the crash and exit dumps last, and unreadable ones warned
# about; nothing runs when a check fails.
# The real hook is not needed: LEAKSNAP_HOOK points to an empty library built
# here, and the programs write their "dumps" themselves (copies of a fixture).
# The test runs twice: as it was started, then with SIGHUP ignored (nohup, a
# CI runner that ignores it), which it must not depend on.
set -eu
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${T_RECORD_HUP_IGNORED-}" ]; then
	(trap '' HUP; T_RECORD_HUP_IGNORED=1 sh "$0" "$B") ||
		{ echo "FAIL: with SIGHUP ignored (above)"; exit 1; }
fi
ls_=$(cd "$B/bin" && pwd)/leaksnap
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-record.XXXXXX")
# Whatever fails, no process started here outlives the test: the
# background ones (record and its program) write their pids to $w/pids.
trap 'for p in $(cat "$w/pids" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || :; done; rm -rf "$w"' EXIT
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "no C compiler ($cc) to build a stand-in hook"; exit 77; }
"$B/tests/mkfixture" "$w/fx"
unset LEAKSNAP_OUT LEAKSNAP_FRAMES LEAKSNAP_UNWIND LEAKSNAP_INTERVAL LEAKSNAP_DUMP_ON_EXIT LEAKSNAP_ONLY \
	LEAKSNAP_RUN LD_PRELOAD
# An ASan build of leaksnap refuses to start with a foreign LD_PRELOAD.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

fail() { echo "FAIL: $*"; exit 1; }
# expect_eq WHAT GOT WANT
expect_eq() { [ "$2" = "$3" ] || { printf 'FAIL: %s\n got: %s\nwant: %s\n' "$1" "$2" "$3"; exit 1; }; }
# wait_for FILE: poll up to 10 s for FILE to exist and be non-empty.
wait_for() {
	i=0
	while [ ! -s "$1" ]; do
		i=$((i + 1)); [ $i -lt 200 ] || fail "timed out waiting for $1"; sleep 0.05
	done
}

printf 'int leaksnap_stand_in_hook;\n' > "$w/fake.c"
"$cc" -shared -fPIC -o "$w/fake.so" "$w/fake.c"
cp "$w/fake.so" "$w/other.so"
printf '#include <signal.h>\n#include <stdio.h>\nint main(void) { printf("%%d %%d\\n", SIGRTMAX - 17, SIGRTMAX - 19); return 0; }\n' > "$w/rt.c"
"$cc" -o "$w/rt" "$w/rt.c"
read -r sig_dump sig_toggle <<EOF
$("$w/rt")
EOF
export LEAKSNAP_HOOK="$w/fake.so"
mkdir "$w/d"
cd "$w"

# 1. stdout, stderr, stdin and the exit status are the program's.
out=$(echo in | "$ls_" record --out d/r -- sh -c 'cat; echo hi; echo note >&2; exit 3' 2>err) && st=0 || st=$?
expect_eq "exit status" "$st" 3
expect_eq "stdout" "$out" "$(printf 'in\nhi')"
expect_eq "stderr line 1" "$(sed -n 1p err)" "note"
sed -n 2p err | grep -q '^leaksnap: no dumps written as d/r\.PID\.\*\.dump (' || fail "no-dump line: $(cat err)"
[ "$(wc -l < err)" = 2 ] || fail "stderr: $(cat err)"

# 2. The hook's environment: absolute hook path first in LD_PRELOAD, absolute
#    LEAKSNAP_OUT, option values; options not given keep inherited values.
show_env='for v in LD_PRELOAD LEAKSNAP_OUT LEAKSNAP_FRAMES LEAKSNAP_UNWIND LEAKSNAP_INTERVAL LEAKSNAP_DUMP_ON_EXIT; do eval "echo $v=\${$v-unset}"; done'
LD_PRELOAD="$w/other.so" "$ls_" record --out d/r --frames 032 --unwind dwarf --interval .5 \
	--no-exit-dump -- sh -c "$show_env" > env 2>/dev/null
expect_eq "environment" "$(cat env)" "LD_PRELOAD=$w/fake.so:$w/other.so
LEAKSNAP_OUT=$w/d/r
LEAKSNAP_FRAMES=32
LEAKSNAP_UNWIND=dwarf
LEAKSNAP_INTERVAL=0.5
LEAKSNAP_DUMP_ON_EXIT=0"
(cd d && LEAKSNAP_OUT=../d/inherited LEAKSNAP_FRAMES=8 "$ls_" record sh -c "$show_env") > env 2>/dev/null
expect_eq "inherited environment" "$(cat env)" "LD_PRELOAD=$w/fake.so
LEAKSNAP_OUT=$w/d/inherited
LEAKSNAP_FRAMES=8
LEAKSNAP_UNWIND=unset
LEAKSNAP_INTERVAL=unset
LEAKSNAP_DUMP_ON_EXIT=unset"
"$ls_" record sh -c 'echo "$LEAKSNAP_OUT"' > env 2>/dev/null
expect_eq "default prefix" "$(cat env)" /tmp/leaksnap

# 3. Options end at the first non-option: the rest is CMD's.
out=$("$ls_" record --out d/r --frames 4 sh -c 'echo "$LEAKSNAP_FRAMES $0 $1"' --frames 9 2>/dev/null)
expect_eq "CMD's own options" "$out" "4 --frames 9"
out=$("$ls_" record --out d/r -- sh -c 'echo "$0"' -- 2>/dev/null)
expect_eq "a second -- is CMD's" "$out" "--"

# 4. Listing: new dumps of every pid, by pid then number (numerically, with
#    or without leading zeros), crash and exit dumps last; pre-existing
#    dumps, temporaries, maps files and symlinks are not listed; an
#    unreadable dump is a warning and the rest are still listed.
"$ls_" convert fx/sample64le.dump good.dump
cp good.dump d/r.1.1.dump
cp good.dump d/r.1.0002.dump
cat > prog.sh <<'SH'
cp good.dump "d/r.$$.2.dump"; cp good.dump "d/r.$$.10.dump"; cp good.dump "d/r.$$.exit.dump"
cp good.dump "d/r.$$.0009.dump"; cp good.dump "d/r.$$.00011.dump"; cp good.dump "d/r.$$.crash.dump"
cp good.dump "d/r.$$.0.dump"; cp good.dump "d/r.$$.1x.dump"; cp good.dump "d/r.$$.crash.dump.tmp"
cp good.dump "d/r.$$.2.maps"; cp good.dump "d/r.$$.3.dump.tmp"; ln -s ../good.dump "d/r.$$.4.dump"
echo garbage > "d/r.$$.3.dump"
sh -c 'cp good.dump "d/r.$$.1.dump"; echo $$ > child.pid'
echo $$ > parent.pid
exit 4
SH
"$ls_" record --out d/r -- sh prog.sh 2>err && st=0 || st=$?
expect_eq "exit status with dumps" "$st" 4
p=$(cat parent.pid) c=$(cat child.pid)
line() { echo "leaksnap: wrote d/r.$1.dump: 4 records, 16888 bytes in 17 allocations"; }
parent_lines=$(line "$p.2"; echo "leaksnap: d/r.$p.3.dump: warning: byte offset 0: unrecognized format"
	line "$p.0009"; line "$p.10"; line "$p.00011"; line "$p.crash"; line "$p.exit")
if [ "$p" -lt "$c" ]; then want=$(echo "$parent_lines"; line "$c.1"); else want=$(line "$c.1"; echo "$parent_lines"); fi
expect_eq "listing" "$(sed 's/\(unrecognized format\).*/\1/' err)" "$want"
# A second run lists only its own dumps.
"$ls_" record --out d/r -- sh -c 'cp good.dump "d/r.$$.0001.dump"; echo $$ > parent.pid' 2>err
expect_eq "second listing" "$(cat err)" "$(line "$(cat parent.pid)".0001)"

# 5. Killed by a signal: 128+N and one line naming it.
"$ls_" record --out d/r -- sh -c 'kill -TERM $$' 2>err && st=0 || st=$?
expect_eq "status when killed" "$st" 143
expect_eq "killed line" "$(sed -n 1p err)" "leaksnap: sh: killed by signal 15 (SIGTERM)"
"$ls_" record --out d/r -- sh -c "kill -$sig_dump \$\$" 2>err && st=0 || st=$?
expect_eq "status when killed by the dump signal" "$st" $((128 + sig_dump))
expect_eq "dump signal line" "$(sed -n 1p err)" "leaksnap: sh: killed by signal $sig_dump (SIGRTMAX-17)"
grep -q "no dumps written (the hook's signal killed the program" err || fail "hint: $(cat err)"

# 6. Signals sent to record: INT and QUIT ignored (record survives), the
#    others forwarded to the program, which decides.  The program is a shell,
#    which cannot trap a signal it started with ignored: record runs under
#    ./dfl, which gives SIGHUP, SIGTERM, SIGUSR1 and SIGUSR2 their defaults
#    whatever the test inherited.
printf '#include <signal.h>\n#include <unistd.h>\nint main(int c, char **v) { (void)c; int s[] = {SIGHUP, SIGTERM, SIGUSR1, SIGUSR2}; for (int i = 0; i < 4; i++) signal(s[i], SIG_DFL); execvp(v[1], v + 1); return 127; }\n' > dfl.c
"$cc" -o dfl dfl.c
cat > sig.sh <<SH
echo \$\$ >> pids
for s in USR1 USR2 HUP $sig_dump $sig_toggle; do trap "echo \$s >> log" \$s; done
trap 'echo TERM >> log; exit 9' TERM
echo ready > ready
while :; do sleep 0.05; done
SH
# Started in the background, the shell would ignore INT in the program too:
# the program inherits record's own dispositions, so this is what it sees.
: > log
./dfl "$ls_" record --out d/r -- sh sig.sh 2>err &
rp=$!
echo $rp >> pids
wait_for ready
n=0
for s in USR1 USR2 HUP $sig_dump $sig_toggle; do
	kill -s INT $rp; kill -s QUIT $rp
	kill -0 $rp || fail "record died of INT/QUIT"
	case $s in [0-9]*) kill -$s $rp ;; *) kill -s $s $rp ;; esac
	n=$((n + 1))
	i=0; while [ "$(wc -l < log)" -lt $n ]; do
		i=$((i + 1)); [ $i -lt 200 ] || fail "signal $s was not forwarded"; sleep 0.05
	done
done
kill -s TERM $rp
wait $rp && st=0 || st=$?
expect_eq "status after forwarded TERM" "$st" 9
expect_eq "forwarded signals" "$(cat log | tr '\n' ' ')" "USR1 USR2 HUP $sig_dump $sig_toggle TERM "
# An ignored SIGHUP (nohup) stays ignored in the program.
out=$( (trap '' HUP; "$ls_" record --out d/r -- sh -c 'kill -HUP $$; echo alive') 2>/dev/null)
expect_eq "inherited SIG_IGN" "$out" alive
# ... and in record: a SIGHUP sent to it is not passed on, even to a program
# that set a handler of its own.
cat > catch.c <<'C'
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static volatile sig_atomic_t got;
static void on(int sig) { got = sig; }
int main(void)
{
	int sigs[] = {SIGHUP, SIGUSR1, SIGTERM};
	for (int i = 0; i < 3; i++)
		signal(sigs[i], on);
	FILE *f = fopen("ready2", "w");
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (;;) {
		int s = got;
		got = 0;
		if (s == SIGTERM)
			return 7;
		if (s) {
			f = fopen("log2", "a");
			fprintf(f, "%s\n", s == SIGHUP ? "HUP" : "USR1");
			fclose(f);
		}
		usleep(10000);
	}
}
C
"$cc" -o catch catch.c
: > log2
(trap '' HUP; exec "$ls_" record --out d/r -- ./catch 2>/dev/null) &
rp=$!
echo $rp >> pids
wait_for ready2
cat ready2 >> pids
kill -s HUP $rp
kill -s USR1 $rp
wait_for log2
kill -0 $rp || fail "record died of an ignored SIGHUP"
kill -s TERM $rp
wait $rp && st=0 || st=$?
expect_eq "status with SIGHUP ignored" "$st" 7
expect_eq "signals passed on with SIGHUP ignored" "$(cat log2)" USR1
# An ignored SIGCHLD must not cost the exit status (auto-reaped children).
printf '#include <signal.h>\n#include <unistd.h>\nint main(int c, char **v) { (void)c; signal(SIGCHLD, SIG_IGN); execvp(v[1], v + 1); return 127; }\n' > ign.c
"$cc" -o ign ign.c
./ign "$ls_" record --out d/r -- sh -c 'exit 5' 2>/dev/null && st=0 || st=$?
expect_eq "status with SIGCHLD ignored" "$st" 5

# 7. Exec failures: 127 not found, 126 not executable; nothing listed.
"$ls_" record --out d/r -- no-such-command-here 2>err && st=0 || st=$?
expect_eq "not found" "$st:$(cat err)" "127:leaksnap: no-such-command-here: command not found"
"$ls_" record --out d/r -- "$w" 2>err && st=0 || st=$?
expect_eq "a directory" "$st:$(cat err)" "126:leaksnap: $w: Permission denied"
chmod 644 prog.sh
PATH="$w:$PATH" "$ls_" record --out d/r -- prog.sh 2>err && st=0 || st=$?
expect_eq "not executable in PATH" "$st:$(cat err)" "126:leaksnap: prog.sh: Permission denied"

# 8. Nothing runs when a check fails; the hook is looked for next to leaksnap.
for args in "--frames 0" "--unwind x" "--interval 0" "--out nodir/sub/r"; do
	# shellcheck disable=SC2086
	"$ls_" record $args -- touch ran 2>/dev/null && st=0 || st=$?
	expect_eq "status for $args" "$st" 2
	[ ! -e ran ] || fail "CMD ran despite $args"
done
# A directory of PREFIX that does not exist is made (its parent must be):
# private, or as root passable with a drop box in it (t-record-uid.sh).
"$ls_" record --out made/r -- true 2>err && st=0 || st=$?
expect_eq "--out made/r" "$st" 0
mode=$(stat -c %a made 2>/dev/null)
if [ "$(id -u)" = 0 ]; then want=711; else want=700; fi
expect_eq "made: its mode" "$mode" "$want"
[ -z "$(ls -A made 2>/dev/null)" ] || fail "made: not empty: $(ls -A made)"
LEAKSNAP_HOOK="$w/none.so" "$ls_" record --out d/r -- touch ran 2>err && st=0 || st=$?
expect_eq "missing hook" "$st" 2
grep -q "^leaksnap: $w/none.so: hook library not found" err || fail "missing hook: $(cat err)"
[ ! -e ran ]
mkdir "$w/a b" && cp fake.so "$w/a b/fake.so"
LEAKSNAP_HOOK="$w/a b/fake.so" "$ls_" record --out d/r -- touch ran 2>err && st=0 || st=$?
expect_eq "hook path with a space" "$st" 2
grep -q "LD_PRELOAD cannot carry" err || fail "space: $(cat err)"
mkdir -p inst/bin inst/lib
cp "$ls_" inst/bin/leaksnap
(unset LEAKSNAP_HOOK; inst/bin/leaksnap record --out d/r -- true) 2>err && st=0 || st=$?
expect_eq "hook not installed" "$st:$(cat err)" \
	"2:leaksnap: $w/inst/lib/libleakhook.so: hook library not found: No such file or directory (looked for next to leaksnap; set LEAKSNAP_HOOK=PATH to use another)"
cp fake.so inst/lib/libleakhook.so
ln -s inst/bin/leaksnap via-link
out=$(unset LEAKSNAP_HOOK; ./via-link record --out d/r -- sh -c 'echo "$LD_PRELOAD"' 2>/dev/null)
expect_eq "installed hook" "$out" "$w/inst/lib/libleakhook.so"

# 9. Hints when nothing was dumped.
"$ls_" record --out d/r --no-exit-dump -- true 2>err
grep -q '^leaksnap: no dumps written (--no-exit-dump was given' err || fail "hint: $(cat err)"
printf 'int main(void) { return 0; }\n' > st.c
if "$cc" -static -o static st.c 2>/dev/null; then
	"$ls_" record --out d/r -- ./static 2>err
	expect_eq "static hint" "$(cat err)" \
		"leaksnap: no dumps written (./static is statically linked: LD_PRELOAD cannot load the hook into it)"
else
	echo "no static libc: static-binary hint not tested"
fi
# The exit dump's name taken by a file from before the run (a pid used
# again): never replaced, and said by record itself (coreutils close
# standard error at exit, so the hook's own message is lost).  A new pid
# namespace makes the program's pid known: 2.
mkdir -p taken
if unshare -pf --mount-proc true 2>/dev/null; then
	echo mine > taken/p.2.exit.dump
	st=0; unshare -pf --mount-proc "$ls_" record --out taken/p -- ls / >/dev/null 2>err || st=$?
	expect_eq "taken exit name: status" "$st" 0
	expect_eq "taken exit name: kept" "$(cat taken/p.2.exit.dump)" mine
	expect_eq "taken exit name" "$(cat err)" \
		"leaksnap: taken/p: warning: taken/p.2.exit.dump was there before this run: the hook never replaces a file, so process 2's exit dump was not written"
else
	echo "unshare -pf is not allowed here: the taken exit-dump name is not tested"
fi
echo ok
