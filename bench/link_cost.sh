#!/usr/bin/env bash
# link_cost.sh: what one uprobe_multi link costs to create and to close, by
# the number of probes it holds (issue 29: the link groups of
# record/attach.h are sized from this). bench/link_cost.c attaches a
# program that returns at once to the first N functions of libc.so.6 (N =
# 1, 16, 64, 256, 1024, all), limited to an idle `sleep` process (the
# probes are installed in its copy of libc, no hit), and closes the link.
# The close is timed to its return: the probes' removal plus the kernel's
# grace-period waits (synchronize_rcu_tasks_trace, uretprobes_srcu). The
# per-probe cost is (close(N) - close(1)) / (N - 1): what N = 1 takes is
# the fixed cost, the grace periods.
#
# usage: bench/link_cost.sh [-r ROUNDS]      (root; prints a Markdown table)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=5
while getopts r:h opt; do
	case $opt in r) rounds=$OPTARG ;; *) sed -n 2,13p "$0"; exit 2 ;; esac
done
[[ $EUID -eq 0 ]] || { echo "run as root" >&2; exit 1; }
tmp=$(mktemp -d)
sleep 600 &
idle=$!
trap 'kill $idle 2>/dev/null; cp "$tmp/raw" /tmp/link_cost.raw 2>/dev/null; rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/link_cost" "$here/link_cost.c"
libc=$(awk '$NF ~ /\/libc\.so\.6$/ {print $NF; exit}' "/proc/$idle/maps")
# Function symbols, one per address, as file offsets: the text segment's
# offset and address differ by its p_vaddr - p_offset.
read -r off vaddr < <(readelf -lW "$libc" | awk '$1 == "LOAD" && / R E / {print $2, $3; exit}')
delta=$((vaddr - off))
nm -D --defined-only "$libc" | awk '$2 ~ /^[Tt]$/ {print $1}' | sort -u |
	while read -r a; do printf '%x\n' $((16#$a - delta)); done >"$tmp/offsets"
echo "kernel $(uname -r), $(nproc) CPUs, $rounds rounds, medians; $(wc -l <"$tmp/offsets") functions of $libc, on one idle process"
echo
echo "| probes | create ms | close ms | create per probe us | close per probe us |"
echo "| ---: | ---: | ---: | ---: | ---: |"
"$tmp/link_cost" "$libc" "$idle" "$rounds" 1 16 64 256 1024 100000 <"$tmp/offsets" >"$tmp/raw" || { cat "$tmp/raw"; exit 1; }
med() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
for n in $(awk '{print $1}' "$tmp/raw" | sort -nu); do
	c=$(awk -v n=$n '$1 == n {print $2}' "$tmp/raw" | med)
	d=$(awk -v n=$n '$1 == n {print $3}' "$tmp/raw" | med)
	echo "$n $c $d"
done | awk '{c[NR] = $2; d[NR] = $3; n[NR] = $1}
	END {for (i = 1; i <= NR; i++) printf "| %d | %.2f | %.2f | %s | %s |\n", n[i], c[i] / 1e3, d[i] / 1e3, slope(c, i), slope(d, i)}
	function slope(v, i) { return n[i] > 1 ? sprintf("%.1f", (v[i] - v[1]) / (n[i] - 1)) : "-" }'
