#!/usr/bin/env bash
# args_cost.sh: what recording a function's arguments adds per traced call
# (record --args, issue 20), against the same call traced without them and
# against bpftrace reading the same arguments: a 2-integer function and
# (another function) one with a string argument, each untraced, traced by
# atrace, traced with --args, and by bpftrace printing the same values with
# an entry and an exit time stamp (what atrace records). The figure is the
# calling thread's CPU time per call, median of ROUNDS runs.
#
# usage: bench/args_cost.sh [-b BUILD] [-n CALLS] [-r ROUNDS]
# Run as root from the repository root. Prints a Markdown table; the
# bpftrace column is "-" where bpftrace is not installed.
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
one() { # FN MODE [SPEC]
	local fn=$1 mode=$2 out
	case $mode in
	untraced) out=$("$tmp/w" "$fn" "$n") ;;
	plain) out=$("$atrace" record -o "$tmp/t.data" --no-kernel --filter=off \
		--select="bench_$fn" -- "$tmp/w" "$fn" "$n" 2>/dev/null) ;;
	args) out=$("$atrace" record -o "$tmp/t.data" --no-kernel --filter=off \
		--select="bench_$fn" --args="bench_$fn@$3" -- "$tmp/w" "$fn" "$n" 2>/dev/null) ;;
	bpftrace) out=$(bpftrace -e "$3" -c "$tmp/w $fn $n" 2>/dev/null) ;;
	esac
	sed -n 's/^ns_per_call=\([0-9.]*\).*/\1/p' <<<"$out"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
cell() { # FN MODE [SPEC]
	for ((r = 0; r < rounds; r++)); do one "$@"; done | median
}
# bpftrace: the same values printed from the entry, a time stamp from each
# end (atrace's entry and exit records).
bt_ints='uprobe:'$tmp/w':bench_ints { printf("%llu %ld %ld\n", nsecs, arg0, arg1); }
uretprobe:'$tmp/w':bench_ints { printf("%llu\n", nsecs); }'
bt_str='uprobe:'$tmp/w':bench_str { printf("%llu %s\n", nsecs, str(arg0)); }
uretprobe:'$tmp/w':bench_str { printf("%llu\n", nsecs); }'
bt() { # FN SCRIPT
	if command -v bpftrace >/dev/null; then cell "$1" bpftrace "$2"; else echo -; fi
}
echo "| ns per call ($n calls per run, median of $rounds) | untraced | atrace | atrace --args | bpftrace, same values |"
echo "| --- | --- | --- | --- | --- |"
printf '| 2 integers (--args=arg1,arg2) | %s | %s | %s | %s |\n' "$(cell ints untraced)" \
	"$(cell ints plain)" "$(cell ints args arg1,arg2)" "$(bt ints "$bt_ints")"
printf '| a 34-byte string (--args=arg1/s) | %s | %s | %s | %s |\n' "$(cell str untraced)" \
	"$(cell str plain)" "$(cell str args arg1/s)" "$(bt str "$bt_str")"
