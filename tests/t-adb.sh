#!/bin/sh
# leaksnap adb, end to end through tests/fake-adb: enable and disable
# (malloc_debug and the hook), snapshots pulled from a real hooked process
# (am dumpheap -n text dumps written asynchronously, signal-47 dumps), the
# pulled snapshots compared by leakdiff, symbol files pulled into an AOSP
# layout and used by symbolize; snapshots streamed through adb forward from
# a control socket (--socket: a real hooked process through fake-adb's
# forwarder; the STAND-IN server, tests/tools/ctlserver.py, only for a body
# cut short or not a dump); every adb failure is one exact line and
# exit status 2.  Pids are shown as PID and the scratch directory as W.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
for tool in gcc python3 readelf strip; do
	command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
S=$w/state
umask 022
DEV=$S/device
APK=/data/app/~~Zm9v==/com.acme.app-YmFy==/base.apk
export FAKE_ADB_DIR=$S ADB=$top/tests/fake-adb FAKE_ADB_APP=$T/adbapp FAKE_ADB_HOOK=$HOOK \
	FAKE_ADB_LEAKSNAP=$L
unset ANDROID_SERIAL LEAKSNAP_ADB_TIMEOUT
cleanup() {
	for f in "$S"/pids/*; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
	[ -n "${npid:-}" ] && kill -9 "$npid" 2>/dev/null
	[ -n "${cpid:-}" ] && kill -9 "$cpid" 2>/dev/null
	for f in "$S"/forwards/*; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
	rm -rf "$w"
}
trap cleanup EXIT
mkdir -p "$S" "$DEV/data/data/com.acme.app" "$DEV/data/local/tmp" "$DEV$(dirname $APK)"
printf 'emulator-5554\tdevice\n' >"$S/devices"
echo "com.acme.app $APK" >"$S/packages"
printf 'PK\003\004 an APK\n' >"$DEV$APK"
cd "$w" || exit 1

# the line of the leak in the app's source
LEAKLINE=$(grep -n '/\* the leak \*/' "$top/tests/hook/adbapp.c" | cut -d: -f1)

apppid() { cat "$S/pids/com.acme.app" 2>/dev/null || echo NONE; }

# t NAME STATUS [VAR=VALUE...] -- ARGS...: run leaksnap ARGS with those
# variables set; stdout and stderr in NAME.out and NAME.err, normalized
# (pid of the app -> PID, scratch directory -> W) in NAME.nout, NAME.nerr.
t() {
	_n=$1 _want=$2
	shift 2
	_env=
	while [ "$1" != -- ]; do _env="$_env $1"; shift; done
	shift
	# shellcheck disable=SC2086
	env $_env "$L" "$@" >"$w/$_n.out" 2>"$w/$_n.err"
	_st=$?
	[ "$_st" = "$_want" ] || { fail "$_n: exit status $_st, expected $_want"; sed 's/^/    /' "$w/$_n.err"; }
	_p=$(apppid)
	for _k in out err; do
		sed -e "s|$w|W|g" -e "s/\b$_p\b/PID/g" "$w/$_n.$_k" >"$w/$_n.n$_k"
	done
}

# expect out|err NAME: the normalized output is stdin, exactly.
expect() {
	cat >"$w/expected"
	if ! cmp -s "$w/expected" "$w/$2.n$1"; then
		fail "$2: std$1 differs"
		diff -u "$w/expected" "$w/$2.n$1" | sed 's/^/    /' | head -20
	fi
}

# err1 NAME STATUS LINE [VAR=VALUE...] -- ARGS: exactly one line on
# stderr, nothing on stdout.
err1() {
	_n=$1 _st=$2 _line=$3
	shift 3
	t "$_n" "$_st" "$@"
	echo "$_line" | expect err "$_n"
	expect out "$_n" </dev/null
}

# Usage and the device: -------------------------------------------------
err1 no-adb 2 "leaksnap: adb: cannot run 'W/none': No such file or directory (set \$ADB or put adb on PATH)" \
	ADB=$w/none -- adb snapshot com.acme.app
: >"$S/devices"
err1 no-device 2 'leaksnap: adb: no devices/emulators found' -- adb disable com.acme.app
printf 'emulator-5554\tdevice\nemulator-5556\tdevice\n' >"$S/devices"
err1 two-devices 2 'leaksnap: adb: more than one device/emulator: choose one with -s SERIAL or $ANDROID_SERIAL' \
	-- adb snapshot com.acme.app
err1 serial-unknown 2 "leaksnap: adb: device 'nope' not found (2 attached)" -- adb -s nope disable com.acme.app
err1 serial-env-unknown 2 "leaksnap: adb: device 'nope' not found (2 attached)" \
	ANDROID_SERIAL=nope -- adb disable com.acme.app
printf 'emulator-5554\tunauthorized\nemulator-5556\toffline\n' >"$S/devices"
err1 unauthorized 2 "leaksnap: adb: device 'emulator-5554' is unauthorized: allow USB debugging on the device" \
	-- adb -s emulator-5554 enable com.acme.app
err1 offline 2 "leaksnap: adb: device 'emulator-5556' is offline" \
	ANDROID_SERIAL=emulator-5556 -- adb enable com.acme.app
printf 'emulator-5554\tdevice\nemulator-5556\tdevice\n' >"$S/devices"
: >"$S/log"
# -s after the action; $ANDROID_SERIAL loses to -s; adb found on PATH;
# adb's daemon start-up lines are no device.
mkdir bin && ln -s "$ADB" bin/adb
t serial-after 0 ADB= PATH=$w/bin:$PATH FAKE_ADB_DAEMON=1 ANDROID_SERIAL=emulator-5554 \
	-- adb disable com.acme.app -s emulator-5556
expect out serial-after <<'EOF'
wrap.com.acme.app: was not set
com.acme.app: running as pid PID without a wrapper
EOF
expect err serial-after </dev/null
grep -v -e '^devices$' -e '^-s emulator-5556 ' "$S/log" | sed 's/^/    unexpected: /' | grep . && fail "serial-after: commands not for emulator-5556"
printf 'emulator-5554\tdevice\n' >"$S/devices"

# Packages are checked before anything reaches the device.
: >"$S/log"
err1 bad-package 2 "leaksnap: adb: 'com.acme;reboot' is not a Java package name (like com.example.app) (see 'leaksnap adb --help')" \
	-- adb enable 'com.acme;reboot'
err1 bad-package-quote 2 "leaksnap: adb: 'a.b'c' is not a Java package name (like com.example.app) (see 'leaksnap adb --help')" \
	-- adb snapshot "a.b'c"
[ -s "$S/log" ] && fail "bad packages reached adb"
err1 not-installed 2 "leaksnap: adb: package 'com.other.app' is not installed" -- adb enable com.other.app
err1 hook-missing 2 "leaksnap: W/none.so: No such file or directory" -- adb enable com.acme.app --hook "$w/none.so"
err1 hook-not-elf 2 "leaksnap: W/state/devices: not an ELF shared library" \
	-- adb enable com.acme.app --hook "$S/devices"

# enable: refusals. --------------------------------------------------------
err1 not-debuggable 2 'leaksnap: adb: wrap.com.acme.app needs a debuggable app or a root shell (adb root): run-as: package not debuggable: com.acme.app' \
	FAKE_ADB_DEBUGGABLE=0 -- adb enable com.acme.app
err1 setprop-fails 2 "leaksnap: adb: Failed to set property 'wrap.com.acme.app' to 'LIBC_DEBUG_MALLOC_OPTIONS=backtrace=16 logwrapper'." \
	FAKE_ADB_SETPROP=fail -- adb enable com.acme.app
err1 setprop-ignored 2 "leaksnap: adb: setprop wrap.com.acme.app was refused: it reads ''" \
	FAKE_ADB_SETPROP=ignore -- adb enable com.acme.app
err1 old-android-long 2 "leaksnap: adb: the wrap.com.acme.app value 'LD_PRELOAD=/data/local/tmp/leakhook.com.acme.app.so LEAKSNAP_OUT=/data/data/com.acme.app/leaksnap' is 97 bytes: Android before 8.0 (this device: SDK 25) allows 91" \
	FAKE_ADB_SDK=25 -- adb enable com.acme.app --hook "$HOOK"
[ -e "$DEV/data/local/tmp/leakhook.com.acme.app.so" ] && fail "old-android-long: the hook was pushed"
t wrapper-ignored 2 FAKE_ADB_WRAP=ignore -- adb enable com.acme.app
expect err wrapper-ignored <<'EOF'
leaksnap: adb: com.acme.app (pid PID) did not start under malloc_debug: no LIBC_DEBUG_MALLOC_OPTIONS in its environment
EOF
t hook-ignored 2 FAKE_ADB_WRAP=ignore -- adb enable com.acme.app --hook "$HOOK"
expect err hook-ignored <<'EOF'
leaksnap: adb: com.acme.app (pid PID) did not start with the hook: no LD_PRELOAD of /data/local/tmp/leakhook.com.acme.app.so in its environment
EOF
t hook-not-loaded 2 FAKE_ADB_WRAP=noload -- adb enable com.acme.app --hook "$HOOK"
expect err hook-not-loaded <<'EOF'
leaksnap: adb: com.acme.app (pid PID) did not load /data/local/tmp/leakhook.com.acme.app.so (SELinux? adb root && adb shell setenforce 0)
EOF
# The property now names the hook, but the running app has none: signal 47
# would end it, so snapshot refuses before sending any, and the app lives.
p0=$(apppid)
t snap-noload 2 LEAKSNAP_ADB_TIMEOUT=2 -- adb snapshot com.acme.app --out "$w"
expect err snap-noload <<'EOF'
leaksnap: adb: com.acme.app (pid PID) does not map libleakhook.so (started before 'leaksnap adb enable', or the hook did not load): signal 47 would end it, so none is sent
EOF
kill -0 "$p0" 2>/dev/null || fail "snap-noload: the app was killed"
t no-start 2 FAKE_ADB_NO_START=1 LEAKSNAP_ADB_TIMEOUT=1 -- adb disable com.acme.app
tail -1 "$w/no-start.err" | grep -q -x "leaksnap: adb: com.acme.app did not start within 1 s" ||
	fail "no-start: $(cat "$w/no-start.err")"
rm -f "$S/props/wrap.com.acme.app"

# A long package name on Android 7: the property name is cut to 31 bytes,
# as the zygote cuts it; monkey starts the app where `cmd package` is missing.
echo "com.example.averylongapplicationname /data/app/long/base.apk" >>"$S/packages"
t old-android-name 0 FAKE_ADB_SDK=25 FAKE_ADB_NO_CMD=1 -- adb enable com.example.averylongapplicationname --frames 4
sed "s/$(cat "$S/pids/com.example.averylongapplicationname")/PID/" "$w/old-android-name.out" >"$w/old-android-name.nout"
expect out old-android-name <<'EOF'
wrap.com.example.averylongappli: LIBC_DEBUG_MALLOC_OPTIONS=backtrace=4 logwrapper
com.example.averylongapplicationname: running as pid PID with malloc_debug (backtrace=4)
EOF
grep -q "monkey' '-p' 'com.example.averylongapplicationname'" "$S/log" || fail "old-android-name: monkey not used"

# malloc_debug: enable, snapshots, leakdiff. --------------------------------
: >"$S/log"
t enable-md 0 -- adb enable com.acme.app
expect out enable-md <<'EOF'
wrap.com.acme.app: LIBC_DEBUG_MALLOC_OPTIONS=backtrace=16 logwrapper
com.acme.app: running as pid PID with malloc_debug (backtrace=16)
EOF
expect err enable-md </dev/null
tr '\0' '\n' <"/proc/$(apppid)/environ" | grep -q -x 'LIBC_DEBUG_MALLOC_OPTIONS=backtrace=16' ||
	fail "enable-md: the app's environment has no LIBC_DEBUG_MALLOC_OPTIONS"
# every argument that reaches the device shell is quoted
grep "shell 'setprop' 'wrap.com.acme.app' 'LIBC_DEBUG_MALLOC_OPTIONS=backtrace=16 logwrapper'" "$S/log" >/dev/null ||
	fail "enable-md: setprop not sent quoted"

mkdir md
echo keep >md/com.acme.app.$(apppid).1.txt
ln -s /nonexistent md/com.acme.app.$(apppid).2.txt
# The text dumps name device paths (the fake rewrites this host's paths).
LIB64=/usr/lib/x86_64-linux-gnu
APPDIR=/data/app/~~Zm9v==/com.acme.app-YmFy==/lib/x86_64
mkdir -p "$DEV/system/lib64" "$DEV$APPDIR"
cp "$LIB64/libc.so.6" "$LIB64/ld-linux-x86-64.so.2" "$DEV/system/lib64/"
cp "$T/adbapp" "$DEV$APPDIR/adbapp"
t snapshot-md 0 FAKE_ADB_REWRITE=$T/=$APPDIR/@$LIB64/=/system/lib64/ \
	-- adb snapshot com.acme.app --count 2 --interval 0.2 --out md
expect out snapshot-md <<'EOF'
md/com.acme.app.PID.3.txt
md/com.acme.app.PID.4.txt
EOF
expect err snapshot-md <<'EOF'
leaksnap: waiting for pid PID to write /data/local/tmp/leaksnap.com.acme.app.PID.1.txt
leaksnap: snapshot 1 of 2: md/com.acme.app.PID.3.txt
leaksnap: waiting for pid PID to write /data/local/tmp/leaksnap.com.acme.app.PID.2.txt
leaksnap: snapshot 2 of 2: md/com.acme.app.PID.4.txt
EOF
[ "$(cat md/com.acme.app.$(apppid).1.txt)" = keep ] || fail "snapshot-md: a file was overwritten"
[ -L md/com.acme.app.$(apppid).2.txt ] || fail "snapshot-md: a symlink was replaced"
ls "$DEV/data/local/tmp" | grep -q leaksnap && fail "snapshot-md: device copies left"
for f in md/*.3.txt md/*.4.txt; do
	"$L" show "$f" >"$f.show" || fail "$f: not readable"
	grep -q -x 'format:          android-text 1.2' "$f.show" || fail "$f: not an Android text dump"
	tail -1 "$f" | grep -q -x END || fail "$f: no END line"
	# as any file leaksnap writes (umask 022 here), not a temporary file's 0600
	[ "$(stat -c %a "$f")" = 644 ] || fail "$f: mode $(stat -c %a "$f"), expected 644"
done
"$L" diff md/*.3.txt md/*.4.txt >"$w/md.diff" || fail "leakdiff of the pulled text dumps failed"
grep -q -E '^  > #00 .*/data/app/~~Zm9v==/com.acme.app-YmFy==/lib/x86_64/adbapp\+0x[0-9a-f]+$' "$w/md.diff" ||
	{ fail "md leakdiff: the leak site is not the app's"; head -20 "$w/md.diff"; }
grep -q '^1 suspect grew by ' "$w/md.diff" || fail "md leakdiff: not exactly one suspect"

# symbols from the device for the text dumps (no build IDs in them).
t symbols-md 0 -- adb symbols md/*.3.txt md/*.4.txt --out syms-md
grep '/system/lib64/libc.so.6\|adbapp' "$w/symbols-md.nout" | sort >"$w/symbols-md.sel"
cat >"$w/expected" <<EOF
pulled $APPDIR/adbapp -> syms-md$APPDIR/adbapp (build ID unverified: the dump has none)
pulled /system/lib64/libc.so.6 -> syms-md/system/lib64/libc.so.6 (build ID unverified: the dump has none)
EOF
cmp -s "$w/expected" "$w/symbols-md.sel" || { fail "symbols-md"; cat "$w/symbols-md.out"; }
[ "$(stat -c %a "syms-md$APPDIR/adbapp")" = 644 ] || fail "symbols-md: mode $(stat -c %a "syms-md$APPDIR/adbapp")"
cmp -s "$T/adbapp" "syms-md$APPDIR/adbapp" || fail "symbols-md: the app's file differs from the device's"
"$L" symbolize --symbols syms-md md/*.4.txt >"$w/md.sym" 2>&1 || fail "symbolize with pulled symbols failed"
grep -q -E "^    #00 0x[0-9a-f]+  $APPDIR/adbapp\+0x[0-9a-f]+  app_leak  .*tests/hook/adbapp.c:$LEAKLINE:12\$" "$w/md.sym" ||
	{ fail "md symbolize: app_leak not found"; grep '#00' "$w/md.sym" | head -3; }

# Failures while snapshotting.
err1 snap-bad-out 2 "leaksnap: W/nodir: No such file or directory" -- adb snapshot com.acme.app --out "$w/nodir"
t dumpheap-fails 2 FAKE_ADB_DUMPHEAP=fail -- adb snapshot com.acme.app
expect err dumpheap-fails <<'EOF'
leaksnap: adb: Error: Unable to open file: /data/local/tmp/leaksnap.com.acme.app.PID.1.txt
EOF
t dumpheap-fails0 2 FAKE_ADB_DUMPHEAP=fail0 LEAKSNAP_ADB_TIMEOUT=20 -- adb snapshot com.acme.app
expect err dumpheap-fails0 <<'EOF'
leaksnap: adb: Error: Unable to open file: /data/local/tmp/leaksnap.com.acme.app.PID.1.txt
EOF
t dumpheap-off 2 FAKE_ADB_DUMPHEAP=off LEAKSNAP_ADB_TIMEOUT=20 -- adb snapshot com.acme.app --out md
expect err dumpheap-off <<'EOF'
leaksnap: adb: pid PID does not run malloc_debug with its backtrace option: /data/local/tmp/leaksnap.com.acme.app.PID.1.txt says 'Native heap dump not available' (was the app started before `leaksnap adb enable`, or by another way than the zygote?)
EOF
ls "$DEV/data/local/tmp" | grep -q leaksnap && fail "dumpheap-off: device copy left"
t dumpheap-badline 2 FAKE_ADB_DUMPHEAP=badline -- adb snapshot com.acme.app --out md
expect err dumpheap-badline <<'EOF'
leaksnap: waiting for pid PID to write /data/local/tmp/leaksnap.com.acme.app.PID.1.txt
leaksnap: adb: /data/local/tmp/leaksnap.com.acme.app.PID.1.txt: line 5: 'Total memory:' is not a decimal number (pulled, but not a readable dump)
EOF
t dumpheap-no-end 2 FAKE_ADB_DUMPHEAP=noend LEAKSNAP_ADB_TIMEOUT=2 -- adb snapshot com.acme.app --out md
sed -n '2s/ (last line: .*//p' "$w/dumpheap-no-end.nerr" | grep -q -x 'leaksnap: adb: pid PID did not finish /data/local/tmp/leaksnap.com.acme.app.PID.1.txt within 2 s' ||
	{ fail "dumpheap-no-end"; cat "$w/dumpheap-no-end.err"; }
[ "$(wc -l <"$w/dumpheap-no-end.err")" = 2 ] || fail "dumpheap-no-end: not two lines (waiting, error)"
ls "$DEV/data/local/tmp" | grep -q leaksnap && fail "dumpheap-no-end: device copy left"
# the copy cannot be removed either: still one line for the failure
t no-end-no-rm 2 FAKE_ADB_DUMPHEAP=noend FAKE_ADB_RM=denied LEAKSNAP_ADB_TIMEOUT=1 -- adb snapshot com.acme.app --out md
[ "$(wc -l <"$w/no-end-no-rm.err")" = 2 ] || { fail "no-end-no-rm: not two lines"; cat "$w/no-end-no-rm.err"; }
rm -f "$DEV"/data/local/tmp/leaksnap.*
# pulled, but the device copy stays: said, and the file is still listed
mkdir md3
t pulled-no-rm 2 FAKE_ADB_RM=denied -- adb snapshot com.acme.app --out md3
expect out pulled-no-rm <<'EOF'
md3/com.acme.app.PID.1.txt
EOF
printf '%s\n' "leaksnap: waiting for pid PID to write /data/local/tmp/leaksnap.com.acme.app.PID.1.txt" \
	"leaksnap: adb: rm: /data/local/tmp/leaksnap.com.acme.app.PID.1.txt: Permission denied" | expect err pulled-no-rm
rm -f "$DEV"/data/local/tmp/leaksnap.*
err1 no-process 2 'leaksnap: adb: no process 4194000 on the device' -- adb snapshot --pid 4194000

# malloc_debug for the whole device (no wrap property, nothing in the
# environment) is known by its library in the maps.
mv "$S/props/wrap.com.acme.app" "$w/wrap.saved"
mkdir md2
t md-by-maps 0 FAKE_ADB_ENVIRON=hidden FAKE_ADB_MAPS_MALLOC_DEBUG=1 -- adb snapshot com.acme.app --out md2
expect out md-by-maps <<'EOF'
md2/com.acme.app.PID.1.txt
EOF
"$L" show md2/com.acme.app.$(apppid).1.txt >/dev/null || fail "md-by-maps: not readable"
t md-not-by-maps 2 FAKE_ADB_ENVIRON=hidden -- adb snapshot com.acme.app --out md2
expect err md-not-by-maps <<'EOF'
leaksnap: adb: com.acme.app (pid PID) runs neither malloc_debug nor libleakhook.so (run 'leaksnap adb enable PACKAGE' first)
EOF
mv "$w/wrap.saved" "$S/props/wrap.com.acme.app"

# disable: undo, and snapshots then refused. -------------------------------
t disable-md 0 -- adb disable com.acme.app
expect out disable-md <<'EOF'
wrap.com.acme.app: cleared (was 'LIBC_DEBUG_MALLOC_OPTIONS=backtrace=16 logwrapper')
com.acme.app: running as pid PID without a wrapper
EOF
[ -e "$S/props/wrap.com.acme.app" ] && fail "disable-md: the property is still set"
t not-wrapped 2 -- adb snapshot com.acme.app
expect err not-wrapped <<'EOF'
leaksnap: adb: com.acme.app (pid PID) runs neither malloc_debug nor libleakhook.so (run 'leaksnap adb enable PACKAGE' first)
EOF
"$ADB" shell am force-stop com.acme.app
err1 not-running 2 "leaksnap: adb: com.acme.app is not running (start it, or 'leaksnap adb enable com.acme.app')" \
	-- adb snapshot com.acme.app

# The hook: enable, snapshots by package and by pid, leakdiff. --------------
t enable-hook 0 -- adb enable com.acme.app --hook "$HOOK" --frames 8
expect out enable-hook <<EOF
pushed $HOOK to /data/local/tmp/leakhook.com.acme.app.so
wrap.com.acme.app: LD_PRELOAD=/data/local/tmp/leakhook.com.acme.app.so LEAKSNAP_OUT=/data/data/com.acme.app/leaksnap LEAKSNAP_FRAMES=8
com.acme.app: running as pid PID with /data/local/tmp/leakhook.com.acme.app.so (dumps: /data/data/com.acme.app/leaksnap.PID.N.dump)
EOF
cmp -s "$HOOK" "$DEV/data/local/tmp/leakhook.com.acme.app.so" || fail "enable-hook: not pushed"
grep -q "$DEV/data/local/tmp/leakhook.com.acme.app.so" "/proc/$(apppid)/maps" || fail "enable-hook: the app has no hook"
# An --out where no file can be made: one line.
t ro-out 2 -- adb snapshot com.acme.app --out /proc
expect err ro-out <<'EOF'
leaksnap: /proc: cannot create a file: No such file or directory
EOF

mkdir hk
t snapshot-hook 0 -- adb snapshot com.acme.app --count 2 --interval 0.3 --out hk
expect out snapshot-hook <<'EOF'
hk/com.acme.app.PID.1.dump
hk/com.acme.app.PID.2.dump
EOF
grep -v '^leaksnap: waiting for pid PID to write /data/data/com.acme.app/leaksnap.PID.N.dump$' "$w/snapshot-hook.nerr" >"$w/snapshot-hook.nerr2"
printf '%s\n' "leaksnap: snapshot 1 of 2: hk/com.acme.app.PID.1.dump" "leaksnap: snapshot 2 of 2: hk/com.acme.app.PID.2.dump" |
	cmp -s - "$w/snapshot-hook.nerr2" || { fail "snapshot-hook: stderr"; cat "$w/snapshot-hook.err"; }
t snapshot-pid 0 -- adb snapshot --pid "$(apppid)" --out hk
expect out snapshot-pid <<'EOF'
hk/com.acme.app.PID.3.dump
EOF
ls hk | sed "s/$(apppid)/PID/" >"$w/hk.ls"
printf '%s\n' com.acme.app.PID.1.dump com.acme.app.PID.1.maps com.acme.app.PID.2.dump com.acme.app.PID.2.maps \
	com.acme.app.PID.3.dump com.acme.app.PID.3.maps | cmp -s - "$w/hk.ls" || { fail "hook files"; cat "$w/hk.ls"; }
[ -z "$(ls "$DEV/data/data/com.acme.app")" ] || fail "snapshot-hook: device copies left: $(ls "$DEV/data/data/com.acme.app")"
for i in 1 2 3; do
	f=hk/com.acme.app.$(apppid).$i.dump
	"$L" show "$f" >"$f.show" || fail "$f: not readable"
	grep -q -x '  trigger=signal' "$f.show" || fail "$f: not a signal dump"
	grep -q -x 'backtrace size:  8' "$f.show" || fail "$f: --frames 8 did not reach the hook"
	"$L" maps "${f%.dump}.maps" >/dev/null || fail "$f: its maps are not readable"
done
"$L" diff hk/*.1.dump hk/*.2.dump hk/*.3.dump >"$w/hk.diff" || fail "leakdiff of the pulled dumps failed"
grep -q '^1 suspect grew by ' "$w/hk.diff" || fail "hook leakdiff: not exactly one suspect"
# every leaked block is 48 bytes
sed -n 's/^1 suspect grew by \([0-9]*\) bytes, +\([0-9]*\) allocations$/\1 \2/p' "$w/hk.diff" | {
	read -r bytes count && [ "$bytes" -gt 0 ] && [ "$bytes" = $((48 * count)) ]
} || fail "hook leakdiff: growth is not 48 bytes a block"
grep -q -E "^  > #00 0x[0-9a-f]+  .*/adbapp\+0x[0-9a-f]+  app_leak  .*adbapp.c:$LEAKLINE:12$" "$w/hk.diff" ||
	{ fail "hook leakdiff: the site is not app_leak"; head -20 "$w/hk.diff"; }

t kill-denied 2 FAKE_ADB_KILL=denied -- adb snapshot com.acme.app --out hk
expect err kill-denied <<'EOF'
leaksnap: adb: /system/bin/sh: kill: PID: Operation not permitted
EOF
t runas-refused 2 FAKE_ADB_DEBUGGABLE=0 -- adb snapshot com.acme.app --out hk
expect err runas-refused <<'EOF'
leaksnap: adb: signalling pid PID and reading its dumps need a debuggable app or a root shell (adb root): run-as: package not debuggable: com.acme.app
EOF
expect out runas-refused </dev/null
t root 0 FAKE_ADB_ROOT=1 FAKE_ADB_DEBUGGABLE=0 -- adb snapshot com.acme.app --out hk
grep -q -x 'hk/com.acme.app.PID.4.dump' "$w/root.nout" || fail "root: $(cat "$w/root.out")"
# On a file system without hard links (libnolink.so) the pulled pair is
# renamed into place, the next free number, no temporary left.
t nolink 0 FAKE_ADB_ROOT=1 LD_PRELOAD=$T/libnolink.so \
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 -- adb snapshot com.acme.app --out hk
expect out nolink <<'EOF'
hk/com.acme.app.PID.5.dump
EOF
[ -s "hk/com.acme.app.$(apppid).5.maps" ] || fail "nolink: no maps"
[ -z "$(ls -A hk | grep -v -E '^com\.acme\.app\.[0-9]+\.[1-5]\.(dump|maps)(\.show)?$')" ] ||
	fail "nolink: other files in hk: $(ls -A hk)"

# A native program the shell runs with the hook (no app, no run-as): --pid,
# its LEAKSNAP_OUT from its environment, files named after its executable.
mkdir "$DEV/data/local/tmp/native" # LEAKSNAP_OUT a directory: the dumps are .PID.N.dump
LD_PRELOAD=$HOOK LEAKSNAP_OUT=$DEV/data/local/tmp/native/ "$T/adbapp" </dev/null >/dev/null 2>&1 &
npid=$!
sleep 0.3
: >"$S/log"
mkdir nat
t native 0 FAKE_ADB_DEBUGGABLE=0 -- adb snapshot --pid "$npid" --out nat
echo "nat/adbapp.$npid.1.dump" | expect out native
grep -q run-as "$S/log" && fail "native: run-as used for a native program"
"$L" show "nat/adbapp.$npid.1.dump" | grep -q -x '  trigger=signal' || fail "native: not a signal dump"
[ -f "nat/adbapp.$npid.1.maps" ] || fail "native: no maps pulled"
[ -z "$(ls -A "$DEV/data/local/tmp/native")" ] || fail "native: device copies left: $(ls -A "$DEV/data/local/tmp/native")"
kill -9 "$npid"
# A LEAKSNAP_OUT the hook takes (under 4032 bytes) but this tool does not
# (over 400): said, not replaced by the default.
long=$DEV/data/local/tmp/$(printf '%0420d' 0)
LD_PRELOAD=$HOOK LEAKSNAP_OUT=$long "$T/adbapp" </dev/null >/dev/null 2>&1 &
npid=$!
sleep 0.3
t native-long 2 FAKE_ADB_DEBUGGABLE=0 -- adb snapshot --pid "$npid" --out nat
echo "leaksnap: adb: LEAKSNAP_OUT of pid $npid is ${#long} bytes long: this tool takes up to 400" |
	expect err native-long
kill -9 "$npid"

# A hook that LEAKSNAP_ONLY left inert maps but catches no signal 47: it
# would end the process, so none is sent, and the process lives.
LD_PRELOAD=$HOOK LEAKSNAP_ONLY=nomatch LEAKSNAP_OUT=$DEV/data/local/tmp/native/ "$T/adbapp" </dev/null >/dev/null 2>&1 &
npid=$!
sleep 0.3
t native-inert 2 FAKE_ADB_DEBUGGABLE=0 -- adb snapshot --pid "$npid" --out nat
echo "leaksnap: adb: adbapp (pid $npid) maps the hook but does not catch signal 47 (the in-app collector is not started, or LEAKSNAP_ONLY left the hook inert): signal 47 would end it, so none is sent" |
	expect err native-inert
kill -0 "$npid" 2>/dev/null || fail "native-inert: the process was killed"
kill -9 "$npid"

# The in-app collector (libleakhook-inapp.so), known by its library in the
# maps: started (LEAKSNAP_LIBS), its dumps are taken from its LEAKSNAP_OUT;
# loaded and not started, it catches no signal 47 and none is sent.
INAPP=$(dirname "$HOOK")/libleakhook-inapp.so
mkdir "$DEV/data/local/tmp/inapp"
LD_PRELOAD=$INAPP LEAKSNAP_LIBS=/adbapp LEAKSNAP_OUT=$DEV/data/local/tmp/inapp/app "$T/adbapp" </dev/null >/dev/null 2>&1 &
npid=$!
sleep 0.3
t native-inapp 0 FAKE_ADB_DEBUGGABLE=0 -- adb snapshot --pid "$npid" --out nat
echo "nat/adbapp.$npid.1.dump" | expect out native-inapp
"$L" show "nat/adbapp.$npid.1.dump" | grep -q -x '  collector=inapp' || fail "native-inapp: not an in-app dump"
[ -z "$(ls -A "$DEV/data/local/tmp/inapp")" ] || fail "native-inapp: device copies left"
kill -9 "$npid"
# Its environment unreadable: told by the maps alone, dumps looked for
# under the default prefix (a native program's, /data/local/tmp/leaksnap).
LD_PRELOAD=$INAPP LEAKSNAP_LIBS=/adbapp LEAKSNAP_OUT=$DEV/data/local/tmp/leaksnap "$T/adbapp" </dev/null >/dev/null 2>&1 &
npid=$!
sleep 0.3
t native-inapp-maps 0 FAKE_ADB_DEBUGGABLE=0 FAKE_ADB_ENVIRON=hidden -- adb snapshot --pid "$npid" --out nat
echo "nat/adbapp.$npid.1.dump" | expect out native-inapp-maps
kill -9 "$npid"
LD_PRELOAD=$INAPP "$T/adbapp" </dev/null >/dev/null 2>&1 &
npid=$!
sleep 0.3
t native-inapp-idle 2 FAKE_ADB_DEBUGGABLE=0 -- adb snapshot --pid "$npid" --out nat
echo "leaksnap: adb: adbapp (pid $npid) maps the hook but does not catch signal 47 (the in-app collector is not started, or LEAKSNAP_ONLY left the hook inert): signal 47 would end it, so none is sent" |
	expect err native-inapp-idle
kill -0 "$npid" 2>/dev/null || fail "native-inapp-idle: the process was killed"
kill -9 "$npid"

# symbols: build IDs checked, nothing pulled twice. ------------------------
t symbols 0 -- adb symbols hk/*.1.dump hk/*.3.dump --out syms
sed "s|$T|T|g; s|W/state/device|DEV|g" "$w/symbols.nout" | sort >"$w/symbols.sorted"
sort >"$w/expected" <<'EOF'
pulled T/adbapp -> symsT/adbapp (build ID match)
pulled /usr/lib/x86_64-linux-gnu/libc.so.6 -> syms/usr/lib/x86_64-linux-gnu/libc.so.6 (build ID match)
pulled /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 -> syms/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 (build ID match)
pulled DEV/data/local/tmp/leakhook.com.acme.app.so -> symsDEV/data/local/tmp/leakhook.com.acme.app.so (build ID match)
4 pulled, 0 already there
EOF
cmp -s "$w/expected" "$w/symbols.sorted" || { fail "symbols"; diff "$w/expected" "$w/symbols.sorted"; }
t symbols-again 0 -- adb symbols hk/*.2.dump --out syms
tail -1 "$w/symbols-again.out" | grep -q -x '0 pulled, 4 already there' || fail "symbols-again: $(cat "$w/symbols-again.out")"
grep -c '^have ' "$w/symbols-again.out" | grep -q -x 4 || fail "symbols-again: not four 'have' lines"
# nothing to pull: no adb, no device needed
t symbols-no-adb 0 ADB=$w/none -- adb symbols hk/*.2.dump --out syms
tail -1 "$w/symbols-no-adb.out" | grep -q -x '0 pulled, 4 already there' || fail "symbols-no-adb"
"$L" symbolize -v --symbols syms hk/*.2.dump >"$w/hk.sym" 2>&1 || fail "symbolize with pulled symbols failed"
for m in /usr/lib/x86_64-linux-gnu/libc.so.6 "$T/adbapp"; do
	grep -q -x "  $m  syms$m  (build-id match)" "$w/hk.sym" || fail "symbolize -v: $m not from the pulled tree"
done
grep -q -E "^    #00 0x[0-9a-f]+  .*/adbapp\+0x[0-9a-f]+  app_leak  .*adbapp.c:$LEAKLINE:12$" "$w/hk.sym" || fail "symbolize: app_leak"
# a --symbols tree holding the app already: it is not pulled again
mkdir -p "have$T" && cp "$T/adbapp" "have$T/adbapp"
t symbols-have 0 -- adb symbols hk/*.1.dump --symbols have --out syms2
sed "s|$T|T|g" "$w/symbols-have.nout" | grep -e adbapp -e pulled, >"$w/symbols-have.sel"
printf '%s\n' "have T/adbapp: haveT/adbapp (build ID match)" "3 pulled, 1 already there" |
	cmp -s - "$w/symbols-have.sel" || { fail "symbols-have"; cat "$w/symbols-have.out"; }

# Device paths (AOSP layout), a stale device file, a refused pull, an APK
# and an unsafe name, through a dump whose maps were rewritten.
d1=$(ls hk/*.1.dump)
"$L" convert --rewrite-prefix /usr/lib/x86_64-linux-gnu/=/system/lib64/ "$d1" dev.dump || fail "convert"
cp /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$DEV/system/lib64/"
cp "$T/adbapp" "$DEV/system/lib64/libc.so.6" # another build at the path
t symbols-stale 2 FAKE_ADB_PULL_DENIED=$T/adbapp -- adb symbols dev.dump --out syms3
id=$("$L" show dev.dump | sed -n 's|^  build_id=\([0-9a-f]*\) /system/lib64/libc.so.6$|\1|p')
got=$("$L" show "$d1" | sed -n "s|^  build_id=\([0-9a-f]*\) $T/adbapp\$|\1|p")
grep -v '^pulled ' "$w/symbols-stale.nerr" >"$w/symbols-stale.e"
cat >"$w/expected" <<EOF
leaksnap: adb: failed to stat remote object '$T/adbapp': Permission denied
leaksnap: adb: /system/lib64/libc.so.6: the device's file has build ID $got, the dump's is $id: not kept
EOF
cmp -s "$w/expected" "$w/symbols-stale.e" || { fail "symbols-stale: stderr"; diff "$w/expected" "$w/symbols-stale.e"; }
grep -q -x 'pulled /system/lib64/ld-linux-x86-64.so.2 -> syms3/system/lib64/ld-linux-x86-64.so.2 (build ID match)' \
	"$w/symbols-stale.out" || fail "symbols-stale: ld.so not pulled into the AOSP layout"
tail -1 "$w/symbols-stale.out" | grep -q -x '2 pulled, 0 already there, 2 failed' || fail "symbols-stale: $(tail -1 "$w/symbols-stale.out")"
[ -e syms3/system/lib64/libc.so.6 ] && fail "symbols-stale: the stale file was kept"
ls -a syms3/system/lib64 | grep -q leaksnap-adb && fail "symbols-stale: a temporary file was left"
# a file of another build already at the destination is never replaced
cp "$T/adbapp" syms3/system/lib64/libc.so.6
cp "$LIB64/libc.so.6" "$DEV/system/lib64/libc.so.6"
t symbols-taken 2 -- adb symbols dev.dump --out syms3
echo "leaksnap: adb: syms3/system/lib64/libc.so.6 exists and is not the dump's build: not replaced (remove it, or use another --out)" |
	expect err symbols-taken
grep -v '^have ' "$w/symbols-taken.out" >"$w/symbols-taken.sel"
printf '%s\n' "pulled $T/adbapp -> syms3$T/adbapp (build ID match)" "1 pulled, 2 already there, 1 failed" |
	cmp -s - "$w/symbols-taken.sel" || { fail "symbols-taken"; cat "$w/symbols-taken.out"; }
cmp -s "$T/adbapp" syms3/system/lib64/libc.so.6 || fail "symbols-taken: the file at the destination changed"

printf '%s\n' "10000000-10001000 r-xp 00001000 fe:01 7 $APK" \
	"10002000-10003000 r-xp 00000000 fe:01 8 /system/../../etc/passwd" \
	"10004000-10005000 r-xp 00000000 fe:01 9 /system/lib64/c1$(printf '\302\233')x.so" \
	"10006000-10007000 r-xp 00000000 fe:01 10 /system/lib64/ff$(printf '\377')x.so" >evil.maps
cat "${d1%.dump}.maps" >>evil.maps
"$L" convert --maps evil.maps "$d1" evil.dump 2>/dev/null || fail "convert evil"
t symbols-apk 0 -- adb symbols evil.dump --out syms
expect err symbols-apk <<'EOF'
leaksnap: evil.dump: warning: module '/system/../../etc/passwd' is not a plain device path: not pulled
leaksnap: evil.dump: warning: module '/system/lib64/c1\xc2\x9bx.so' is not a plain device path: not pulled
leaksnap: evil.dump: warning: module '/system/lib64/ff\xffx.so' is not a plain device path: not pulled
EOF
grep -x "pulled $APK -> syms$APK (an APK: no build ID)" "$w/symbols-apk.out" >/dev/null || fail "symbols-apk: $(cat "$w/symbols-apk.out")"
tail -1 "$w/symbols-apk.out" | grep -q -x '1 pulled, 4 already there' || fail "symbols-apk: $(tail -1 "$w/symbols-apk.out")"
cmp -s "$DEV$APK" "syms$APK" || fail "symbols-apk: APK content"
[ -e syms/etc/passwd ] && fail "symbols-apk: an unsafe path was written"
ls syms/system/lib64 2>/dev/null | grep -q -a 'x\.so$' && fail "symbols-apk: a name with a C1 or non-UTF-8 byte was written"

# The app's library run straight from its APK, stripped there: symbols pulls
# the APK, and symbolize then finds the unstripped library in the app's build
# directory through the APK entry's build ID -- no AOSP tree.
cat >apklib.c <<'EOF'
static inline int apk_twice(int x)
{
	return x * 2 + (x >> 4); /* LINE apk_twice */
}

