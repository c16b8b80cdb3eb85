#!/usr/bin/env bash
# uprobe_paths.sh: what one uprobe hit costs on this machine, by the kind of
# instruction probed (single-stepped out of line, emulated, optimized NOP5),
# and what a uretprobe adds. Uses bpftrace (a counting program) so that it
# does not depend on atrace. Figures: kernel-notes/emulated-vs-single-step.md.
#
# usage: bench/uprobe_paths.sh [-n CALLS] [-r ROUNDS] [-w]
# CALLS per run (default 200000; single-stepped entries run CALLS/10),
# ROUNDS (default 5); -w: elapsed time instead of the calling thread's CPU
# time. Builds bench/ on its own first (see bench_lib.sh).
# Run as root from the repository root. Prints a Markdown table; the cost is
# the median over ROUNDS of (traced ns/call - untraced ns/call). Target and
# bpftrace run at nice -10 (BENCH_NICE=N to change, "" for none).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.sh"

n=200000 rounds=5
while getopts n:r:wh opt; do
	case $opt in
	n) n=$OPTARG ;; r) rounds=$OPTARG ;; w) METRIC=wall ;;
	*) usage; exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || die "run as root (bpftrace needs it)"
need_tools bpftrace bpftool jq objdump
target=$(readlink -f "$(build_target)")
assert_unprobed "$target"
trap bt_cleanup EXIT

# function | path this kernel takes (what the numbers are meant to show)
nop5_path="optimized (uprobe syscall)"
kernel_has __x64_sys_uprobe || nop5_path="emulated (no optimized uprobes)"
fns=(
	"bench_e_movimm|single-step"
	"bench_e_movreg|single-step"
	"bench_e_subrsp|single-step"
	"bench_e_endbr64|single-step"
	"bench_e_movrr|single-step (a NOP in effect, not recognised)"
	"bench_e_push|emulated (push)"
	"bench_e_jmp0|emulated (jmp)"
	"bench_e_nop1|emulated (nop)"
	"bench_e_nop2|emulated (nop)"
	"bench_e_nop3|emulated (nop)"
	"bench_e_nop4|emulated (nop)"
	"bench_e_nop6|emulated (nop)"
	"bench_e_nop5split|emulated (nop5 across a page: not optimizable)"
	"bench_e_nop5|$nop5_path"
)

declare -A base traced
for ((r = 1; r <= rounds; r++)); do
	for spec in "${fns[@]}"; do
		fn=${spec%%|*} k=$n
		[[ $spec == *single-step* ]] && k=$((n / 10))
		base[$fn]+="$(run_plain "$target" "$fn" "$k") "
		bt_start "uprobe:$target:$fn { @c = count(); }" 1
		ns=$(run_plain "$target" "$fn" "$k")
		bt_stop
		c=$(bt_count c)
		[[ $c -eq $k ]] || die "$fn: bpftrace counted $c hits, expected $k"
		traced[$fn]+="$ns "
	done
	# the return probe alone, and entry + return, on the optimized NOP5
	fn=bench_e_nop5
	bt_start "uretprobe:$target:$fn { @r = count(); }" 1
	traced[ret]+="$(run_plain "$target" "$fn" "$n") "
	bt_stop
	c=$(bt_count r)
	[[ $c -eq $n ]] || die "$fn: bpftrace counted $c returns, expected $n"
	bt_start "uprobe:$target:$fn { @c = count(); } uretprobe:$target:$fn { @r = count(); }" 2
	traced[both]+="$(run_plain "$target" "$fn" "$n") "
	bt_stop
	echo "round $r/$rounds done" >&2
done

med() { tr ' ' '\n' <<<"${1:-}" | { grep . || true; } | median; }
echo "kernel $(uname -r), $(nproc) CPUs, bpftrace $(bpftrace --version | awk '{print $2}'), $n calls x $rounds rounds, medians of $METRIC ns/call"
echo
echo "| function | entry bytes | entry instruction | path | untraced ns/call | uprobe ns/call | added ns |"
echo "| --- | --- | --- | --- | ---: | ---: | ---: |"
for spec in "${fns[@]}"; do
	fn=${spec%%|*} path=${spec#*|}
	b=$(med "${base[$fn]}") t=$(med "${traced[$fn]}")
	printf '| %s | `%s` | `%s` | %s | %.1f | %.1f | %.0f |\n' "$fn" \
		"$(entry_bytes "$target" "$fn")" "$(entry_insn "$target" "$fn")" "$path" \
		"$b" "$t" "$(awk -v t="$t" -v b="$b" 'BEGIN {print t - b}')"
done
b=$(med "${base[bench_e_nop5]}")
for k in ret both; do
	t=$(med "${traced[$k]}")
	label="uretprobe only"; [[ $k == both ]] && label="uprobe + uretprobe"
	printf '| bench_e_nop5 | | | %s | %.1f | %.1f | %.0f |\n' "$label" "$b" "$t" \
		"$(awk -v t="$t" -v b="$b" 'BEGIN {print t - b}')"
done
