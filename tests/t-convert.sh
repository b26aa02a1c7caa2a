#!/bin/sh
# convert: every readable format becomes a LEAKSNAP file that shows the same
# snapshot (records, totals, frames, maps), in both byte orders; convert never
# overwrites; reading from stdin gives the same result as reading the file.
set -eu
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
ls_=$(cd "$B/bin" && pwd)/leaksnap
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-convert.XXXXXX")
trap 'rm -rf "$w"' EXIT
"$B/tests/mkfixture" "$w/fx"

# Drop the lines that legitimately change: file name, format, metadata block.
norm() {
	# (and the producer's total: a converted file states the records' sum)
	sed -e '/^file:/d' -e '/^format:/d' -e '/^pid:/d' -e '/^time:/d' -e '/^total memory:/d' \
	    -e '/^metadata:/,/^$/{/^$/!d}' -e 's/ (big-endian records)//' -e 's/ modules from .*/ modules/'
}

n=0
for spec in "fx/sample64le.dump" "fx/sample32be.dump" "fx/sample64.nhgt" "fx/sample-old.nhgt" \
	"fx/android7-flagged.dump" \
	"--pointer-size 8 --frames 4 --maps $top/testdata/maps/sample64.maps fx/sample64.raw" \
	"$top/testdata/text/v1.2-signal-64.txt" "$top/testdata/text/v1.2-btinfo-32-crlf.txt" \
	"$top/testdata/text/v1.1-padded-64.txt" "$top/testdata/text/v1.0-android7-32.txt"; do
	n=$((n + 1))
	for endian in "" "--big-endian"; do
		out="$w/c$n$endian.dump"
		# shellcheck disable=SC2086
		(cd "$w" && "$ls_" convert $endian $spec "$out")
		# shellcheck disable=SC2086
		(cd "$w" && "$ls_" show $spec) | norm | sed '/^counts:/,+1d' > "$w/a"
		"$ls_" show "$out" | norm > "$w/b"
		if ! cmp -s "$w/a" "$w/b"; then
			echo "convert $spec $endian: show output differs"; diff "$w/a" "$w/b"; exit 1
		fi
		# Converted counts are corrected: the flag is never written.
		"$ls_" show --json "$out" | grep -q '"count_is_frames": null'
	done
	# The original's pointer size is kept.
	# shellcheck disable=SC2086
	p1=$(cd "$w" && "$ls_" show $spec | sed -n 's/^pointer size: *\([48]\).*/\1/p')
	p2=$("$ls_" show "$w/c$n.dump" | sed -n 's/^pointer size: *\([48]\).*/\1/p')
	[ "$p1" = "$p2" ] || { echo "pointer size $p1 became $p2 for $spec"; exit 1; }
done
echo "converted $n inputs in both byte orders"

# Never overwrite, and leave the existing file untouched.
cp "$w/fx/sample32le.dump" "$w/keep.dump"
if "$ls_" convert "$w/fx/sample64le.dump" "$w/keep.dump" 2>"$w/err"; then
	echo "convert overwrote a file"; exit 1
fi
cmp -s "$w/fx/sample32le.dump" "$w/keep.dump"
grep -q "already exists" "$w/err"
ln -s "$w/victim" "$w/sym.dump"
if "$ls_" convert "$w/fx/sample64le.dump" "$w/sym.dump" 2>/dev/null; then
	echo "convert wrote through a symlink"; exit 1
fi
[ ! -e "$w/victim" ]
# Nothing but our files in the directory (no temporaries left behind).
[ "$(ls "$w" | grep -c tmp)" = 0 ]

# stdin: same output as the file, except the name.
"$ls_" show - < "$w/fx/sample64le.dump" | sed 1d > "$w/a"
"$ls_" show "$w/fx/sample64le.dump" | sed 1d > "$w/b"
cmp -s "$w/a" "$w/b"
"$ls_" show - < "$w/fx/sample64le.dump" | head -1 | grep -q '<stdin>'
cat "$top/testdata/text/v1.2-signal-64.txt" | "$ls_" show --json - | grep -q '"format": "android-text"'
echo ok