__attribute__((noinline)) int apk_leaf(int x)
{
	return apk_twice(x) ^ 0x55; /* LINE apk_leaf */
}
EOF
mkdir -p appbuild/obj
gcc -g -O2 -shared -fPIC -Wl,-z,max-page-size=4096 -Wl,--build-id -o appbuild/obj/libapk.so apklib.c ||
	fail "cannot build the library"
strip -o libapk-stripped.so appbuild/obj/libapk.so
APK2=/data/app/~~YmFy==/com.acme.native-Zm9v==/base.apk
mkdir -p "$DEV$(dirname $APK2)"
off=$(python3 "$top/tests/tools/mkapk.py" "$DEV$APK2" libapk-stripped.so lib/x86_64/libapk.so) ||
	fail "cannot make the APK"
fn=$(readelf -sW appbuild/obj/libapk.so | awk '$8 == "apk_leaf" { print $2; exit }')
fnoff=
# the function's file offset, through the PT_LOAD that holds it
readelf -lW appbuild/obj/libapk.so | awk '$1 == "LOAD" { print $2, $3, $5 }' >loads
while read -r o v s; do
	[ $((0x$fn)) -ge $((v)) ] && [ $((0x$fn)) -lt $((v + s)) ] && fnoff=$((0x$fn - v + o))
