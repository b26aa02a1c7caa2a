#!/bin/sh
# convert: every readable format becomes a LEAKSNAP file that shows the same
# snapshot (records, totals, frames, maps), in both byte orders, and an
# Android text dump that reads back as the same model (byte-identical for
# bionic-laid-out text; the reachability section survives a LEAKSNAP round
# trip); --rewrite-prefix; convert never overwrites; reading
# from stdin gives the same result as reading the file.
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
	"fx/reach64le.dump" "fx/reach32be.dump" \
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

# android-text, text -> LEAKSNAP -> text: byte-identical for dumps laid out as
# bionic writes them (records in its order, no duplicates), 64- and 32-bit.
for f in v1.2-bionic-64 v1.2-bionic-32; do
	"$ls_" convert "$top/testdata/text/$f.txt" "$w/$f.dump"
	"$ls_" convert --to android-text "$w/$f.dump" "$w/$f.txt" 2>"$w/err"
	cmp "$top/testdata/text/$f.txt" "$w/$f.txt"
	# All the text cannot carry is the line convert itself added.
	printf 'leaksnap: %s: warning: %s\n' "$w/$f.txt" "1 metadata line is not written: \
the text format keeps only the build fingerprint (source_format)" | cmp - "$w/err"
done
# The same dump saved with CRLF line ends: the same LF text comes back (no
# CR kept in the maps).
sed 's/$/\r/' "$top/testdata/text/v1.2-bionic-64.txt" >"$w/crlf.txt"
"$ls_" convert "$w/crlf.txt" "$w/crlf.dump"
"$ls_" convert --to android-text "$w/crlf.dump" "$w/crlf.out.txt" 2>/dev/null
cmp "$top/testdata/text/v1.2-bionic-64.txt" "$w/crlf.out.txt"

# Any input -> text -> LEAKSNAP gives the model the input gives: records,
# frames, counts, zygote flags, sizes, pointer and backtrace size, maps
# (show --json without what only the container decides: a text dump has no
# place for the unreachable counts, convert warns that they are dropped).
normjson() {
	sed -e '/^  "file":/d' -e '/^  "format":/d' -e '/^  "version":/d' -e '/^  "pid":/d' \
	    -e '/^  "time_ns":/d' -e '/^  "time":/d' -e '/^  "total_memory":/d' \
	    -e '/^  "big_endian":/d' -e '/^  "count_is_frames":/d' -e '/^  "metadata":/d' \
	    -e '/^  "warnings":/d' \
	    -e '/^  "unreachable":/d' -e 's/"unreachable_count": [0-9a-z]*, //'
}
n=0
for spec in "fx/sample64le.dump" "fx/sample32be.dump" "fx/sample64.nhgt" "fx/sample-old.nhgt" \
	"fx/reach64le.dump" "fx/reach32be.dump" \
	"fx/android7-flagged.dump" \
	"--pointer-size 8 --frames 4 --maps $top/testdata/maps/sample64.maps fx/sample64.raw" \
	"--pointer-size 4 --frames 4 fx/sample32.raw" \
	"$top/testdata/text/v1.2-signal-64.txt" "$top/testdata/text/v1.2-btinfo-32-crlf.txt" \
	"$top/testdata/text/v1.1-padded-64.txt" "$top/testdata/text/v1.0-android7-32.txt" \
	"$top/testdata/text/v1.0-no-backtrace-size.txt" "$top/testdata/text/v1.2-bionic-64.txt" \
	"$top/testdata/text/v1.2-bionic-32.txt"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	(cd "$w" && "$ls_" convert --to android-text $spec "$w/t$n.txt" 2>/dev/null)
	"$ls_" convert "$w/t$n.txt" "$w/t$n.dump"
	# shellcheck disable=SC2086
	(cd "$w" && "$ls_" show --json $spec) | normjson > "$w/a"
	"$ls_" show --json "$w/t$n.dump" | normjson > "$w/b"
	if ! cmp -s "$w/a" "$w/b"; then
		echo "text round trip of $spec: the model differs"; diff "$w/a" "$w/b"; exit 1
	fi
	# ... and writing that LEAKSNAP file as text again gives the same bytes.
	"$ls_" convert --to android-text "$w/t$n.dump" - 2>/dev/null | cmp - "$w/t$n.txt"
