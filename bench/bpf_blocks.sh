#!/usr/bin/env bash
# bpf_blocks.sh: what each building block of a recording uprobe program costs
# per run, measured by the kernel's BPF run-time statistics: the programs of
# bench/bpf_blocks.bpf.c, each attached alone to bench_fn_nop5 of
# uprobe_target. Shows where atrace's per-event cost goes compared with
# bpftrace's count().
#
# usage: bench/bpf_blocks.sh [-n CALLS] [-r ROUNDS]
# CALLS per run (default 200000), ROUNDS (default 5); medians. Run as root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.sh"

n=200000 rounds=5
while getopts n:r:h opt; do
	case $opt in
	n) n=$OPTARG ;; r) rounds=$OPTARG ;;
	*) usage; exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || die "run as root"
tree=$(build_tree uprobe_target bpf_blocks)
target=$(readlink -f "$tree/uprobe_target")
assert_unprobed "$target"

progs=(empty count ktime ids reserve_submit reserve_query_submit record record_query lane_claim_publish record_lane force_wakeup)
declare -A what=(
	[empty]="nothing (the statistics' own overhead)"
	[count]="per-CPU array counter += 1 (the least a counting program does)"
	[ktime]="bpf_ktime_get_ns()"
	[ids]="bpf_get_current_pid_tgid() + bpf_get_attach_cookie() + bpf_get_smp_processor_id()"
	[reserve_submit]="per-CPU ring lookup, bpf_ringbuf_reserve, submit with BPF_RB_NO_WAKEUP"
	[reserve_query_submit]="the same + bpf_ringbuf_query(BPF_RB_AVAIL_DATA) for the half-full test"
	[record]="atrace's whole record path (func_entry/func_exit of bpf/atrace.bpf.c)"
	[record_query]="the same with the ring query of atrace before commit 154b546"
	[force_wakeup]="reserve + submit with BPF_RB_FORCE_WAKEUP (a wake-up per record)"
	[lane_claim_publish]="per-CPU slot lane: compare-and-swap claim of a 32-byte slot, publish by sequence number"
	[record_lane]="atrace's record path on a slot lane instead of the ring"
)
declare -A ns
for ((r = 1; r <= rounds; r++)); do
	out=$(prio "$tree/bpf_blocks" "$tree/bpf_blocks.bpf.o" "$target" bench_fn_nop5 "$n" "${progs[@]}")
	for p in "${progs[@]}"; do
		ns[$p]+="$(awk -v p="$p" '$1 == p {sub("prog_ns=", "", $3); print $3}' <<<"$out") "
	done
	echo "round $r/$rounds done" >&2
done
med() { tr ' ' '\n' <<<"${1:-}" | { grep . || true; } | median; }
e=$(med "${ns[empty]}")
echo "kernel $(uname -r), $(nproc) CPUs, $n runs x $rounds rounds, medians"
echo
echo "| program | does | ns per run | minus empty |"
echo "| --- | --- | ---: | ---: |"
for p in "${progs[@]}"; do
	v=$(med "${ns[$p]}")
	printf '| %s | %s | %.1f | %.1f |\n' "$p" "${what[$p]}" "$v" "$(awk -v a="$v" -v b="$e" 'BEGIN {print a - b}')"
done
