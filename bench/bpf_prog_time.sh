#!/usr/bin/env bash
# bpf_prog_time.sh: the run time per hit of the BPF programs themselves,
# atrace's and bpftrace's, on the same function (bench_fn_nop5 of
# uprobe_target by default: the cheapest probe path, where the programs
# weigh most), from the kernel's BPF run-time statistics (`sysctl
# kernel.bpf_stats_enabled=1`, which adds its own ~45 ns per run to every
# program alike). bpftrace counts entries and returns (count()); atrace
# records them (--filter=off, otherwise its defaults). Each tool runs on
# its own; the statistics are read while the target runs.
#
# usage: bench/bpf_prog_time.sh [-b BUILD] [-f FUNCTION] [-a ARGS]
#   -b  build tree holding atrace (default: build)
#   -f  function of uprobe_target (default: bench_fn_nop5)
#   -a  extra options for `atrace record`, e.g. "--attach=perf"
# Run as root from the repository root. Prints a Markdown table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.sh"

build=build fn=bench_fn_nop5 atrace_args=""
while getopts b:f:a:h opt; do
	case $opt in
	b) build=$OPTARG ;; f) fn=$OPTARG ;; a) atrace_args=$OPTARG ;;
	*) usage; exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || die "run as root"
need_tools bpftrace bpftool jq
target=$(readlink -f "$(build_target)")
assert_unprobed "$target"
atrace=$(readlink -f "$build/atrace")
[[ -x $atrace ]] || die "$build/atrace not found"
tmp=$(mktemp -d)
was=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled="$was"; bt_cleanup; rm -rf "$tmp"' EXIT
sysctl -q kernel.bpf_stats_enabled=1

# The ids of the programs loaded now (bpftool here cannot say which
# process holds a program: a tool's programs are the ones loaded after).
prog_ids() { bpftool prog show -j | jq -c '[.[].id]'; }
# stats IDS: "name ns_per_run runs" of the busy programs not in IDS.
stats() {
	bpftool prog show -j | jq -r --argjson old "$1" \
		'.[] | select((.id as $i | $old | index($i)) | not) | select(.run_cnt != null and .run_cnt > 1000)
		 | "\(.name) \(.run_time_ns / .run_cnt) \(.run_cnt)"'
}

before=$(prog_ids)
bt_start "uprobe:$target:$fn { @c = count(); } uretprobe:$target:$fn { @r = count(); }" 2
"$target" "$fn" 3000000 >/dev/null &
tp=$!
sleep 2
bt=$(stats "$before")
kill "$tp" 2>/dev/null || true
wait "$tp" 2>/dev/null || true
bt_stop

before=$(prog_ids)
# shellcheck disable=SC2086 # atrace_args: words on purpose
"${PRIO[@]}" "$atrace" record -o "$tmp/x.data" --filter=off --select="$fn" $atrace_args -- \
	"$target" "$fn" 30000000 >/dev/null 2>"$tmp/err" &
ap=$!
sleep 4
at=$(stats "$before")
kill -INT "$ap" 2>/dev/null || true
wait "$ap" 2>/dev/null || true

echo "kernel $(uname -r), $fn, BPF statistics (ns per run, the statistics' own cost included)"
echo
echo "| tool | program | ns per run | runs |"
echo "| --- | --- | ---: | ---: |"
awk '{printf "| bpftrace | %s | %.1f | %s |\n", $1, $2, $3}' <<<"$bt"
awk '$1 ~ /^func_/ {printf "| atrace %s | %s | %.1f | %s |\n", ARGS, $1, $2, $3}' ARGS="$atrace_args" <<<"$at"