done <loads
base=$((0x7f0000000000))
end=$((base + ($(stat -c %s libapk-stripped.so) + 4095) / 4096 * 4096))
pc=$(printf '%x' $((base + fnoff + 5)))
{
	printf 'Android Native Heap Dump v1.2\n\nTotal memory: 96\nAllocation records: 1\nBacktrace size: 1\n\n'
	printf 'z 0  sz       96  num    1  bt %s\n' "$pc"
	printf 'MAPS\n'
	printf '%x-%x r-xp %08x fd:01 77   %s\n' $base $end "$off" "$APK2"
	printf 'END\n'
} >apk.txt
t symbols-app-apk 0 -- adb symbols apk.txt --out syms-apk
printf '%s\n' "pulled $APK2 -> syms-apk$APK2 (an APK: no build ID)" "1 pulled, 0 already there" |
	expect out symbols-app-apk
line_of() { grep -n "LINE $1" apklib.c | cut -d: -f1; }
"$L" symbolize -v --symbols syms-apk --symbols appbuild apk.txt >apk.sym 2>&1 || fail "symbolize apk.txt"
grep -q -x "  $APK2!/lib/x86_64/libapk.so  appbuild/obj/libapk.so  (build-id match)" apk.sym &&
	grep -q -E "^    #00 0x0*$pc  $APK2\\+0x[0-9a-f]+  apk_twice  $w/apklib.c:$(line_of apk_twice):[0-9]+\$" apk.sym &&
	grep -q -E "^        inlined into  apk_leaf  $w/apklib.c:$(line_of apk_leaf):[0-9]+\$" apk.sym ||
	{ fail "symbolize through the pulled APK"; sed -n '/^#1/,$p' apk.sym; }
