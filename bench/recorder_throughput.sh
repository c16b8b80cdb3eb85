#!/usr/bin/env bash
# recorder_throughput.sh: whether atrace's recorder keeps up with a traced
# thread that does nothing but traced calls, and what it costs per event.
# `atrace record --filter=off` (otherwise default options) on uprobe_target
# calling bench_fn_nop5 (the cheapest probe path: the most events per
# second) N times; for each atrace given, side by side in rotating order:
# events written, events lost, and the recorder's CPU per event (the CPU
# time of atrace and its target together, from getrusage of the children,
# minus the target's own loop as it measures it).
#
# usage: bench/recorder_throughput.sh [-n CALLS] [-r ROUNDS] ATRACE...
#   ATRACE  paths of atrace binaries to compare (e.g. build/atrace and one
#           built at another commit); each is copied first
#   -n      calls per run (default 3000000: 6 million events)
#   -r      rounds (default 3); medians
# Run as root from the repository root. Prints a Markdown table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.sh"

n=3000000 rounds=3
while getopts n:r:h opt; do
	case $opt in
	n) n=$OPTARG ;; r) rounds=$OPTARG ;;
	*) usage; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
(($# > 0)) || { usage; exit 2; }
[[ $EUID -eq 0 ]] || die "run as root"
need_tools jq
target=$(readlink -f "$(build_target)")
assert_unprobed "$target"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bins=()
for a in "$@"; do
	[[ -x $a ]] || die "$a: not an executable"
	bins+=("$tmp/atrace${#bins[@]}")
	cp "$a" "${bins[-1]}"
done

declare -A written lost rec_ns
for ((r = 1; r <= rounds; r++)); do
	for ((k = 0; k < ${#bins[@]}; k++)); do
		i=$(((k + r) % ${#bins[@]}))
		out=$( { /usr/bin/time -f "cpu_s=%U+%S" "${PRIO[@]}" "${bins[i]}" record -o "$tmp/t.data" \
			--filter=off --select=bench_fn_nop5 -- "$target" bench_fn_nop5 "$n" >"$tmp/target.out"; } 2>&1)
		cpu=$(sed -n 's/.*cpu_s=\([0-9.]*\)+\([0-9.]*\).*/\1 \2/p' <<<"$out" | awk '{print $1 + $2}')
		target_ns=$(parse_ns <"$tmp/target.out")
		w=$(sed -n 's/^atrace: \([0-9]*\) events from .*/\1/p' <<<"$out")
		l=$("${bins[i]}" report --format=json -i "$tmp/t.data" | jq '.lost_events // 0')
		written[$i]+="$w " lost[$i]+="$l "
		rec_ns[$i]+="$(awk -v c="$cpu" -v t="$target_ns" -v n="$n" -v w="$w" \
			'BEGIN {printf "%.0f", (c * 1e9 - t * n) / (w > 0 ? w : 1)}') "
	done
	echo "round $r/$rounds done" >&2
done
med() { tr ' ' '\n' <<<"${1:-}" | { grep . || true; } | median; }
echo "kernel $(uname -r), $(nproc) CPUs, bench_fn_nop5 x $n ($((2 * n)) events) per run, $rounds rounds, medians"
echo
echo "| atrace | events written | events lost | recorder CPU ns per event |"
echo "| --- | ---: | ---: | ---: |"
for ((i = 0; i < ${#bins[@]}; i++)); do
	echo "| \`${*:i+1:1}\` | $(med "${written[$i]}") | $(med "${lost[$i]}") | $(med "${rec_ns[$i]}") |"
done