done
echo "text round trips of $n inputs"

# --rewrite-prefix in a LEAKSNAP conversion: maps paths, build_id and exe
# metadata; other metadata (cmdline) is left alone.
"$ls_" convert --rewrite-prefix /system/lib64/=/sym/system/lib64/ \
	--rewrite-prefix /system/bin/=/sym/bin/ --rewrite-prefix /system/=/never/ \
	"$w/fx/sample64le.dump" "$w/rw.dump" 2>"$w/err"
printf 'leaksnap: %s: warning: %s\n' "$w/fx/sample64le.dump" \
	"--rewrite-prefix '/system/=/never/' matched no path" | cmp - "$w/err"
"$ls_" show "$w/rw.dump" | sed -n '/^metadata:/,/^$/p' > "$w/meta"
printf '%s\n' "metadata:" "  abi=x86_64" "  cmdline=/system/bin/app --flag" "  exe=/sym/bin/app" \
	"  build_id=0123abcd /sym/system/lib64/libfoo.so" "  unwinder=fp" "  trigger=signal" "" > "$w/want"
cmp "$w/want" "$w/meta" || { diff "$w/want" "$w/meta"; exit 1; }
"$ls_" maps "$w/rw.dump" | sed -n 's/^  [0-9] .*mappings\{0,1\}  //p' > "$w/mods"
printf '%s\n' /sym/system/lib64/libfoo.so "/data/app/my app/lib/arm64/libbar.so" \
	"[anon:libc_malloc]" | cmp - "$w/mods"
# Rewritten again the other way, it is the original model.
"$ls_" convert --rewrite-prefix /sym/system/=/system/ --rewrite-prefix /sym/bin/=/system/bin/ \
	"$w/rw.dump" "$w/back.dump"
"$ls_" show --json "$w/fx/sample64le.dump" | normjson > "$w/a"
"$ls_" show --json "$w/back.dump" | normjson > "$w/b"
cmp "$w/a" "$w/b"
echo "rewrite-prefix ok"

# OUT "-" is standard output, for either format.
"$ls_" convert "$w/fx/sample64le.dump" - | "$ls_" show - | sed 1d > "$w/a"
"$ls_" convert "$w/fx/sample64le.dump" "$w/stdout-ref.dump"
"$ls_" show "$w/stdout-ref.dump" | sed 1d > "$w/b"
cmp "$w/a" "$w/b"

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
# The same for text output.
if "$ls_" convert --to android-text "$w/fx/sample64le.dump" "$w/keep.dump" 2>"$w/err"; then
	echo "convert --to android-text overwrote a file"; exit 1
fi
cmp -s "$w/fx/sample32le.dump" "$w/keep.dump"
[ "$(cat "$w/err")" = "leaksnap: $w/keep.dump: already exists (leaksnap never overwrites a file)" ]
if "$ls_" convert --to android-text "$w/fx/sample64le.dump" "$w/sym.dump" 2>/dev/null; then
	echo "convert --to android-text wrote through a symlink"; exit 1
