#!/bin/sh
# Shell completion (docs/completion): bash's completion function, driven
# as bash drives it (COMP_WORDS, COMP_CWORD), gives exact candidate lists
# on a set of command lines (commands, options, --by/--to/--unwind values,
# files and directories, adb actions; leakdiff too); every option of every
# --help the binary prints is offered for its command, and nothing is
# offered that neither --help nor the man page knows.  The same for zsh,
# whose completion is loaded by compinit (silently, for both programs) and
# driven by typing into an interactive zsh on a pseudo-terminal.
set -u
B=$1
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$B/bin" && pwd)
bc=/usr/share/bash-completion/bash_completion
[ -f "$bc" ] || { echo "bash-completion is not installed"; exit 77; }
command -v bash >/dev/null 2>&1 || { echo "bash is not installed"; exit 77; }
command -v mandoc >/dev/null 2>&1 || { echo "mandoc is not installed"; exit 77; }
w=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-completion.XXXXXX")
trap 'rm -rf "$w"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# a directory to complete in: two files, a directory, a library
mkdir -p "$w/cwd/syms" "$w/empty" "$w/bin"
touch "$w/cwd/a.dump" "$w/cwd/b.maps" "$w/cwd/libhook.so"
# a program to run under record, found on PATH
printf '#!/bin/sh\n' >"$w/bin/leaksnap-test-prog"
chmod +x "$w/bin/leaksnap-test-prog"
PATH=$w/bin:$PATH
export PATH

# comp WORD...: the candidates bash would offer for the last word, sorted,
# on one line
cat >"$w/drive.bash" <<'BASH'
source "$BC"
source "$TOP/docs/completion/leaksnap.bash"
comp() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_leaksnap "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//'
	echo
}
BASH
comp() { # WANT WORD...: the candidates are exactly WANT
	want=$1
	shift
	have=$(cd "$w/cwd" && BC=$bc TOP=$top bash -c '. "$0"; comp "$@"' "$w/drive.bash" "$@" 2>"$w/err")
	[ -s "$w/err" ] && fail "'$*': stderr: $(cat "$w/err")"
	[ "$have" = "$want" ] || fail "'$*': offered '$have', expected '$want'"
}
comp "adb addr2line attach convert ctl diff history maps record show store symbolize watch" leaksnap ''
comp "show store symbolize" leaksnap s
comp "--help --version" leaksnap --
comp "--help --version -h" leaksnap -
comp "function module site stack" leakdiff --by ''
comp "site stack" leaksnap diff --by s
comp "function module site stack" leaksnap diff -s syms --by ''
comp "android-text leaksnap pprof" leaksnap convert --to ''
comp "auto dwarf fp instrument" leaksnap record --unwind ''
comp "4 8" leaksnap show --pointer-size ''
comp "--json" leaksnap show --top 5 --js
comp "--html --html-stacks" leakdiff --ht
comp "--fail-on --fail-on-unreachable --folded --frames --full-names" leakdiff --f
comp "a.dump b.maps libhook.so syms" leaksnap show --maps ''
comp "a.dump b.maps libhook.so syms" leakdiff a.dump ''
comp "syms" leaksnap symbolize -s ''
comp "syms" leakdiff --symbols ''
comp "a.dump" leaksnap symbolize -s syms a
comp "" leaksnap addr2line -e a.dump 0x
comp "disable enable snapshot symbols" leaksnap adb ''
comp "disable enable snapshot symbols" leaksnap adb -s emulator-5554 ''
comp "" leaksnap adb -s ''
comp "--control --frames --help --hook --malloc-debug" leaksnap adb enable --
comp "--count --help --interval --out --pid --socket" leaksnap adb -s X snapshot --
comp "--help --out --symbols" leaksnap adb symbols a.dump --
comp "libhook.so syms" leaksnap adb enable com.example.app --hook ''
comp "a.dump b.maps libhook.so syms" leaksnap adb symbols ''
comp "--help -h -s" leaksnap adb -
comp "leaksnap-test-prog" leaksnap record -- leaksnap-test-p
comp "leaksnap-test-prog" leaksnap record --out x leaksnap-test-
comp "a.dump b.maps libhook.so syms" leaksnap record --frames 8 -- true ''
comp "--detach --dump" leaksnap attach 123 --d
comp "libhook.so syms" leaksnap attach 123 --lib ''
comp "auto dwarf fp" leaksnap attach --unwind ''
comp "" leaksnap attach 123 --libs ''
comp "capture dump stats version" leaksnap ctl 123 ''
comp "off on" leaksnap ctl 123 capture ''
comp "--json" leaksnap ctl 123 stats --j
comp "a.dump b.maps libhook.so syms" leaksnap ctl 123 dump -o ''
comp "syms" leaksnap watch 123 --out ''
comp "--count" leaksnap watch 123 --out syms --c
comp "--fail-on --fail-on-unreachable --folded --frames --full-names" leaksnap watch 123 --out syms --leakdiff --f
comp "--control" leaksnap record --cont
comp "a.dump b.maps libhook.so syms" leaksnap store --db ''
comp "" leaksnap store --label ''
comp "build run" leaksnap history --by ''
comp "--db --debuginfod" leaksnap store --d

