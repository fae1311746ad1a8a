#!/bin/bash
# tests/lint/format.sh — every C file of the project matches .clang-format.
# Lists the files that do not and exits 1 if there is one; `make format`
# rewrites them.
set -u
cd "$(dirname "$0")/../.."
bad=0
while IFS= read -r f; do
	if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
		echo "$f: not formatted (make format)"; bad=1
	fi
done < <(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' 'tests/*.c' 'tests/*.h' 'bench/*.c')
[ $bad -eq 0 ] && echo "format: every C file matches .clang-format"
exit $bad
