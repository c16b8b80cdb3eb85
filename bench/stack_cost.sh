#!/usr/bin/env bash
# stack_cost.sh: what recording the user call stack adds per traced call
# (record --stack, issue 20): the same function untraced, traced, and
# traced with --stack at the default depth (32 frames: the small record)
# and at the cap (127: the large one); the calling thread's CPU time per
# call, median of ROUNDS runs. The workload is args_cost.sh's, with frame
# pointers: its stacks are 3 frames (bench_ints, main, libc's caller of
# main, where the walk ends), so the two depths differ by the record's
# size, not by the walk.
#
# usage: bench/stack_cost.sh [-b BUILD] [-n CALLS] [-r ROUNDS]
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
cc -O0 -g -fno-omit-frame-pointer -fcf-protection=none -o "$tmp/w" bench/args_workload.c
objdump -d "$tmp/w" --disassemble=bench_ints | grep -q 'push   %rbp' ||
	{ echo "bench_ints does not start with push %rbp" >&2; exit 1; }

# One run: ns per call as the workload measured it.
one() { # MODE [EXTRA...]
	local mode=$1 out
	shift
	case $mode in
	untraced) out=$("$tmp/w" ints "$n") ;;
	traced) out=$("$atrace" record -o "$tmp/t.data" --no-kernel --filter=off \
		--select=bench_ints "$@" -- "$tmp/w" ints "$n" 2>/dev/null) ;;
	esac
	sed -n 's/^ns_per_call=\([0-9.]*\).*/\1/p' <<<"$out"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
row() { # LABEL MODE [EXTRA...]
	local label=$1; shift
	local v
	v=$(for ((r = 0; r < rounds; r++)); do one "$@"; done | median)
	printf '| %s | %s |\n' "$label" "$v"
}
echo "| calls of one function ($n per run, median of $rounds) | ns per call |"
echo "| --- | --- |"
row "untraced" untraced
row "traced (entry + exit)" traced
row "traced, --stack (depth 32)" traced --stack=bench_ints
row "traced, --stack --stack-depth=127" traced --stack=bench_ints --stack-depth=127
