#!/usr/bin/env bash
# usdt_cost.sh: cost per hit of a USDT probe (issue 6), in one run:
# a probe of include/atrace/probe.h (semaphore-guarded, probe instruction
# the 5-byte NOP 0f 1f 44 00 00) while nobody traces it and while atrace
# records it, and an ordinary sys/sdt.h probe (no semaphore, probe
# instruction a 1-byte nop) while atrace records it. bench/usdt_workload
# runs a loop with one probe hit per iteration and times the loop only.
# Runs, interleaved over the rounds in an order that rotates every round:
#   base    the loop without a probe (the baseline)
#   off     the loop with ATRACE_EVENT(bench, tick, i, acc), untraced:
#           semaphore 0, one load and one not-taken branch per iteration
#   sdtoff  the loop with DTRACE_PROBE2(benchsdt, tick, i, acc), untraced:
#           a 1-byte nop per iteration
#   hdr     off's loop under atrace record --usdt=bench:tick --no-kernel
#           (the kernel optimizes the NOP5 into a call: no trap)
#   sdt     sdtoff's loop under atrace record --usdt=benchsdt:tick --no-kernel
#           (int3 on the nop, emulated)
#   bthdr   hdr's probe counted by bpftrace (usdt:...:bench:tick { @c = count(); })
#   btsdt   sdt's probe counted by bpftrace: the same two paths with a
#           program that records nothing, for reference
# Measured by the workload: CPU time of its thread (CLOCK_THREAD_CPUTIME_ID:
# the uprobe handling and the BPF program run in it) and elapsed time
# (CLOCK_MONOTONIC), per iteration of the loop; "added" is minus base. Every
# run is checked: the semaphore as the program saw it (0 untraced, nonzero
# traced: only the header probe has one), whether the kernel mapped its
# [uprobes-trampoline] (only for the optimized NOP5), atrace's probing line
# (nop5 / emulated), the usdt events in `atrace info` (= hits, 0 lost),
# bpftrace's count (= hits). A failed check is listed under the table and
# that run is left out of the medians.
#
# usage: bench/usdt_cost.sh [-b BUILD] [-n HITS] [-N ITERATIONS] [-r ROUNDS]
#                           [-t "base off sdtoff hdr sdt bthdr btsdt"] [-a ARGS]
#   -b  build tree holding atrace (default: build; a copy is run); the
#       workload is built from bench/ on its own (build_tree in bench_lib.sh)
#   -n  probe hits per traced run (default 1000000)
#   -N  iterations per untraced run (default 100000000: an untraced hit
#       costs about a nanosecond, too little to time over fewer)
#   -r  rounds (default 5)
#   -t  runs (default: all of the above; bthdr and btsdt need bpftrace)
#   -a  extra options for every `atrace record`, e.g. "--attach=perf"
# Run as root from the repository root. Needs sys/sdt.h (Debian:
# systemtap-sdt-dev), jq, bpftool; bpftrace for the bt runs.
# Workload and tracers run at nice -10 (BENCH_NICE=N to change, "" for none).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.sh"

build=build hits=1000000 iters=100000000 rounds=5 runs="" atrace_args=""
while getopts b:n:N:r:t:a:h opt; do
	case $opt in
	b) build=$OPTARG ;; n) hits=$OPTARG ;; N) iters=$OPTARG ;; r) rounds=$OPTARG ;;
	t) runs=$OPTARG ;; a) atrace_args=$OPTARG ;;
	*) usage; exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || die "run as root (atrace and bpftrace need it)"
need_tools jq bpftool cc
# Debian installs it as /usr/include/x86_64-linux-gnu/sys/sdt.h: ask the
# compiler, not a path.
echo '#include <sys/sdt.h>' | cc -E -x c - >/dev/null 2>&1 ||
	die "sys/sdt.h not found: the ordinary USDT probe needs it (apt-get install systemtap-sdt-dev)"
all_runs="base off sdtoff hdr sdt bthdr btsdt"
[[ -n $runs ]] || runs=$all_runs
for r in $runs; do [[ " $all_runs " == *" $r "* ]] || die "unknown run '$r'"; done
has_run() { [[ " $runs " == *" $1 "* ]]; }
if { has_run bthdr || has_run btsdt; } && ! command -v bpftrace >/dev/null; then
	echo "note: no bpftrace: bthdr and btsdt skipped" >&2
	runs=${runs/bthdr/} runs=${runs/btsdt/}
fi

