# bash completion for stacktop(1)                          -*- shell-script -*-
#
# Options and their values; PIDs for -p/--pid from /proc (a comma-separated
# list, a process name typed instead of a PID becomes its PIDs; a second Tab
# lists PIDs with their names); the sort keys for -s/--sort; and, after "--"
# or the first non-option, the command to launch and its own arguments.
# Works with or without the bash-completion package.

_stacktop_opts='-p --pid -r --rate -d --delay -W --window -b --batch
-n --iterations -l --limit -s --sort -L --lines -K --no-kernel
--stack-size --ascii --spike-for -h --help -V --version'

# Options that take a value in the next word (or after "=").
_stacktop_takes_arg()
{
	case $1 in
	-p | --pid | -r | --rate | -d | --delay | -W | --window | -n | --iterations | \
		-l | --limit | -s | --sort | --stack-size | --spike-for) return 0 ;;
	esac
	return 1
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
	--stack-size) COMPREPLY=($(compgen -W '8192 16384 32768 65528' -- "$2")) ;;
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

	# Where does the command start? getopt stops at "--" or the first
	# non-option; an option's value is never the command. valopt is set
	# when the word being completed is an option's value.
	local valopt= j c haspid=0
	for ((i = 1; i < n; i++)); do
		w=${ws[i]}
		case $w in
		--)
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
			cmd=$i
			break
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
	case $cur in
	--*=*)
		opt=${cur%%=*}
		_stacktop_takes_arg "$opt" && _stacktop_value "$opt" "${cur#*=}"
		;;
	-*) COMPREPLY=($(compgen -W "$_stacktop_opts" -- "$cur")) ;;
	*)
		# With -p there is no command: offer the options instead.
		if ((haspid)); then
			COMPREPLY=($(compgen -W "$_stacktop_opts" -- "$cur"))
		else
			COMPREPLY=($(compgen -c -- "$cur"))
		fi
		;;
	esac
	return 0
}

complete -F _stacktop stacktop
