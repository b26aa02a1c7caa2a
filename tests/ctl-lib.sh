# The control-socket tests' helpers (t-control, t-ctl, t-ctl-robust,
# t-watch), sourced after hook-lib.sh: $w is the work directory, fail()
# counts a failure, finish() ends the test.  Each program is started with
# its stdin a fifo held open on a descriptor, so that the test drives it a
# line at a time, and its pid is added to $PIDS (killed by the caller's
# cleanup).
PIDS=${PIDS:-}
spid=${spid:-}
tpid=${tpid:-}

# wait_for FILE REGEX: until a line of FILE matches (20 s at most).
wait_for() {
	_i=0
	while ! grep -q -E "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt 400 ] && { fail "$1: no line matching '$2'"; return 1; }
		sleep 0.05
	done
	return 0
}

# ctl_run NAME FD [ENV...] [--] PROG [ARGS...]: PROG with LEAKSNAP_OUT=W/NAME
# and no exit dump (then ENV), its stdin the fifo W/NAME.in held open on FD
# (3..9), its output W/NAME.out and W/NAME.err; once it prints "ready PID",
# PID is that pid.  (The first "--" only separates ENV from PROG.)
ctl_run() {
	_n=$1 _fd=$2
	shift 2
	_left=$# _dropped=
	while [ $_left -gt 0 ]; do
		_a=$1
		shift
		_left=$((_left - 1))
		if [ -z "$_dropped" ] && [ "$_a" = -- ]; then
			_dropped=1
		else
			set -- "$@" "$_a"
		fi
	done
	mkfifo "$w/$_n.in"
	env LEAKSNAP_OUT="$w/$_n" LEAKSNAP_DUMP_ON_EXIT=0 "$@" \
		<"$w/$_n.in" >"$w/$_n.out" 2>"$w/$_n.err" &
	PIDS="$PIDS $!"
	eval "exec $_fd>\"\$w/\$_n.in\""
	wait_for "$w/$_n.out" '^ready ' || { cat "$w/$_n.err"; finish; }
	PID=$(sed -n 's/^ready //p' "$w/$_n.out")
}

# ask NAME FD LINE: LINE to the program; its answer line printed.
ask() {
	_c=$(wc -l <"$w/$1.out")
	echo "$3" >&"$2"
	_i=0
	while [ "$(wc -l <"$w/$1.out")" -le "$_c" ]; do
		_i=$((_i + 1))
		[ $_i -gt 400 ] && { fail "$1: no answer to '$3'"; return 1; }
		sleep 0.05
	done
	sed -n "$((_c + 1))p" "$w/$1.out"
}

# serve ARGS...: the stand-in server (tests/tools/ctlserver.py, $SRV) in
# the background, listening once this returns; its pid in $spid and $tpid
# (the pid outputs show as PID).  stop: the stand-in ended.
serve() {
	stop
	rm -f "$w/ready" "$w/ready.inflight" "$w/log"
	python3 "$SRV" --ready "$w/ready" --log "$w/log" "$@" &
	spid=$!
	tpid=$spid
	_i=0
	while [ ! -s "$w/ready" ] && [ $_i -lt 400 ]; do sleep 0.05; _i=$((_i + 1)); done
	[ -s "$w/ready" ] || fail "the stand-in server did not start"
}
stop() {
	[ -n "$spid" ] && { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }
	spid=
}

# t NAME STATUS ARGS...: leaksnap ARGS, its exit status checked, its output
# in NAME.out/.err and normalized by the caller's norm() in NAME.nout/.nerr;
# expect out|err NAME: that normalized output is stdin, exactly.  (t-ctl
# and t-control have their own.)
t() { # NAME STATUS ARGS...
	_n=$1 _want=$2
	shift 2
	"$L" "$@" >"$_n.out" 2>"$_n.err"
	_st=$?
	[ "$_st" = "$_want" ] || { fail "$_n: exit status $_st, expected $_want"; sed 's/^/    /' "$_n.err"; }
	norm "$_n.out" >"$_n.nout"
	norm "$_n.err" >"$_n.nerr"
}
expect() { # out|err NAME: the normalized output is stdin, exactly
	cat >expected
	if ! cmp -s expected "$2.n$1"; then
		fail "$2: std$1 differs"
		diff -u expected "$2.n$1" | sed 's/^/    /' | head -20
	fi
}