W=$(readlink -f "$(build_tree usdt_workload)/usdt_workload")
assert_unprobed "$W"
tmp=$(mktemp -d)
trap 'bt_cleanup; rm -rf "$tmp"' EXIT
atrace=$(readlink -f "$build/atrace" 2>/dev/null || true)
[[ -x $atrace ]] || die "$build/atrace not found (-b BUILD)"
# A copy, so that a rebuild during the run cannot mix versions.
cp "$atrace" "$tmp/atrace"
atrace=$tmp/atrace
"$atrace" record --help 2>&1 | grep -q -- '--usdt' || die "this atrace has no record --usdt"
rev=${ATRACE_REV:-"repository at $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"}

# field NAME < workload output: the value of NAME=.
field() { sed -n "s/.* $1=\([0-9.,]*\).*/\1/p" | head -1; }

declare -A cpu wall notes bad
note() { notes[$1]+="$2; "; }
# take RUN OUTPUT EXPECTED_SEMAPHORE EXPECTED_TRAMPOLINE: checks the
# workload's own line and keeps its figures (unless an earlier check of this
# run failed: BAD=1).
take() {
	local sem tr
	sem=$(field semaphore <<<"$2") tr=$(field trampoline <<<"$2")
	[[ $sem == "$3" ]] || { note "$1" "semaphore $sem, expected $3"; BAD=1; }
	[[ $tr == "$4" ]] || { note "$1" "trampoline=$tr, expected $4"; BAD=1; }
	if ((BAD)); then
		bad[$1]=$((${bad[$1]:-0} + 1))
		return
	fi
	cpu[$1]+="$(field cpu_ns_per_iter <<<"$2") " wall[$1]+="$(field ns_per_iter <<<"$2") "
}

run_base() { BAD=0; take base "$(prio "$W" base "$iters")" 0,0 0; }
run_off() { BAD=0; take off "$(prio "$W" hdr "$iters")" 0,0 0; }
run_sdtoff() { BAD=0; take sdtoff "$(prio "$W" sdt "$iters")" 0,0 0; }

# atrace_run RUN MODE SPEC PATH SEMAPHORE TRAMPOLINE
atrace_run() {
	local out info n lost line
	BAD=0
	# shellcheck disable=SC2086 # atrace_args: words on purpose
	if ! out=$(prio "$atrace" record -o "$tmp/u.data" --usdt="$3" --no-kernel $atrace_args -- \
		"$W" "$2" "$hits" 2>"$tmp/err"); then
		note "$1" "atrace failed: $(grep -m1 '^atrace: ' "$tmp/err" || tail -1 "$tmp/err")"
		bad[$1]=$((${bad[$1]:-0} + 1))
		return
	fi
	line=$(grep -m1 '^atrace: probing' "$tmp/err" || true)
	[[ $line == *"1 $4"* ]] || { note "$1" "probing line: '$line', expected 1 $4"; BAD=1; }
	info=$("$atrace" info -i "$tmp/u.data")
	n=$(sed -n 's/^By kind:.*[ ,]usdt \([0-9]*\).*/\1/p' <<<"$info")
	lost=$(sed -n 's/^Lost events: *\([0-9]*\).*/\1/p' <<<"$info")
	[[ ${n:-0} == "$hits" ]] || { note "$1" "usdt events ${n:-0}, expected $hits"; BAD=1; }
	[[ ${lost:-x} == 0 ]] || { note "$1" "lost events: ${lost:-?}"; BAD=1; }
	echo "atrace $3: usdt events ${n:-0}, lost ${lost:-?}; ${line#atrace: }" >&2
	take "$1" "$out" "$5" "$6"
}
run_hdr() { atrace_run hdr hdr 'bench:tick' 'nop5 (optimized)' 1,1 1; }
run_sdt() { atrace_run sdt sdt 'benchsdt:tick' emulated 0,0 0; }

# bt_run RUN MODE PROVIDER SEMAPHORE TRAMPOLINE
bt_run() {
	local out c
	BAD=0
	bt_start "usdt:$W:$3:tick { @c = count(); }" 1
	out=$(prio "$W" "$2" "$hits")
	bt_stop
	c=$(bt_count c)
	[[ $c == "$hits" ]] || { note "$1" "bpftrace counted $c, expected $hits"; BAD=1; }
	take "$1" "$out" "$4" "$5"
}
run_bthdr() { bt_run bthdr hdr bench 1,1 1; }
run_btsdt() { bt_run btsdt sdt benchsdt 0,0 0; }

