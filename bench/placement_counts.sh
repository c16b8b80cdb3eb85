#!/usr/bin/env bash
# placement_counts.sh: how many functions of real modules take each uprobe
# path with every entry probe at +0 (as bpftrace and perf place them) and
# with atrace's placement (uprobes/placement.h), from `atrace list`. Nothing
# is attached; root is not needed.
#
# usage: bench/placement_counts.sh [-b BUILD]
#   -b  build tree holding atrace (default: build)
# Prints a Markdown table.
set -euo pipefail
build=build
while getopts b:h opt; do
	case $opt in
	b) build=$OPTARG ;;
	*) sed -n '2,9p' "$0" >&2; exit 2 ;;
	esac
done
atrace=$(readlink -f "$build/atrace" 2>/dev/null || true)
[[ -x $atrace ]] || { echo "placement_counts.sh: $build/atrace not found" >&2; exit 1; }
# module label, a program that loads it, the selector
targets=(
	"libc.so.6|/bin/true|libc.so.6:*"
	"python3|/usr/bin/python3|*"
	"libsqlite3.so.0|/usr/bin/sqlite3|libsqlite3.so*:*"
)
# "1958 functions: 0 nop5 (optimized uprobe), 738 emulated, 1214 single-step, ..." -> fields
counts() {
	awk '/ functions: / {
		n = $1; nop5 = em = ss = ref = moved = 0
		for (i = 2; i <= NF; i++) {
			w = $i; sub(/[,;]$/, "", w)
			if ($(i + 1) ~ /^nop5/) nop5 = w
			if ($(i + 1) ~ /^emulated/) em = w
			if ($(i + 1) ~ /^single-step/) ss = w
			if ($(i + 1) ~ /^refused/) ref = w
			if ($(i + 1) == "probed" && $(i + 2) == "past") moved = w
		}
		print n, nop5, em, ss, ref, moved
	}'
}
echo "| module | functions | at +0: nop5 / emulated / single-step / refused | atrace: nop5 / emulated / single-step / refused | probes moved | single-stepped: at +0 -> atrace |"
echo "| --- | ---: | --- | --- | ---: | --- |"
for t in "${targets[@]}"; do
	IFS='|' read -r label prog sel <<<"$t"
	if [[ ! -x $prog ]]; then
		echo "| $label | $prog missing | | | | |"
		continue
	fi
	read -r n a0 b0 c0 d0 _ < <("$atrace" list --probe-at-entry "$prog" "$sel" 2>/dev/null | counts)
	read -r _ a1 b1 c1 d1 m < <("$atrace" list "$prog" "$sel" 2>/dev/null | counts)
	echo "| $label | $n | $a0 / $b0 / $c0 / $d0 | $a1 / $b1 / $c1 / $d1 | $m | $c0 -> $c1 |"
done