# without the pulled APK the library is unknown
"$L" symbolize --symbols appbuild apk.txt >noapk.sym 2>&1
grep -q -E "^    #00 0x0*$pc  $APK2\\+0x[0-9a-f]+  \\(no symbol file\\)\$" noapk.sym ||
	{ fail "symbolize without the APK"; sed -n '/^#1/,$p' noapk.sym; }

# disable with the hook: property cleared, the pushed hook removed. --------
t disable-hook 0 -- adb disable com.acme.app
expect out disable-hook <<'EOF'
wrap.com.acme.app: cleared (was 'LD_PRELOAD=/data/local/tmp/leakhook.com.acme.app.so LEAKSNAP_OUT=/data/data/com.acme.app/leaksnap LEAKSNAP_FRAMES=8')
removed /data/local/tmp/leakhook.com.acme.app.so
com.acme.app: running as pid PID without a wrapper
EOF
[ -e "$DEV/data/local/tmp/leakhook.com.acme.app.so" ] && fail "disable-hook: the hook is still on the device"
grep -q leakhook "/proc/$(apppid)/maps" && fail "disable-hook: the app still has the hook"

# An enable whose property is refused after the push leaves no hook behind;
# a hook left on the device by other means goes with the next disable.
t enable-refused 2 FAKE_ADB_SETPROP=fail -- adb enable com.acme.app --hook "$HOOK"
expect out enable-refused <<EOF
pushed $HOOK to /data/local/tmp/leakhook.com.acme.app.so
removed /data/local/tmp/leakhook.com.acme.app.so
EOF
[ -e "$DEV/data/local/tmp/leakhook.com.acme.app.so" ] && fail "enable-refused: the hook is still on the device"
cp "$HOOK" "$DEV/data/local/tmp/leakhook.com.acme.app.so"
t disable-leftover 0 -- adb disable com.acme.app
expect out disable-leftover <<'EOF'
wrap.com.acme.app: was not set
removed /data/local/tmp/leakhook.com.acme.app.so
com.acme.app: running as pid PID without a wrapper
EOF
[ -e "$DEV/data/local/tmp/leakhook.com.acme.app.so" ] && fail "disable-leftover: the hook is still on the device"
# snapshot --socket: streamed from the control socket through adb forward
# (fake-adb's forwarder, tests/tools/adbforward.py, bridges to this host's
# abstract socket).  The app is a REAL hooked process: tests/hook/ctlprog
# under the hook with LEAKSNAP_CONTROL=1, its heap known to the byte.  The
# STAND-IN server (tests/tools/ctlserver.py) is kept only for what a real
# hook never sends: a dump's body cut short, a body that is not a dump. ---
old_app=$(apppid)
# app_ctl ENV...: ctlprog as the app com.acme.app (its stdin the fifo on fd 9)
app_ctl() {
	[ -n "${cpid:-}" ] && { kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null; }
	exec 9>&-
	rm -f ctl.in ctl.out
	mkfifo ctl.in
	env LD_PRELOAD="$HOOK" LEAKSNAP_DUMP_ON_EXIT=0 "$@" "$T/ctlprog" <ctl.in >ctl.out 2>&1 &
	cpid=$!
	exec 9>ctl.in
	_i=0
	while ! grep -q '^ready ' ctl.out && [ $_i -lt 400 ]; do sleep 0.05; _i=$((_i + 1)); done
	grep -q "^ready $cpid\$" ctl.out || fail "ctlprog did not start: $(cat ctl.out)"
	echo "$cpid" >"$S/pids/com.acme.app"
}
serve_ctl() { # ARGS...: the stand-in as the app com.acme.app
	[ -n "${cpid:-}" ] && { kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null; }
	rm -f ctl.ready
	python3 "$top/tests/tools/ctlserver.py" --ready "$w/ctl.ready" --dump served.dump "$@" &
	cpid=$!
	_i=0
	while [ ! -s ctl.ready ] && [ $_i -lt 400 ]; do sleep 0.05; _i=$((_i + 1)); done
	echo "$cpid" >"$S/pids/com.acme.app"
}
# closed PORT: nothing listens on 127.0.0.1:PORT any more
closed() {
	python3 -c 'import socket, sys
s = socket.socket()
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(0)
sys.exit(1)' "$1"
}
app_ctl LEAKSNAP_CONTROL=1
mkdir sock
: >"$S/log"
t socket 0 -- adb snapshot com.acme.app --socket --count 2 --interval 0 --out sock
expect out socket <<'EOF'
sock/com.acme.app.PID.1.dump
sock/com.acme.app.PID.2.dump
EOF
expect err socket <<'EOF'
leaksnap: snapshot 1 of 2: sock/com.acme.app.PID.1.dump
leaksnap: snapshot 2 of 2: sock/com.acme.app.PID.2.dump
EOF
for n in 1 2; do
	f=sock/com.acme.app.$cpid.$n.dump
	"$L" show "$f" >sock$n.show 2>&1 || fail "socket: show cannot read $f: $(head -2 sock$n.show)"
	grep -q -x 'records:         3 (8 allocations, 545297 bytes)' sock$n.show ||
		fail "socket: $f: $(grep '^records:' sock$n.show)"
	grep -q -x "pid:             $cpid" sock$n.show || fail "socket: $f: $(grep '^pid:' sock$n.show)"
	expect_meta "$f" "trigger=control"
	expect_meta "$f" "control=@leaksnap.$cpid"
