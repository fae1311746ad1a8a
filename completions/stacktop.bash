# bash completion for stacktop(1)                          -*- shell-script -*-
#
# The subcommands dump, record, report and diff as the first word; options and
# their values, each subcommand only its own; PIDs for -p/--pid from /proc (a
# comma-separated list, a process name typed instead of a PID becomes its
# PIDs; a second Tab lists PIDs with their names); the sort keys, modes and
# formats; files for -o/--output, report's FILE and diff's files, directories for
# --output-dir; and, after "--" or the first non-option, the command to
# launch and its own arguments. Works with or without bash-completion.

# Every option stacktop knows (tests/e2e/test_docs.sh checks this list
# against src/opts.c); the lists below are the parts each form offers.
_stacktop_opts='-a --all -p --pid --subprocesses --debuginfod --no-runtime-attach -r --rate -d --delay -W --window -b --batch
-n --iterations -l --limit --view -s --sort -L --lines -K --no-kernel
--stack-size --ascii --spike-for --mode -w --wall --events --no-idle --full-names --json --native
-o --output --format --per-thread --memory --force --output-dir --output-mode --base --new
--fail-above --annotate --source-path -h --help -V --version'

_stacktop_top_opts='-a --all -p --pid --subprocesses --debuginfod --no-runtime-attach --mode -w --wall --events -r --rate -d --delay
-W --window -b --batch -n --iterations -l --limit --view -s --sort -L --lines
-K --no-kernel --no-idle --full-names --stack-size --ascii --spike-for --output-dir
--output-mode --annotate --source-path -h --help -V --version'
_stacktop_dump_opts='-p --pid --json --native'
_stacktop_record_opts='-a --all -p --pid --subprocesses --debuginfod --no-runtime-attach --mode -w --wall --events -r --rate -d --delay
-K --no-kernel --stack-size -o --output --format --per-thread --memory --force
--output-mode -h --help'
_stacktop_report_opts='-b --batch -n --iterations -l --limit --view -s --sort
-L --lines -K --no-kernel --full-names --ascii --output-dir --output-mode --annotate --source-path
-h --help'

_stacktop_diff_opts='-b --batch -l --limit -L --lines -K --no-kernel --base --new --fail-above
-h --help'

_stacktop_subcommands='dump record report diff'

# Options that take a value in the next word (or after "=").
_stacktop_takes_arg()
{
	case $1 in
	-p | --pid | -r | --rate | -d | --delay | -W | --window | -n | --iterations | \
		-l | --limit | --view | -s | --sort | --stack-size | --spike-for | --mode | \
		-o | --output | --format | --output-dir | --output-mode | --base | --new | \
		--fail-above | --annotate | --source-path) return 0 ;;
	esac
	return 1
}

# COMPREPLY = file (or, with -d, directory) names starting with $2.
_stacktop_files()
{
	local IFS=$'\n'
	COMPREPLY=($(compgen "$1" -- "$2"))
	compopt -o filenames 2>/dev/null
	return 0
}

# Complete the PID list in $1: the part after the last comma is a PID
# prefix or a process name prefix.
_stacktop_pids()
{
	local cur=$1 head= last d pid comm
	local -a pids=() shown=() names=()

	if [[ $cur == *,* ]]; then
		head=${cur%,*},
		last=${cur##*,}
	else
		last=$cur
	fi
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		comm=
		read -r comm 2>/dev/null <"$d/comm" || continue
		if [[ $last == [0-9]* || -z $last ]]; then
			[[ $pid == "$last"* ]] || continue
		else
			[[ $comm == "$last"* ]] || continue
			names+=("$comm")
		fi
		pids+=("$head$pid")
		shown+=("$pid ($comm)")
	done

	if [[ -n $last && $last != [0-9]* ]]; then
		# By name: one name completes to all its PIDs, several to the names.
		local -A uniq=()
		for comm in "${names[@]}"; do uniq[$comm]=1; done
		if ((${#uniq[@]} == 1)); then
			local IFS=,
			COMPREPLY=("$head${pids[*]#"$head"}")
		else
			COMPREPLY=()
			for comm in "${!uniq[@]}"; do COMPREPLY+=("$head$comm"); done
		fi
	elif ((COMP_TYPE == 63 && ${#pids[@]} > 1)); then
		# Only listing, nothing inserted: show the names too.
		COMPREPLY=("${shown[@]}")
	else
		COMPREPLY=("${pids[@]}")
	fi
}

# Complete a value for option $1, current text $2.
_stacktop_value()
{
	case $1 in
	-p | --pid) _stacktop_pids "$2" ;;
	-s | --sort) COMPREPLY=($(compgen -W 'own total owntime totaltime' -- "$2")) ;;
	--view) COMPREPLY=($(compgen -W 'top icicle threads memory processes' -- "$2")) ;;
	--mode) COMPREPLY=($(compgen -W 'cpu wall' -- "$2")) ;;
	--events) COMPREPLY=($(compgen -W 'auto per-cpu inherit per-thread' -- "$2")) ;;
	--format) COMPREPLY=($(compgen -W 'folded pprof speedscope' -- "$2")) ;;
	-o | --output | --base | --new) _stacktop_files -f "$2" ;;
	--fail-above) COMPREPLY=($(compgen -W '1 2 5 10' -- "$2")) ;;
	--output-dir | --source-path) _stacktop_files -d "$2" ;;
	--stack-size) COMPREPLY=($(compgen -W '8192 16384 32768 65528' -- "$2")) ;;
	--output-mode) COMPREPLY=($(compgen -W '0600 0640 0644' -- "$2")) ;;
	*) COMPREPLY=() ;;
	esac
}

