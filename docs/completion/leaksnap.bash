# bash completion for leaksnap and leakdiff                -*- shell-script -*-
# Installed as share/bash-completion/completions/leaksnap (and leakdiff, a
# link to it).  Options are those of each command's --help; tests/t-completion.sh
# keeps the two in step.

# _leaksnap_opts COMMAND [ACTION]: the options of a command (of an adb action)
_leaksnap_opts()
{
	local input='--maps --pointer-size --frames --count-is-frames -h --help'
	local debuginfod='--debuginfod --no-debuginfod --offline'
	case $1 in
	show) echo "$input --top -j --json" ;;
	maps) echo "-j --json -h --help" ;;
	convert) echo "$input --to --rewrite-prefix --big-endian -s --symbols --no-symbols" \
		"--no-adjust $debuginfod" ;;
	record) echo "--out --frames --unwind --interval --sample --no-exit-dump --reachability --only --libs" \
		"--control --watch -h --help" ;;
	diff) echo "--pointer-size --frames --count-is-frames -h --help --by --skip --keep-order --include-zygote --top --min-bytes --suppressions -s" \
		"--symbols --no-symbols --no-adjust -j --json --folded --html --html-stacks" \
		"--pprof --fail-on --fail-on-unreachable --full-names --version --db --run --where" \
		"$debuginfod" ;;
	symbolize) echo "$input -s --symbols --no-adjust -v --verbose --top -j --json --html" \
		"--html-stacks --full-names $debuginfod" ;;
	addr2line) echo "-e --exe -a --addresses -f --functions -i --inlines -C --demangle" \
		"-j --json -h --help $debuginfod" ;;
	attach) echo "--libs --frames --unwind --out --interval --sample --reachability --control --dump --detach" \
		"--lib -h --help" ;;
	ctl) echo "--json -o --output --reachability -h --help" ;;
	watch) echo "--out --every --count --reachability --leakdiff -h --help" ;;
	store) echo "--db -l --label -s --symbols --no-adjust $debuginfod -h --help" ;;
	history) echo "--db --by --where --last --series -j --json --html --fail-on-regression" \
		"-h --help" ;;
	adb)
		case $2 in
		enable) echo "--malloc-debug --hook --control --frames -h --help" ;;
		disable) echo "-h --help" ;;
		snapshot) echo "--pid --count --interval --out --socket -h --help" ;;
		symbols) echo "--out --symbols -h --help" ;;
		*) echo "-s -h --help" ;;
		esac ;;
	esac
}

_leaksnap()
{
	local cur prev words cword
	_init_completion || return

	local cmd i=1 action=
	if [[ ${words[0]##*/} == leakdiff ]]; then
		cmd=diff
	else
		# the command is the first word that is not an option
		while ((i < cword)) && [[ ${words[i]} == -* ]]; do
			((i++))
		done
		if ((i >= cword)); then
			if [[ $cur == -* ]]; then
				COMPREPLY=($(compgen -W '-h --help --version' -- "$cur"))
			else
				COMPREPLY=($(compgen -W 'show maps convert record diff symbolize
					addr2line attach adb ctl watch store history' -- "$cur"))
			fi
			return
		fi
		cmd=${words[i]}
		((i++))
	fi

	# the argument an option takes
	case $prev in
	--by)
		if [[ $cmd == history ]]; then
			COMPREPLY=($(compgen -W 'build run' -- "$cur"))
		else
			COMPREPLY=($(compgen -W 'stack site function module' -- "$cur"))
		fi
		return ;;
	--to)
		COMPREPLY=($(compgen -W 'leaksnap android-text pprof' -- "$cur"))
		return ;;
	--unwind)
		if [[ $cmd == record ]]; then
			COMPREPLY=($(compgen -W 'auto fp dwarf instrument' -- "$cur"))
		else
			COMPREPLY=($(compgen -W 'auto fp dwarf' -- "$cur"))
		fi
		return ;;
	--pointer-size)
		COMPREPLY=($(compgen -W '4 8' -- "$cur"))
		return ;;
	--symbols)
		_filedir -d
		return ;;
	-s)
		# leaksnap adb -s SERIAL: a device, not a directory
		[[ $cmd == adb ]] && return
		_filedir -d
		return ;;
	--out)
		# adb, watch: a directory; record, attach: a dump prefix (a path)
		if [[ $cmd == adb || $cmd == watch ]]; then _filedir -d; else _filedir; fi
		return ;;
	-o | --output)
		_filedir
		return ;;
	--maps | --suppressions | --html | --pprof | -e | --exe | --db)
		_filedir
		return ;;
	--hook | --lib)
		_filedir so
		return ;;
	--frames | --top | --min-bytes | --fail-on | --fail-on-unreachable | --html-stacks | \
		--interval | --sample | --count | --every | --watch | \
		--pid | --skip | --rewrite-prefix | --only | --libs | -l | --label | --where | --last)
		return ;;
	esac

	if [[ $cmd == adb ]]; then
		# the action: the first word after adb that is neither an option nor -s's serial
		local j
		for ((j = i; j < cword; j++)); do
			case ${words[j]} in
			-s) ((j++)) ;;
			-*) ;;
			*) action=${words[j]}; break ;;
			esac
		done
		if [[ -z $action && $cur != -* ]]; then
			COMPREPLY=($(compgen -W 'enable disable snapshot symbols' -- "$cur"))
			return
		fi
	fi

	# watch --leakdiff: what follows is leakdiff's
	if [[ $cmd == watch ]]; then
		local m
		for ((m = i; m < cword; m++)); do
			[[ ${words[m]} == --leakdiff ]] && cmd=diff && break
		done
	fi

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_leaksnap_opts "$cmd" "$action")" -- "$cur"))
		return
	fi

	case $cmd in
	record)
		# the program to run, then its own arguments
		local k
		for ((k = i; k < cword; k++)); do
			case ${words[k]} in
			--) ((k++)); break ;;
			--out | --frames | --unwind | --interval | --only | --libs | --watch) ((k++)) ;;
			-*) ;;
			*) break ;;
			esac
		done
		if ((k >= cword)); then
			COMPREPLY=($(compgen -c -- "$cur" | sort -u))
		else
			_filedir
		fi ;;
	addr2line) ;; # addresses
	attach) _pids ;;
	ctl | watch)
		# PID (or a socket path), then ctl's command and capture's word
		local n=0 k
		for ((k = i; k < cword; k++)); do
			case ${words[k]} in
			-o | --output | --out | --every | --count) ((k++)) ;;
			-*) ;;
			*) ((n++)) ;;
			esac
		done
		if ((n == 0)); then
			_pids
		elif [[ $cmd == ctl ]] && ((n == 1)); then
			COMPREPLY=($(compgen -W 'version stats dump capture' -- "$cur"))
		elif [[ $cmd == ctl && $prev == capture ]]; then
			COMPREPLY=($(compgen -W 'on off' -- "$cur"))
		fi ;;
	adb)
		case $action in
		snapshot | enable | disable) ;; # a package name: on the device
		*) _filedir ;;
		esac ;;
	*) _filedir ;;
	esac
} &&
	complete -F _leaksnap leaksnap leakdiff

# ex: filetype=sh