done
"$SC" "sock/com.acme.app.$cpid.2.dump" >sock.sc 2>&1
expect_record sock.sc "3001 5 app keep_a main"
expect_record sock.sc "3002 2 app keep_b main"
[ "$(grep -c . sock.sc)" = 3 ] || fail "socket: records other than ctlprog's: $(cat sock.sc)"
port=$(sed -n 's/^-s emulator-5554 forward --remove tcp:\([0-9]*\)$/\1/p' "$S/log")
grep -v -e '^devices$' -e '^-s emulator-5554 shell ' "$S/log" | sed "s/\b$cpid\b/PID/; s/\b$port\b/PORT/" >socket.cmds
printf '%s\n' "-s emulator-5554 forward tcp:0 localabstract:leaksnap.PID" \
	"-s emulator-5554 forward --remove tcp:PORT" | cmp -s - socket.cmds ||
	{ fail "socket: adb commands"; sed 's/^/    /' socket.cmds; }
[ -n "$(ls "$S/forwards")" ] && fail "socket: a forward was left: $(ls "$S/forwards")"
closed "$port" || fail "socket: 127.0.0.1:$port still forwarded"
ls -a sock | grep -q '^\.leaksnap' && fail "socket: a temporary was left"
# the process counts both dumps as sent whole
[ "$("$L" ctl "$cpid" stats --json | sed -n 's/.*"dumps_written":\([0-9]*\).*/\1/p')" = 2 ] ||
	fail "socket: the process says $("$L" ctl "$cpid" stats --json)"
