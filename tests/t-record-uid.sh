#!/bin/sh
# record and processes that give up root (issue 32): a worker that becomes
# nobody writes its dump into the output directory record made (through
# the drop box, moved beside the others, the drop box then gone); into a
# directory it may not write, record says which process could not, why,
# and what to do.  Needs root (skipped otherwise).
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
unset LEAKSNAP_OUT LEAKSNAP_FRAMES LEAKSNAP_UNWIND LEAKSNAP_INTERVAL LEAKSNAP_ONLY LEAKSNAP_RUN \
	LEAKSNAP_DROP LD_PRELOAD
export LEAKSNAP_HOOK="$HOOK" LEAKSNAP_DUMP_ON_EXIT=all
if [ "$(id -u)" != 0 ]; then
	echo "not root: a process cannot give up root here"
	exit 77
fi
# (nobody must be able to pass through to the directories below)
chmod 711 "$w"
cd "$w"

# sizes PREFIX: "size count kind fn0" of each exit dump's program records
pids_of() { # PREFIX: the pids of its exit dumps
	for d in "$1".*.exit.dump; do
		[ -f "$d" ] || continue
		d=${d%.exit.dump}
		echo "${d##*.}"
	done
}

# 1. A directory record makes: both dumps there, the worker's owned by nobody.
out=$("$L" record --out "$w/made/p" -- "$T/dropuid" 2>"$w/made.err")
st=$?
[ $st = 0 ] || fail "made: record exit status $st"
[ "$out" = "dropuid ok" ] || fail "made: '$out'"
[ "$(stat -c %a "$w/made")" = 711 ] || fail "made: directory mode $(stat -c %a "$w/made"), expected 711"
n=$(ls "$w/made" | grep -c '\.exit\.dump$')
[ "$n" = 2 ] || { fail "made: $n exit dumps, expected 2"; ls -la "$w/made"; }
worker=
for p in $(pids_of "$w/made/p"); do
	d="$w/made/p.$p.exit.dump"
	[ -f "$w/made/p.$p.exit.maps" ] || fail "made: no maps beside $d"
	"$SC" "$d" >"$d.txt" || fail "$d: stackcheck failed"
	expect_record "$d.txt" "3001 1 app parent_leak main"
	if grep -q ' zygote ' "$d.txt"; then
		worker=$p
		expect_record "$d.txt" "3002 1 zygote worker_leak main"
		[ "$(stat -c %U "$d")" = nobody ] || fail "made: the worker's dump is owned by $(stat -c %U "$d")"
	fi
	grep -q -x "leaksnap: wrote $d: 2 records, [0-9]* bytes in 2 allocations" "$w/made.err" ||
		{ fail "made: $d not listed"; cat "$w/made.err"; }
done
[ -n "$worker" ] || fail "made: no dump of the worker"
grep -q "warning" "$w/made.err" && { fail "made: record warned"; cat "$w/made.err"; }
left=$(ls -A "$w/made" | grep -v '^p\.')
[ -z "$left" ] || fail "made: left in the directory: $left"

# 2. A directory that exists, root's, 755: the worker cannot write there,
# and record says so (the hook's own line on stderr too, as ever).
mkdir "$w/root"
chmod 755 "$w/root"
out=$("$L" record --out "$w/root/p" -- "$T/dropuid" 2>"$w/root.err")
st=$?
[ $st = 0 ] || fail "root: record exit status $st"
n=$(ls "$w/root" | grep -c '\.exit\.dump$')
[ "$n" = 1 ] || { fail "root: $n exit dumps, expected 1 (the parent's)"; ls -la "$w/root"; }
wp=$(sed -n 's/^leaksnap: cannot write .*\/p\.\([0-9]*\)\.exit\.dump: Permission denied$/\1/p' "$w/root.err")
[ -n "$wp" ] || { fail "root: no message of the hook's"; cat "$w/root.err"; }
want="leaksnap: $w/root/p: warning: process $wp (uid 65534) could not write its dump $w/root/p.$wp.exit.dump: Permission denied; give --out a directory that does not exist yet (record makes it so that every process of the run can write its dumps there), or one that uid 65534 may write to"
grep -q -x -F "$want" "$w/root.err" || { fail "root: record did not say who could not write"; cat "$w/root.err"; }
# (after the dumps written)
[ "$(tail -1 "$w/root.err")" = "$want" ] || { fail "root: the warning is not last"; cat "$w/root.err"; }

# 3. A note is taken only from the process it names (the kernel's
# credentials): one claiming another pid is dropped; one's own is said,
# with its own uid whatever the note claims.
cat >"$w/notes.py" <<'PYEOF'
import os, socket
run = os.environ["LEAKSNAP_RUN"].split(":")[-1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
addr = b"\0leaksnap-run." + run.encode()
s.sendto(b"cannot-write 1 0 13 /forged/p.1.0001.dump", addr)
s.sendto(("cannot-write %d 4242 28 /own/p.%d.0001.dump" % (os.getpid(), os.getpid())).encode(), addr)
print(os.getpid())
PYEOF
pid=$("$L" record --out "$w/notes/p" --no-exit-dump -- python3 "$w/notes.py" 2>"$w/notes.err")
grep -q forged "$w/notes.err" && { fail "notes: a forged note was said"; cat "$w/notes.err"; }
want="leaksnap: $w/notes/p: warning: process $pid (uid 0) could not write its dump /own/p.$pid.0001.dump: No space left on device"
grep -q -x -F "$want" "$w/notes.err" || { fail "notes: the process's own note was not said"; cat "$w/notes.err"; }

finish
