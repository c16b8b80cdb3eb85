#!/usr/bin/env bash
# args_cost.sh: what recording a function's arguments adds per traced call
# (record --args, issue 20): the same function untraced, traced, traced
# with two integer arguments, and (another function) with one string
# argument; the calling thread's CPU time per call, median of ROUNDS runs.
#
# usage: bench/args_cost.sh [-b BUILD] [-n CALLS] [-r ROUNDS]
# Run as root from the repository root. Prints a Markdown table.
set -euo pipefail
build=build n=200000 rounds=5
while getopts b:n:r: opt; do
	case $opt in
	b) build=$OPTARG ;; n) n=$OPTARG ;; r) rounds=$OPTARG ;; *) exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || { echo "run as root" >&2; exit 2; }
atrace=$(readlink -f "$build/atrace")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O0 -g -fcf-protection=none -o "$tmp/w" bench/args_workload.c
objdump -d "$tmp/w" --disassemble=bench_ints | grep -q 'push   %rbp' ||
	{ echo "bench_ints does not start with push %rbp" >&2; exit 1; }

# One run: ns per call as the workload measured it.
one() { # FN MODE
	local fn=$1 mode=$2 out
	case $mode in
	untraced) out=$("$tmp/w" "$fn" "$n") ;;
	plain) out=$("$atrace" record -o "$tmp/t.data" --no-kernel --filter=off \
		--select="bench_$fn" -- "$tmp/w" "$fn" "$n" 2>/dev/null) ;;
	args) out=$("$atrace" record -o "$tmp/t.data" --no-kernel --filter=off \
		--select="bench_$fn" --args="bench_$fn@$3" -- "$tmp/w" "$fn" "$n" 2>/dev/null) ;;
	esac
	sed -n 's/^ns_per_call=\([0-9.]*\).*/\1/p' <<<"$out"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
row() { # LABEL FN MODE [SPEC]
	local label=$1; shift
	local v
	v=$(for ((r = 0; r < rounds; r++)); do one "$@"; done | median)
	printf '| %s | %s |\n' "$label" "$v"
}
echo "| calls of a 2-argument function ($n per run, median of $rounds) | ns per call |"
echo "| --- | --- |"
row "untraced" ints untraced
row "traced (entry + exit)" ints plain
row "traced, --args=arg1,arg2 (2 integers)" ints args "arg1,arg2"
row "string function traced" str plain
row "string function, --args=arg1/s (34-byte string)" str args "arg1/s"