# --pid, and a name taken: the next number; what the process holds now
echo 'alloc 10 5000' >&9
_i=0
while ! grep -q '^ok$' ctl.out && [ $_i -lt 400 ]; do sleep 0.05; _i=$((_i + 1)); done
t socket-pid 0 -- adb snapshot --pid "$cpid" --socket --out sock
echo "sock/com.acme.app.PID.3.dump" | expect out socket-pid
"$L" show "sock/com.acme.app.$cpid.3.dump" 2>&1 | grep -q -x 'records:         4 (18 allocations, 595297 bytes)' ||
	fail "socket-pid: $("$L" show "sock/com.acme.app.$cpid.3.dump" 2>&1 | grep '^records:')"
[ -n "$(ls "$S/forwards")" ] && fail "socket-pid: a forward was left: $(ls "$S/forwards")"
cp "sock/com.acme.app.$cpid.1.dump" served.dump
# a hooked app without LEAKSNAP_CONTROL: no socket (through a forward a
# refusal looks the same), and the forward is removed all the same
app_ctl
: >"$S/log"
err1 socket-none 2 "leaksnap: adb: pid PID: connection closed at once: no control socket (start the program with LEAKSNAP_CONTROL=1), or the process belongs to another user" \
	-- adb snapshot com.acme.app --socket --out sock
