#!/bin/sh
# tests/tools/browser.py, the headless-chromium driver the report tests use:
# a clean page loads silently; STEPS prints its value as JSON; click and hover
# are real (trusted) input; a dialog (alert on load, or markup that escaped
# into a page and runs a script), an uncaught exception, console.error and an
# endless loop each fail with status 1 and say why; a missing browser gives
# status 3; a screenshot is a full-page PNG of the requested width; nothing
# (processes, profile directories) is left behind.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
drv="$top/tests/tools/browser.py"
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 77; }
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-brt.XXXXXX")
trap 'rm -rf "$w"' EXIT
mkdir "$w/tmp"

# The driver's status 3 is "no browser": say what is missing and skip.
echo '<!doctype html><title>plain</title><p>hello' >"$w/plain.html"
set +e
TMPDIR="$w/tmp" timeout 60 python3 "$drv" "$w/plain.html" >"$w/out" 2>"$w/err"
st=$?
set -e
if [ $st = 3 ]; then cat "$w/err"; exit 77; fi

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run NAME EXPECTED-STATUS [driver args...]: output in $w/NAME.out/.err,
# wall time in $w/NAME.time (seconds).
run() {
	name=$1 want=$2
	shift 2
	t0=$(date +%s.%N)
	set +e
	TMPDIR="$w/tmp" timeout 60 python3 "$drv" "$@" >"$w/$name.out" 2>"$w/$name.err"
	got=$?
	set -e
	awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f\n", b - a }' >"$w/$name.time"
	echo "$name: status $got, $(cat "$w/$name.time") s"
	[ "$got" = "$want" ] || { fail "$name: status $got, expected $want"; sed 's/^/  /' "$w/$name.err"; }
}
expect_out() { # name expected-stdout
	[ "$(cat "$w/$1.out")" = "$2" ] || fail "$1: stdout '$(cat "$w/$1.out")', expected '$2'"
}
expect_err() { # name regex: stderr is exactly one line matching it
	[ "$(wc -l <"$w/$1.err")" = 1 ] && grep -Eq "$2" "$w/$1.err" ||
		fail "$1: stderr does not match /$2/: $(cat "$w/$1.err")"
}
under() { # name seconds
	awk -v t="$(cat "$w/$1.time")" -v l="$2" 'BEGIN { exit !(t < l) }' || fail "$1: took $(cat "$w/$1.time") s (limit $2)"
}

# A plain page: status 0, no output at all.
run plain 0 "$w/plain.html"
expect_out plain ""
[ -s "$w/plain.err" ] && fail "plain: stderr: $(cat "$w/plain.err")"

# STEPS' completion value, awaited, printed as one line of JSON.
echo 'await sleep(20); ({title: document.title, n: [1, 2.5, null], ok: true})' >"$w/value.js"
run value 0 "$w/plain.html" "$w/value.js"
expect_out value '{"title": "plain", "n": [1, 2.5, null], "ok": true}'

# click: a real, trusted click on the button (scrolled into view first),
# its onclick handler's change seen; hover: mouseover fires.
cat >"$w/ui.html" <<'EOF'
<!doctype html><title>ui</title>
<div style="height:3000px">tall</div>
<button id=b onclick="document.getElementById('out').textContent = 'clicked ' + event.isTrusted">go</button>
<p id=out>before</p>
<div id=h style="width:80px;height:40px" onmouseover="this.textContent = 'hovered ' + event.isTrusted">x</div>
EOF
cat >"$w/ui.js" <<'EOF'
const before = document.getElementById('out').textContent;
await click('#b');
await hover(document.getElementById('h'));
[before, document.getElementById('out').textContent, document.getElementById('h').textContent]
EOF
run ui 0 "$w/ui.html" "$w/ui.js"
expect_out ui '["before", "clicked true", "hovered true"]'

# alert() on load: fails at once (not by the timeout) and names the dialog.
echo '<!doctype html><script>alert("boom")</script>' >"$w/alert.html"
run alert 1 --timeout 30 "$w/alert.html"
expect_err alert '^browser: alert dialog opened: boom$'
under alert 25