# In step with --help: every option a command's --help prints is offered
# (for adb: by one of its actions), and every option offered is in --help
# or in the command's man page (options documented ahead of their code).
options() {
	sed -n 's/^  *\(-[A-Za-z0-9]\), \(--[a-z0-9-]*\).*/\1 \2/p; s/^  *\(--*[A-Za-z0-9][a-z0-9-]*\).*/\1/p' "$1" |
		tr ' ' '\n' | grep -E '^--?[A-Za-z0-9]' | sort -u
}
offered() { # WORD...: the options offered after WORD... (one per line)
	(cd "$w/empty" && BC=$bc TOP=$top bash -c '. "$0"; comp "$@"' "$w/drive.bash" "$@" -) |
		tr ' ' '\n' | grep -v '^$'
}
bs=$(printf '\b')
for p in leaksnap.1 leakdiff.1 leaksnap-attach.1 leaksnap-ctl.1 leaksnap-watch.1 leaksnap-store.1; do
	mandoc -T ascii "$top/docs/man/$p" | sed "s/.$bs//g" |
		grep -o -E -e '(^|[^A-Za-z0-9-])--?[A-Za-z0-9][a-z0-9-]*' | sed 's/^[^-]*//' | sort -u >"$w/$p.opts"
done
"$bin/leaksnap" --help >"$w/main.help"
cmds=$(sed -n '/^Commands:/,/^$/p' "$w/main.help" | awk 'NF > 1 && $1 != "Commands:" { print $1 }')
check() { # NAME HELP-FILE MAN-OPTIONS WORD...
	name=$1 help=$2 manopts=$3
	shift 3
	offered "$@" | sort -u >"$w/offered"
	if [ "$name" = "leaksnap adb" ]; then
		for a in enable disable snapshot symbols; do offered "$@" "$a"; done | sort -u >>"$w/offered"
		sort -u -o "$w/offered" "$w/offered"
	fi
	for o in $(options "$help"); do
		grep -q -x -e "$o" "$w/offered" || fail "$name: $o is in --help, not offered"
	done
	for o in $(cat "$w/offered"); do
		grep -q -x -e "$o" "$manopts" || options "$help" | grep -q -x -e "$o" ||
			fail "$name: $o is offered, but neither in --help nor in the man page"
	done
}
for c in $cmds; do
	"$bin/leaksnap" "$c" --help >"$w/$c.help" 2>&1 || fail "leaksnap $c --help"
	m=leaksnap.1.opts
	[ "$c" = diff ] && m=leakdiff.1.opts
	# a command with a page of its own (leaksnap-attach(1), leaksnap-store(1))
	[ -f "$top/docs/man/leaksnap-$c.1" ] && m=leaksnap-$c.1.opts
	check "leaksnap $c" "$w/$c.help" "$w/$m" leaksnap "$c"
done
"$bin/leakdiff" --help >"$w/leakdiff.help"
check leakdiff "$w/leakdiff.help" "$w/leakdiff.1.opts" leakdiff

# zsh: compinit finds the function and binds it to both names, silently;
# then zsh itself completes command lines typed into an interactive zsh on
# a pseudo-terminal (zpty), its matches captured as compadd receives them.
if command -v zsh >/dev/null 2>&1; then
	HOME=$w zsh -fc '
		fpath=("$1" $fpath)
		autoload -U compinit && compinit -u -D
		[[ $_comps[leaksnap] == _leaksnap && $_comps[leakdiff] == _leaksnap ]] || exit 3
		autoload -U +X _leaksnap || exit 4
		(( $+functions[_leaksnap] )) || exit 5
	' zsh "$top/docs/completion" >"$w/zsh.out" 2>&1
	st=$?
	[ $st = 0 ] || fail "zsh: compinit did not bind _leaksnap (status $st)"
	[ -s "$w/zsh.out" ] && fail "zsh: output while loading: $(cat "$w/zsh.out")"

	cat >"$w/capture.zsh" <<'ZSH'
