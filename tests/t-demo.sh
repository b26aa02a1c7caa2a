#!/bin/sh
# make demo leaves its inputs where the commands it prints can be run again:
# every leaksnap/leakdiff command it shows, run again as printed in the
# directory it names, prints what the demo printed for it (a command that
# writes a file writes it again, once the demo's copy is removed).
set -u
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-demo-test.XXXXXX")
trap 'rm -rf "$w"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

sh "$top/scripts/demo.sh" "$B" >"$w/demo.out" 2>&1 || { cat "$w/demo.out"; echo "FAIL: make demo failed"; exit 1; }
# "  cd DIR && PATH=BIN:$PATH": where to run them again.
cdline=$(sed -n 's/^  cd \(.*\) && PATH=\(.*\):\$PATH$/\1|\2/p' "$w/demo.out")
dir=${cdline%%|*} path=${cdline#*|}
[ -n "$cdline" ] || { echo "FAIL: the demo does not say where to run its commands again"; exit 1; }
case $dir in /*) ;; *) dir="$top/$dir" ;; esac
[ -d "$dir" ] || { echo "FAIL: the demo's directory $dir is gone"; exit 1; }

# Split the output into one file per step: "$ COMMAND" then what it printed.
awk -v w="$w" '
	/^\$ / { n++; f = sprintf("%s/step.%02d", w, n); print substr($0, 3) > (f ".cmd"); close(f ".cmd"); printf "" > (f ".out"); next }
	n && !/^the report: / { print > (f ".out") }
' "$w/demo.out"
rerun=0
for c in "$w"/step.*.cmd; do
	cmd=$(cat "$c")
	case $cmd in leaksnap\ *|leakdiff\ *) ;; *) continue ;; esac
	case $cmd in *echo*|*'&&'*|*record*) continue ;; esac
	want=${c%.cmd}.out
	# A file the command writes: leaksnap never replaces one, so the demo's
	# goes first (convert IN OUT; --html FILE), as the demo says (checked
	# below), once the refusal is checked.
	case $cmd in
	"leaksnap convert "*)
		(cd "$dir" && PATH="$path:$PATH" sh -c "$cmd") >"$w/again" 2>&1 &&
			fail "'$cmd' replaced the demo's ${cmd##* }"
		grep -q "already exists" "$w/again" || fail "'$cmd' run again: $(cat "$w/again")" ;;
	esac
	case $cmd in
	"leaksnap convert "*) rm -f "$dir/${cmd##* }" ;;
	*"--html "*) out=${cmd#*--html }; rm -f "$dir/${out%% *}" ;;
	esac
	# (the demo prints an empty line before each step)
	sed -e '${/^$/d;}' "$want" >"$want.trim"
	(cd "$dir" && PATH="$path:$PATH" sh -c "$cmd") >"$w/got" 2>&1 ||
		fail "'$cmd' failed again in $dir: $(tail -1 "$w/got")"
	cmp -s "$w/got" "$want.trim" || fail "'$cmd' prints another thing run again: $(diff "$want.trim" "$w/got" | head -5)"
	rerun=$((rerun + 1))
done
# show x2, convert, maps, leakdiff, the HTML report
[ $rerun -ge 6 ] || fail "only $rerun of the demo's commands could be run again"
[ -s "$dir/report.html" ] || fail "no report.html in $dir"
grep -q '^(leaksnap never replaces a file: remove app-heap.dump or report.html before$' "$w/demo.out" ||
	fail "the demo does not say that its files are never replaced"

[ $fails = 0 ] || exit 1
echo "ok: $rerun commands ran again as printed"