[ -n "$(ls "$S/forwards")" ] && fail "socket-none: a forward was left: $(ls "$S/forwards")"
port=$(sed -n 's/^-s emulator-5554 forward --remove tcp:\([0-9]*\)$/\1/p' "$S/log")
{ [ -n "$port" ] && closed "$port"; } || fail "socket-none: the forward of port '$port' not removed"
ls sock | grep -q "\.$cpid\." && fail "socket-none: a file was written"
exec 9>&-
# the stand-in: a body cut short, a body that is not a dump
serve_ctl --mode closebody
size=$(wc -c <served.dump)
err1 socket-closed 2 "leaksnap: adb: pid PID: connection closed early (after $((size / 2)) of $size bytes of the dump)" \
	-- adb snapshot com.acme.app --socket --out sock
ls sock | grep -q "\.$cpid\." && fail "socket-closed: a file was written"
serve_ctl --mode garbage
t socket-garbage 2 -- adb snapshot com.acme.app --socket --out sock
grep -q "^leaksnap: adb: the dump of pid PID's control socket: .* (pulled, but not a readable dump)\$" socket-garbage.nerr ||
	{ fail "socket-garbage: stderr"; cat socket-garbage.nerr; }
kill "$cpid" 2>/dev/null
wait "$cpid" 2>/dev/null
cpid=
echo "$old_app" >"$S/pids/com.acme.app"