# A hostile name that escaped into markup runs a script: a dialog.
echo '<!doctype html><table><tr><td></script><img src=x onerror=alert(1)></td></table>' >"$w/markup.html"
run markup 1 "$w/markup.html"
expect_err markup '^browser: alert dialog opened: 1$'
under markup 25
# ... and inside a script element it breaks the script: an exception.
echo '<!doctype html><script>var d = {"n": "</script><img src=x onerror=alert(1)>"};</script>' >"$w/inscript.html"
run inscript 1 "$w/inscript.html"
expect_err inscript '^browser: (uncaught exception: SyntaxError|alert dialog opened)'

# A dialog opened by a click in STEPS fails the same way.
echo "<!doctype html><button id=b onclick='confirm(\"sure?\")'>x</button>" >"$w/confirm.html"
echo 'await click("#b"); "not reached"' >"$w/confirm.js"
run confirm 1 "$w/confirm.html" "$w/confirm.js"
expect_out confirm ""
expect_err confirm '^browser: confirm dialog opened: sure\?$'

# An uncaught exception, with its line; console.error.
printf '<!doctype html>\n<script>\nnull.f()</script>\n' >"$w/throw.html"
run throw 1 "$w/throw.html"
expect_err throw "^browser: uncaught exception: TypeError: .*null.* \(file://$w/throw.html line 3\)$"
echo '<!doctype html><script>console.error("bad", 42)</script>' >"$w/cerr.html"
run cerr 1 "$w/cerr.html"
expect_err cerr '^browser: console.error: bad 42$'

# An exception in STEPS, with its line; a click on nothing.
printf 'await sleep(1);\nnull.x\n' >"$w/bad.js"
run badsteps 1 "$w/plain.html" "$w/bad.js"
expect_err badsteps '^browser: STEPS: TypeError: .* \(STEPS line 2\)$'
echo 'await click("#nothing")' >"$w/nothing.js"
run nothing 1 "$w/plain.html" "$w/nothing.js"
expect_err nothing '^browser: STEPS: Error: click: no element matches #nothing'

# An endless loop: --timeout 5 expires, and the driver does stop.  (On a
# loaded machine the browser may still be starting at 5 s: any phase.)
echo '<!doctype html><script>for (;;) {}</script>' >"$w/loop.html"
run loop 1 --timeout 5 "$w/loop.html"
expect_err loop '^browser: timed out after 5 s \((waiting for the load event|starting|loading)'
under loop 15

# An endless STEPS: the same.  A value that is not JSON: an error.
echo 'for (;;) {}' >"$w/spin.js"
run spin 1 --timeout 5 "$w/plain.html" "$w/spin.js"
expect_err spin '^browser: timed out after 5 s \('
under spin 15
echo 'const o = {}; o.self = o; o' >"$w/cycle.js"
run cycle 1 "$w/plain.html" "$w/cycle.js"
expect_err cycle '^browser: STEPS: .*'

# A page that does not exist: bad usage (status 2).  No browser: status 3.
run missing 2 "$w/no-such.html"
LEAKSNAP_BROWSER=/nonexistent/chromium run nobrowser 3 "$w/plain.html"
expect_err nobrowser '^browser: no browser found'

# Screenshot: a PNG of the requested width and the page's full height.
run shot 0 --screenshot "$w/shot.png" --size 640x400 "$w/ui.html"
read -r sw sh <<EOF
$(python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
ok = d[:8] == b"\x89PNG\r\n\x1a\n" and d[12:16] == b"IHDR"
print(*(struct.unpack(">II", d[16:24]) if ok else (0, 0)))' "$w/shot.png")
EOF
[ "$sw" = 640 ] || fail "shot: PNG width $sw, expected 640"
[ "$sh" -ge 3000 ] || fail "shot: PNG height $sh, expected the full page (>= 3000)"

# Nothing left behind: no profile directory, no browser process.
[ -z "$(ls -A "$w/tmp")" ] || fail "left in TMPDIR: $(ls -A "$w/tmp")"
if pgrep -f "$w/tmp" >/dev/null; then fail "browser processes left: $(pgrep -af "$w/tmp")"; fi

[ $fails = 0 ] || { echo "$fails failed"; exit 1; }
echo "browser: all checks passed"