fi
[ ! -e "$w/victim" ]
# Nothing but our files in the directory (no temporaries, hidden ones
# included, left behind).
[ "$(ls -A "$w" | grep -c tmp)" = 0 ]
# An output name of 250 bytes (NAME_MAX is 255): the temporary name does not
# grow with it.
long=$(printf '%0250d' 0 | tr 0 n)
"$ls_" convert --to android-text "$w/fx/sample64le.dump" "$w/$long" 2>/dev/null
"$ls_" convert "$w/fx/sample64le.dump" "$w/$long.dumpx" 2>"$w/err" && exit 1
grep -q 'File name too long' "$w/err"
[ -s "$w/$long" ] && [ "$(ls -A "$w" | grep -c tmp)" = 0 ] && rm "$w/$long"
# A file system without hard links (libnolink.so makes link() fail as vfat
# does): the output is renamed into place, still never over a file.
nolink=$(cd "$B/tests/hook" && pwd)/libnolink.so
# (an AddressSanitizer build must let a library come before its runtime)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
"$ls_" convert "$w/fx/sample64le.dump" "$w/linked.dump"
LD_PRELOAD=$nolink "$ls_" convert "$w/fx/sample64le.dump" "$w/nolink.dump"
cmp -s "$w/linked.dump" "$w/nolink.dump"
if LD_PRELOAD=$nolink "$ls_" convert "$w/fx/sample32le.dump" "$w/nolink.dump" 2>"$w/err"; then
	echo "convert without hard links overwrote a file"; exit 1
fi
cmp -s "$w/linked.dump" "$w/nolink.dump"
[ "$(cat "$w/err")" = "leaksnap: $w/nolink.dump: already exists (leaksnap never overwrites a file)" ]
[ "$(ls -A "$w" | grep -c tmp)" = 0 ] && rm "$w/nolink.dump" "$w/linked.dump"

# stdin: same output as the file, except the name.
"$ls_" show - < "$w/fx/sample64le.dump" | sed 1d > "$w/a"
"$ls_" show "$w/fx/sample64le.dump" | sed 1d > "$w/b"
cmp -s "$w/a" "$w/b"
"$ls_" show - < "$w/fx/sample64le.dump" | head -1 | grep -q '<stdin>'
cat "$top/testdata/text/v1.2-signal-64.txt" | "$ls_" show --json - | grep -q '"format": "android-text"'
# maps -: standard input read once, a dump or maps text, through a pipe too
"$ls_" maps "$w/fx/sample64le.dump" > "$w/mb"
cat "$w/fx/sample64le.dump" | "$ls_" maps - > "$w/ma"
cmp -s "$w/ma" "$w/mb"
grep -q '^[1-9][0-9]* mappings' "$w/ma"
"$ls_" show "$w/fx/sample64le.dump" --json >/dev/null
printf '1000-2000 r-xp 00000000 08:01 10 /bin/app\n' | "$ls_" maps - | grep -q '^1 mappings, 1 modules$'
! printf 'abc\0def\n' | "$ls_" maps - 2>/dev/null
# A stream that is no snapshot, or runs past its header's size, is refused
# at once: not read to its end (/dev/zero has none).
st=0; "$ls_" show /dev/zero 2> "$w/z.err" || st=$?
[ $st = 2 ] && [ "$(cat "$w/z.err")" = "leaksnap: /dev/zero: byte offset 20: input goes on past the 20 bytes its header gives" ]
st=0; head -c 300000000 /dev/zero | "$ls_" show - 2> "$w/z.err" || st=$?
[ $st = 2 ] && grep -q '^leaksnap: <stdin>: byte offset 20: input goes on past' "$w/z.err"
st=0; head -c 300000000 /dev/urandom | "$ls_" diff - "$w/fx/sample64le.dump" 2> "$w/z.err" || st=$?
[ $st = 2 ] && grep -q '^leaksnap: <stdin>: byte offset 0: unrecognized format' "$w/z.err"
# a failed write to standard output: said once
st=0; "$ls_" symbolize --html - "$w/fx/sample64le.dump" > /dev/full 2> "$w/z.err" || st=$?
[ $st = 2 ] && [ "$(cat "$w/z.err")" = "leaksnap: <stdout>: write error: No space left on device" ]
# a few bytes past the header's size: the reader's own message
st=0; cat "$w/fx/trailing-bytes.dump" | "$ls_" show - 2> "$w/z.err" || st=$?
[ $st = 2 ] && [ "$(cat "$w/z.err")" = "leaksnap: <stdin>: byte offset 928: 4 trailing bytes after the metadata section" ]
echo ok