# enable --control: the wrap property opens the control socket too, so that
# snapshot --socket reaches the app with nothing else set; malloc_debug has
# no socket.
t enable-control 0 -- adb enable com.acme.app --hook "$HOOK" --control
expect out enable-control <<EOF
pushed $HOOK to /data/local/tmp/leakhook.com.acme.app.so
wrap.com.acme.app: LD_PRELOAD=/data/local/tmp/leakhook.com.acme.app.so LEAKSNAP_OUT=/data/data/com.acme.app/leaksnap LEAKSNAP_CONTROL=1
com.acme.app: running as pid PID with /data/local/tmp/leakhook.com.acme.app.so (dumps: /data/data/com.acme.app/leaksnap.PID.N.dump)
EOF
mkdir sockc
t snapshot-control 0 -- adb snapshot com.acme.app --socket --out sockc
expect out snapshot-control <<'EOF'
sockc/com.acme.app.PID.1.dump
EOF
"$L" show sockc/com.acme.app.*.1.dump >sockc.show 2>&1 || fail "snapshot-control: show: $(head -2 sockc.show)"
grep -q -x '  trigger=control' sockc.show || fail "snapshot-control: not a dump of the control socket"
err1 enable-control-md 2 "leaksnap: adb: enable: --control needs --hook (malloc_debug has no control socket) (see 'leaksnap adb --help')" \
	-- adb enable com.acme.app --control
finish