_stacktop()
{
	local -a ws=() at=()
	local i n=-1 w cur opt cmd=-1 joined=0

	# Rebuild the words with "--opt=value" in one piece ('=' breaks words
	# in COMP_WORDS); at[] maps each back to its COMP_WORDS index.
	for ((i = 0; i <= COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if ((joined)); then
			ws[n]+=$w
			joined=0
		elif [[ $w == = && $n -ge 1 && ${ws[n]} == --* && ${ws[n]} != *=* ]]; then
			ws[n]+==
			joined=1
		else
			ws[++n]=$w
			at[n]=$i
		fi
	done
	cur=${ws[n]}

	# The first word: a subcommand, an option, or the command to launch.
	if ((n == 1)); then
		case $cur in
		-*) COMPREPLY=($(compgen -W "$_stacktop_top_opts" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "$_stacktop_subcommands" -- "$cur") $(compgen -c -- "$cur")) ;;
		esac
		return 0
	fi

	# A subcommand is only ever the first word.
	local sub=top first=1 opts=$_stacktop_top_opts
	case ${ws[1]} in
	dump | record | report | diff)
		sub=${ws[1]}
		first=2
		;;
	esac
	case $sub in
	dump) opts=$_stacktop_dump_opts ;;
	record) opts=$_stacktop_record_opts ;;
	report) opts=$_stacktop_report_opts ;;
	diff) opts=$_stacktop_diff_opts ;;
	esac

	# Where does the command start? getopt stops at "--" or the first
	# non-option; an option's value is never the command. valopt is set
	# when the word being completed is an option's value. dump launches
	# nothing, and for report that word is the FILE (hasfile).
	local valopt= j c haspid=0 hasfile=0 dashdash=0
	for ((i = first; i < n; i++)); do
		w=${ws[i]}
		if ((dashdash)); then
			hasfile=1
			continue
		fi
		case $w in
		--)
			if [[ $sub == report ]]; then
				dashdash=1
				continue
			fi
			[[ $sub == dump ]] && continue
			cmd=$((i + 1))
			break
			;;
		--pid=*) haspid=1 ;;
		--*=*) ;;
		--*)
			[[ $w == --pid ]] && haspid=1
			if _stacktop_takes_arg "$w"; then
				((++i == n)) && valopt=$w
			fi
			;;
		-?*)
			# A cluster like -bLp: a value-taking letter eats the rest
			# of the word, or the next word when it is last.
			for ((j = 1; j < ${#w}; j++)); do
				c=${w:j:1}
				if _stacktop_takes_arg "-$c"; then
					[[ $c == p ]] && haspid=1
					if ((j == ${#w} - 1)); then
						((++i == n)) && valopt=-$c
					fi
					break
				fi
			done
			;;
		*)
			case $sub in
			report) hasfile=1 ;;
			dump | diff) ;;
			*)
				cmd=$i
				break
				;;
			esac
			;;
		esac
	done

	if ((cmd >= 0)); then
		if ((cmd == n)); then
			COMPREPLY=($(compgen -c -- "$cur"))
		elif declare -F _command_offset >/dev/null; then
			_command_offset "${at[cmd]}"
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return 0
	fi
	if [[ -n $valopt ]]; then
		_stacktop_value "$valopt" "$cur"
		return 0
	fi
	if ((dashdash)); then
		((hasfile)) || _stacktop_files -f "$cur"
		return 0
	fi
	case $cur in
	--*=*)
		opt=${cur%%=*}
		_stacktop_takes_arg "$opt" && _stacktop_value "$opt" "${cur#*=}"
		;;
	-*) COMPREPLY=($(compgen -W "$opts" -- "$cur")) ;;
	*)
		if [[ $sub == diff ]]; then
			_stacktop_files -f "$cur"
		elif [[ $sub == report ]]; then
			# The profile to open; after it, nothing but options.
			if ((hasfile)); then
				COMPREPLY=($(compgen -W "$opts" -- "$cur"))
			else
				_stacktop_files -f "$cur"
			fi
		elif [[ $sub == dump ]] || ((haspid)); then
			# With -p there is no command: offer the options instead.
			COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		else
			COMPREPLY=($(compgen -c -- "$cur"))
		fi
		;;
	esac
	return 0
}

complete -F _stacktop stacktop
