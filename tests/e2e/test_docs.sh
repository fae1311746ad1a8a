#!/bin/bash
# test_docs.sh — the documentation cannot drift from the command line.
#
# Reads the long options from the getopt_long table in src/app/opts.c and the
# short ones from its optstring, then checks that each is documented in
# `build/stacktop --help`, doc/stacktop.1, README.md and the bash, zsh and
# fish completions; and, the other way round, that --help and the
# completions offer no long option the parser does not know. Also checks
# that the man page formats without warnings when groff is installed.
#
# Exit 0 when everything matches; otherwise one line per problem and exit 1.

set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1

fails=0
bad() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

BIN=build/stacktop
OPTS_C=src/app/opts.c
MAN=doc/stacktop.1
README=README.md
BASH_C=completions/stacktop.bash
ZSH_C=completions/_stacktop
FISH_C=completions/stacktop.fish

for f in "$OPTS_C" "$MAN" "$README" "$BASH_C" "$ZSH_C" "$FISH_C"; do
	[[ -f $f ]] || bad "$f is missing"
done
if [[ ! -x $BIN ]]; then
	bad "$BIN is not built (run make all)"
	echo "$fails problem(s)"
	exit 1
fi

# Long options: lines like {"pid", required_argument, NULL, 'p'},
mapfile -t longs < <(sed -n -E 's/^[[:space:]]*\{[[:space:]]*"([a-z][a-z0-9-]*)",[[:space:]]*(no|required|optional)_argument.*/\1/p' "$OPTS_C")
# Short options: the letters of the optstring, without '+', ':'.
optstring=$(sed -n -E 's/^static const char opts_short\[\] = "([^"]*)";.*/\1/p' "$OPTS_C")
shorts=$(printf '%s' "$optstring" | tr -d '+:')

if ((${#longs[@]} < 10)); then
	bad "found only ${#longs[@]} long options in $OPTS_C (${longs[*]}): did the table's format change?"
fi
if [[ ${#shorts} -lt 10 ]]; then
	bad "found only '$shorts' as short options in $OPTS_C: did the optstring change?"
fi
echo "long options: ${longs[*]}"
echo "short options: $shorts"

if ! help=$("$BIN" --help 2>&1); then
	bad "$BIN --help exits non-zero"
fi
if ! "$BIN" --version 2>&1 | grep -qE '^stacktop [0-9]'; then
	bad "$BIN --version does not print 'stacktop VERSION'"
fi

# The man page source writes "\-" for "-"; compare the text as written.
man_text=$(sed 's/\\-/-/g; s/\\%//g' "$MAN")
readme_text=$(cat "$README")
# bash: the list of options it offers.
bash_text=$(sed -n "/^_stacktop_opts=/,/'\$/p" "$BASH_C")
[[ -n $bash_text ]] || bad "no _stacktop_opts='...' list in $BASH_C"
zsh_text=$(cat "$ZSH_C")
fish_text=$(cat "$FISH_C")

# has TEXT REGEX: grep -E on a variable.
has() {
	printf '%s\n' "$1" | grep -qE -- "$2"
}

end='([^A-Za-z0-9-]|$)'
for name in "${longs[@]}"; do
	has "$help" "--$name$end" || bad "--$name is not in --help"
	has "$man_text" "--$name$end" || bad "--$name is not in $MAN"
	has "$readme_text" "--$name$end" || bad "--$name is not in $README"
	has "$bash_text" "--$name$end" || bad "--$name is not in $BASH_C"
	has "$zsh_text" "--$name$end" || bad "--$name is not in $ZSH_C"
	has "$fish_text" "-l $name$end" || bad "--$name is not in $FISH_C (complete ... -l $name)"
done

for ((i = 0; i < ${#shorts}; i++)); do
	c=${shorts:i:1}
	has "$help" "(^|[^A-Za-z0-9-])-$c," || bad "-$c is not in --help (as '-$c, --long')"
	has "$man_text" "-$c\"? *\"?, " || bad "-$c is not in $MAN (as '-$c, --long')"
	has "$readme_text" "\`-$c\`" || bad "-$c is not in $README"
	has "$bash_text" "(^|[ '])-$c( |$)" || bad "-$c is not in $BASH_C"
	has "$zsh_text" "\{-$c[+,]" || bad "-$c is not in $ZSH_C"
	has "$fish_text" "-s $c " || bad "-$c is not in $FISH_C (complete ... -s $c)"
done

# The other way round: no long option the parser does not know. In --help,
# the examples are commands of their own (./server --port), so stop there.
known=" ${longs[*]} "
check_known() { # WHERE; option names on stdin
	local where=$1 o
	while read -r o; do
		[[ -z $o ]] && continue
		[[ $known == *" $o "* ]] || bad "$where offers --$o, which src/app/opts.c does not know"
	done
}
# (check_known reads from a process substitution, not a pipe, so that its
# failures are counted in this shell.)
check_known "--help" < <(printf '%s\n' "$help" | sed '/^Examples:/,$d' |
	grep -oE -- '--[a-z][a-z0-9-]*' | sed 's/^--//' | sort -u)
check_known "$BASH_C" < <(printf '%s\n' "$bash_text" |
	grep -oE -- '--[a-z][a-z0-9-]*' | sed 's/^--//' | sort -u)
check_known "$ZSH_C" < <(grep -oE -- "[{,]--[a-z][a-z0-9-]*[=}]|'--[a-z][a-z0-9-]*=\[" "$ZSH_C" |
	grep -oE -- '--[a-z][a-z0-9-]*' | sed 's/^--//' | sort -u)
check_known "$FISH_C" < <(grep -E '^complete -c stacktop' "$FISH_C" |
	grep -oE -- ' -l [a-z][a-z0-9-]*' | sed 's/^ -l //' | sort -u)

# The man page must format cleanly.
if command -v groff >/dev/null; then
	warnings=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
	[[ -z $warnings ]] || bad "groff warns about $MAN: $warnings"
fi

# The shell completions must at least parse.
bash -n "$BASH_C" || bad "$BASH_C does not parse"
if command -v zsh >/dev/null; then zsh -n "$ZSH_C" || bad "$ZSH_C does not parse"; fi
if command -v fish >/dev/null; then fish -n "$FISH_C" || bad "$FISH_C does not parse"; fi

if ((fails)); then
	echo "$fails problem(s)"
	exit 1
fi
echo "docs match the command line: ${#longs[@]} long and ${#shorts} short options"
exit 0