# every match offered, one per line, to $CAPTURE (calls that only query
# matches, -O -A -D, are passed through)
compadd() {
	if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
		builtin compadd "$@"
		return
	fi
	local -a __m
	builtin compadd -A __m "$@"
	(( $#__m )) && print -rl -- $__m >>$CAPTURE
	builtin compadd "$@"
}
ZSH
	cat >"$w/drive.zsh" <<'ZSH'
# zsh -f drive.zsh COMPDIR OUT LINE: type LINE and a tab into an interactive
# zsh; the matches go to OUT, OUT.done says it finished
zmodload zsh/zpty || exit 3
dir=$1 out=$2 line=$3
zpty z TERM=dumb HOME=${out:h} zsh -f -i
zpty -w z "fpath=($dir \$fpath); autoload -U compinit; compinit -u -D; CAPTURE=$out;"\
"source ${out:h}/capture.zsh; bindkey '^I' complete-word; print ready >$out.ready"
for i in {1..200}; do [[ -f $out.ready ]] && break; sleep 0.05; done
sleep 0.3 # until zle reads the terminal
zpty -w -n z "$line"$'\t'
zpty -w z $'\C-u'"print done >$out.done"
for i in {1..200}; do [[ -f $out.done ]] && break; sleep 0.05; done
zpty -d z
[[ -f $out.done ]]
ZSH
	zoffered() { # LINE: the matches zsh offers, sorted, one per line
		for try in 1 2 3; do
			rm -f "$w/z" "$w/z.ready" "$w/z.done"
			(cd "$1" && timeout 30 zsh -f "$w/drive.zsh" "$top/docs/completion" "$w/z" "$2") &&
				break
		done
		[ -f "$w/z.done" ] || fail "zsh: '$2': the completion did not finish"
		[ -f "$w/z" ] && LC_ALL=C sort -u "$w/z"
	}
	zcomp() { # WANT LINE: zsh offers exactly WANT (asked again, up to
		# three times, in case a loaded machine lost the keys typed)
		for try in 1 2 3; do
			have=$(zoffered "$w/cwd" "$2" | tr '\n' ' ' | sed 's/ $//')
			[ "$have" = "$1" ] && return
		done
		fail "zsh: '$2': offered '$have', expected '$1'"
	}
	zcomp "adb addr2line attach convert ctl diff history maps record show store symbolize watch" 'leaksnap '
	zcomp "function module site stack" 'leaksnap diff --by '
	zcomp "site stack" 'leakdiff --by s'
	zcomp "android-text leaksnap pprof" 'leaksnap convert --to '
	zcomp "auto dwarf fp instrument" 'leaksnap record --unwind '
	zcomp "auto dwarf fp" 'leaksnap attach --unwind '
	zcomp "disable enable snapshot symbols" 'leaksnap adb '
	zcomp "--control --frames --help --hook --malloc-debug" 'leaksnap adb enable --'
	zcomp "syms" 'leaksnap symbolize -s '
	zcomp "--json" 'leaksnap show --j'
	zcomp "a.dump b.maps libhook.so syms" 'leaksnap show '
	zcomp "--html --html-stacks" 'leakdiff --ht'
	# in step with --help, as for bash
	for c in $cmds; do
		zoffered "$w/empty" "leaksnap $c -" >"$w/zoffered"
		if [ "$c" = adb ]; then
			for a in enable disable snapshot symbols; do
				zoffered "$w/empty" "leaksnap adb $a -"
			done | sort -u >>"$w/zoffered"
		fi
		m=$w/leaksnap.1.opts
		[ "$c" = diff ] && m=$w/leakdiff.1.opts
		for o in $(options "$w/$c.help"); do
			grep -q -x -e "$o" "$w/zoffered" || fail "zsh: leaksnap $c: $o is in --help, not offered"
		done
		for o in $(grep -E '^--?[A-Za-z0-9]' "$w/zoffered" | sort -u); do
			grep -q -x -e "$o" "$m" || options "$w/$c.help" | grep -q -x -e "$o" ||
				fail "zsh: leaksnap $c: $o is offered, but neither in --help nor in the man page"
		done
	done
else
	echo "zsh is not installed: its completion is not checked"
fi

[ $fails = 0 ] || exit 1
echo "completion: bash and zsh candidates exact, in step with --help"
