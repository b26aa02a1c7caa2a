#!/bin/sh
# leaksnap's ClickHouse backend against a server that misbehaves
# (tests/tools/fake-ch.py), no ClickHouse needed: each case is one line
# `leaksnap: clickhouse://...: the server ...`, exit 2, within a bound of
# time and memory:
#  - an endless HTTP 200 answer: stopped at LEAKSNAP_CH_MAX_ANSWER bytes
#    (64 MiB here), the process under 200 MB;
#  - a server that accepts and never answers, and one that sends a byte
#    each half second: stalled after LEAKSNAP_CH_STALL seconds (2 here);
#  - bytes that are not TabSeparated text, rows of the wrong number of
#    columns: cannot be read;
#  - a URL whose password holds '@' and %-escapes: the user and password
#    the server is sent, decoded; the password never said;
#  - LEAKSNAP_CH_MAX_ANSWER and LEAKSNAP_CH_STALL that are not numbers.
set -u
B=$1
. "$(dirname "$0")/hook-lib.sh"
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 77; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is not installed"; exit 77; }
FAKE=$top/tests/tools/fake-ch.py
spid=
trap '[ -n "$spid" ] && kill $spid 2>/dev/null; rm -rf "$w"' EXIT

# serve MODE: a fake server answering as MODE; its port in $port
serve() {
	[ -n "$spid" ] && { kill $spid 2>/dev/null; wait $spid 2>/dev/null; }
	rm -f "$w/port"
	python3 "$FAKE" "$1" "$w/port" &
	spid=$!
	n=0
	while [ ! -s "$w/port" ] && [ $n -lt 100 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	port=$(cat "$w/port")
}

# case WHAT MAXSECONDS MAXKB MESSAGE ARGS...: leaksnap ARGS says MESSAGE
# (one line), exits 2, in at most MAXSECONDS and MAXKB of memory
case_() {
	_what=$1 _secs=$2 _kb=$3 _msg=$4
	shift 4
	_t0=$(date +%s)
	_st=0
	# (ASan keeps freed blocks in quarantine: without it, a sanitized
	# build's peak is the program's own, plus shadow memory)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0 \
		LEAKSNAP_CH_STALL=${STALL-2} LEAKSNAP_CH_MAX_ANSWER=${MAXA-67108864} \
		/usr/bin/time -f "%M" -o "$w/rss" "$L" "$@" >"$w/out" 2>"$w/err" || _st=$?
	_t=$(($(date +%s) - _t0))
	[ "$_st" = 2 ] || fail "$_what: status $_st, expected 2"
	[ "$(cat "$w/err")" = "$_msg" ] || fail "$_what: said '$(cat "$w/err")', expected '$_msg'"
	[ -s "$w/out" ] && fail "$_what: wrote to stdout: $(head -3 "$w/out")"
	[ "$_t" -le "$_secs" ] || fail "$_what: took $_t s (at most $_secs)"
	_rss=$(tail -1 "$w/rss")
	[ "$_rss" -le "$_kb" ] || fail "$_what: $_rss kB of memory (at most $_kb)"
	echo "$_what: ${_t}s, ${_rss} kB"
}

mkdir -p "$w/d"
"$B/bench/gendump" --records 10 --seed 1 "$w/d/g.dump" 2>/dev/null || fail "gendump"

serve endless
U=clickhouse://u:secret@127.0.0.1:$port/db
R=clickhouse://u:***@127.0.0.1:$port/db
case_ "endless (history)" 20 200000 \
	"leaksnap: $R: the server's answer is larger than 67108864 bytes (LEAKSNAP_CH_MAX_ANSWER)" \
	history --db "$U"
case_ "endless (store)" 20 200000 \
	"leaksnap: $R: the server's answer is larger than 67108864 bytes (LEAKSNAP_CH_MAX_ANSWER)" \
	store --db "$U" "$w/d/g.dump"

serve stall
U=clickhouse://127.0.0.1:$port/db
case_ "stall (history)" 10 100000 \
	"leaksnap: $U: the server stopped answering (under 1024 bytes a second for 2 s)" \
	history --db "$U"
case_ "stall (store)" 10 100000 \
	"leaksnap: $U: the server stopped answering (under 1024 bytes a second for 2 s)" \
	store --db "$U" "$w/d/g.dump"

serve drip
U=clickhouse://127.0.0.1:$port/db
case_ "drip (history)" 10 100000 \
	"leaksnap: $U: the server stopped answering (under 1024 bytes a second for 2 s)" \
	history --db "$U"

serve binary
U=clickhouse://127.0.0.1:$port/db
case_ "binary (history)" 10 100000 \
	"leaksnap: $U: the server's answer cannot be read (not rows of 1 TabSeparated column)" \
	history --db "$U"

serve columns
U=clickhouse://127.0.0.1:$port/db
case_ "columns (store)" 10 100000 \
	"leaksnap: $U: the server's answer cannot be read (not rows of 1 TabSeparated column)" \
	store --db "$U" "$w/d/g.dump"

# the password ends at the URL's last '@', %-decoded; never shown
rm -f "$w/port.auth"
case_ "a password with '@'" 10 100000 \
	"leaksnap: clickhouse://us%3Aer:***@127.0.0.1:$port/db: the server's answer cannot be read (not rows of 1 TabSeparated column)" \
	history --db "clickhouse://us%3Aer:p@ss%2F%25@127.0.0.1:$port/db"
[ "$(cat "$w/port.auth")" = "us:er:p@ss/%" ] || fail "a password with '@': the server was sent '$(cat "$w/port.auth")'"

MAXA=12x case_ "LEAKSNAP_CH_MAX_ANSWER" 10 100000 \
	"leaksnap: $U: LEAKSNAP_CH_MAX_ANSWER: not a number of bytes: '12x'" \
	history --db "$U"
STALL=0 case_ "LEAKSNAP_CH_STALL" 10 100000 \
	"leaksnap: $U: LEAKSNAP_CH_STALL: not a number of seconds (1 to 86400): '0'" \
	history --db "$U"
finish