order=()
for r in $all_runs; do has_run "$r" && order+=("$r"); done
k=${#order[@]}
((k > 0)) || die "nothing to run"
echo "runs: ${order[*]}; $hits hits per traced run, $iters iterations per untraced run; $rounds rounds" >&2
for ((r = 0; r < rounds; r++)); do
	for ((j = 0; j < k; j++)); do
		"run_${order[(j + r) % k]}"
	done
	echo "round $((r + 1))/$rounds done $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

med() { tr ' ' '\n' <<<"${1:-}" | { grep . || true; } | median; }
# f1 NUMBER: 2 decimals below 10 (untraced loops), none from 100.
f1() { [[ $1 == nan ]] && echo "n/a" || awk -v v="$1" 'BEGIN {a = v < 0 ? -v : v
	printf (a < 10 ? "%.2f" : a < 100 ? "%.1f" : "%.0f"), v}'; }
range() {
	local lo hi
	lo=$(tr ' ' '\n' <<<"${1:-}" | { grep . || true; } | sort -g | head -1)
	hi=$(tr ' ' '\n' <<<"${1:-}" | { grep . || true; } | sort -g | tail -1)
	[[ -n $lo ]] && echo "$(f1 "$lo")–$(f1 "$hi")" || echo "n/a"
}
sub() { [[ $1 == nan || $2 == nan ]] && echo nan || awk -v a="$1" -v b="$2" 'BEGIN {print a - b}'; }
div() { [[ $1 == nan || $2 == nan ]] && echo "n/a" || awk -v a="$1" -v b="$2" 'BEGIN {if (b == 0) print "n/a"; else printf "%.2f", a / b}'; }
declare -A label=(
	[base]="no probe (baseline)"
	[off]="atrace/probe.h, untraced (semaphore 0)"
	[sdtoff]="sys/sdt.h, untraced (1-byte nop)"
	[hdr]="atrace/probe.h, atrace records it (NOP5: optimized)"
	[sdt]="sys/sdt.h, atrace records it (nop: int3, emulated)"
	[bthdr]="atrace/probe.h, bpftrace counts it (NOP5: optimized)"
	[btsdt]="sys/sdt.h, bpftrace counts it (nop: int3, emulated)"
)
declare -A per=([base]=$iters [off]=$iters [sdtoff]=$iters [hdr]=$hits [sdt]=$hits [bthdr]=$hits [btsdt]=$hits)

bc=$(med "${cpu[base]:-}") bw=$(med "${wall[base]:-}")
hc=$(sub "$(med "${cpu[hdr]:-}")" "$bc") hw=$(sub "$(med "${wall[hdr]:-}")" "$bw")
echo
echo "kernel $(uname -r), $(nproc) CPUs, atrace $rev${atrace_args:+ ($atrace_args)}," \
	"$(bpftrace --version 2>/dev/null || echo 'no bpftrace'); $rounds rounds, medians;" \
	"load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "ns per iteration (one probe hit each): CPU time of the workload's thread and elapsed time; \"added\" = minus the loop without a probe; \"/ hdr\" = added / added by the header probe recorded by atrace"
echo
echo "| run | iterations/run | CPU ns (min–max) | added | / hdr | elapsed ns | added | / hdr |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for r in "${order[@]}"; do
	c=$(med "${cpu[$r]:-}") w=$(med "${wall[$r]:-}")
	if [[ $r == base ]]; then
		echo "| ${label[$r]} | ${per[$r]} | $(f1 "$c") ($(range "${cpu[$r]:-}")) | | | $(f1 "$w") | | |"
		continue
	fi
	ac=$(sub "$c" "$bc") aw=$(sub "$w" "$bw")
	if [[ $r == off || $r == sdtoff ]]; then
		echo "| ${label[$r]} | ${per[$r]} | $(f1 "$c") ($(range "${cpu[$r]:-}")) | $(f1 "$ac") | |" \
			"$(f1 "$w") | $(f1 "$aw") | |"
		continue
	fi
	echo "| ${label[$r]} | ${per[$r]} | $(f1 "$c") ($(range "${cpu[$r]:-}")) | $(f1 "$ac") |" \
		"$(div "$ac" "$hc") | $(f1 "$w") | $(f1 "$aw") | $(div "$aw" "$hw") |"
done
echo
for r in "${order[@]}"; do
	[[ -n ${notes[$r]:-} ]] && echo "- ${label[$r]}: ${notes[$r]}"
	[[ -n ${bad[$r]:-} ]] && echo "- ${label[$r]}: ${bad[$r]} run(s) failed a check: left out of the medians"
	echo "- ${label[$r]}: CPU ns per iteration per run: ${cpu[$r]:-}"
done
