#!/bin/bash
# tests/lint/layers.sh — the folders of src/ are layers: a file includes
# headers of its own folder or of folders below it, never above. The order,
# lowest first, is the one doc/DESIGN.md maps. Prints each arrow that points
# up and exits 1 if there is one (or a folder the order does not name).
set -u
cd "$(dirname "$0")/../.."
ORDER="lib elf proc sample unwind symbols runtime model formats memory ui app"
rank() {
	local i=0 d
	for d in $ORDER; do
		[ "$d" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo -1
}
bad=0
for dir in src/*/ include/stacktop/*/; do
	d=$(basename "$dir")
	r=$(rank "$d")
	if [ "$r" -lt 0 ]; then
		echo "folder $dir is not in the layer order ($ORDER)"; bad=1; continue
	fi
	for f in "$dir"*.[ch]; do
		[ -e "$f" ] || continue
		while IFS= read -r inc; do
			to=${inc%%/*}
			rt=$(rank "$to")
			if [ "$rt" -lt 0 ] || [ "$rt" -gt "$r" ]; then
				echo "$f includes stacktop/$inc: $to is above $d"; bad=1
			fi
		done < <(sed -n 's/^#include "stacktop\/\([^"]*\)".*/\1/p' "$f")
	done
done
# Headers live in the folder of their module.
for h in include/stacktop/*.h; do
	[ -e "$h" ] && { echo "$h: a header outside a stage folder"; bad=1; }
done
for c in src/*/*.c; do
	m=${c#src/}
	h=include/stacktop/${m%.c}.h
	[ -e "$h" ] || { echo "$c has no header $h"; bad=1; }
done
[ $bad -eq 0 ] && echo "layers: every include points down ($ORDER)"
exit $bad
