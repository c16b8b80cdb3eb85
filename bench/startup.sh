#!/usr/bin/env bash
# startup.sh: the fixed cost of tracing a program that exits at once:
# start-up (feature probes, plan, BPF load and verification, calibration,
# attach) plus teardown (detach, write, close), i.e. the wall time of
# `TRACER -- PROG` minus that of PROG alone. Targets:
#   true   /bin/true, probed at libc's exit (atrace --select=libc.so.6:exit,
#          bpftrace uprobe:libc:exit)
#   work   bench/startup_target.c (built here): main calls work() once,
#          probed (atrace --select=work, bpftrace uprobe:PROG:work)
# Tools: untraced (the program alone), atrace (record -o FILE, defaults),
# bpftrace (-e 'uprobe:...{}' -c PROG), perf (perf stat -e task-clock).
# Each run of each tool in turn (the order rotates each round), ROUNDS
# rounds; reported: median, min and max wall ms, and the median minus the
# untraced median. Then atrace's phases from `record -v` (one line each:
# features, plan, load+verify, calibration, attach, first event, detach,
# write, teardown): medians over the rounds. The calibration is measured
# on the first run after a boot and then read from /run/atrace: the first
# round's atrace run is left out of the medians (-k to keep it).
#
# usage: bench/startup.sh [-b BUILD] [-r ROUNDS] [-t "true work"] [-k]
#   -b  build tree holding atrace (default: build; a copy is run)
#   -r  rounds (default 10)
# Run as root from the repository root. Prints Markdown tables.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.sh"

build=build rounds=10 targets="true work" keep_first=0
while getopts b:r:t:kh opt; do
	case $opt in
	b) build=$OPTARG ;; r) rounds=$OPTARG ;; t) targets=$OPTARG ;; k) keep_first=1 ;;
	*) usage; exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || die "run as root (the tracers need it)"
need_tools gcc
[[ -x $build/atrace ]] || die "$build/atrace not found (build the project first)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$build/atrace" "$tmp/atrace"
atrace=$tmp/atrace
gcc -O1 -o "$tmp/work" "$here/startup_target.c"
libc=$(ldd /bin/true | awk '/libc\.so\.6/ {print $3}')
tools="untraced atrace"
command -v bpftrace >/dev/null && tools+=" bpftrace" || echo "bpftrace not found: left out" >&2
command -v perf >/dev/null && tools+=" perf" || echo "perf not found: left out" >&2

prog_of() { [[ $1 == true ]] && echo /bin/true || echo "$tmp/work"; }
select_of() { [[ $1 == true ]] && echo "libc.so.6:exit" || echo work; }
uprobe_of() { [[ $1 == true ]] && echo "uprobe:$libc:exit" || echo "uprobe:$tmp/work:work"; }

declare -A wall phases
now() { date +%s%N; }
# one TARGET TOOL ROUND: wall ns of one run into wall[TARGET.TOOL]
one() {
	local t=$1 tool=$2 r=$3 prog t0 t1
	prog=$(prog_of "$t")
	t0=$(now)
	case $tool in
	untraced) prio "$prog" ;;
	atrace)
		prio "$atrace" record -v -o "$tmp/x.data" --select="$(select_of "$t")" -- "$prog" \
			2>"$tmp/err" || die "atrace failed: $(tail -3 "$tmp/err")"
		;;
	bpftrace) prio bpftrace -e "$(uprobe_of "$t") {}" -c "$prog" >/dev/null 2>&1 ;;
	perf) prio perf stat -e task-clock -o /dev/null -- "$prog" ;;
	esac
	t1=$(now)
	if [[ $tool == atrace ]]; then
		[[ $r -eq 0 && $keep_first -eq 0 ]] && return
		while IFS='|' read -r name ms; do
			phases[$t.$name]+="$ms "
		done < <(sed -n 's/^atrace: phase \(.*\): \([0-9.]*\) ms.*/\1|\2/p' "$tmp/err")
	fi
	wall[$t.$tool]+="$(((t1 - t0) / 1000)) "
}

read -ra tl <<<"$tools"
n=${#tl[@]}
for ((r = 0; r < rounds; r++)); do
	for t in $targets; do
		for ((k = 0; k < n; k++)); do one "$t" "${tl[(k + r) % n]}" "$r"; done
	done
	echo "round $((r + 1))/$rounds done" >&2
done

# over the microsecond values of a list
vals() { tr ' ' '\n' <<<"$1" | { grep . || true; }; }
med() { vals "$1" | median; }
mn() { vals "$1" | sort -g | head -1; }
mx() { vals "$1" | sort -g | tail -1; }
ms() { awk -v v="$1" 'BEGIN {printf "%.1f", v / 1000}'; }

echo
echo "kernel $(uname -r), $(nproc) CPUs, load average at the end $(cut -d' ' -f1-3 /proc/loadavg);" \
	"$rounds rounds; atrace $("$atrace" -V 2>/dev/null | head -1)"
for t in $targets; do
	echo
	echo "### $(prog_of "$t" | sed "s|$tmp/||"), probed at $(select_of "$t")"
	echo
	echo "| tool | median ms | min ms | max ms | median minus untraced ms |"
	echo "| --- | ---: | ---: | ---: | ---: |"
	base=$(med "${wall[$t.untraced]}")
	for tool in $tools; do
		m=$(med "${wall[$t.$tool]}")
		echo "| $tool | $(ms "$m") | $(ms "$(mn "${wall[$t.$tool]}")") | $(ms "$(mx "${wall[$t.$tool]}")") |" \
			"$(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.1f", (a - b) / 1000}') |"
	done
	[[ -n ${phases[$t.features]:-} ]] || continue  # an atrace without phase lines
	echo
	echo "atrace's phases (record -v), medians in ms:"
	echo
	echo "| features | plan | load+verify | calibration | attach | first event | detach | write | teardown |"
	echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	row="|"
	for p in features plan load+verify calibration attach "first event" detach write teardown; do
		row+=" $(med "${phases[$t.$p]:-}") |"
	done
	echo "$row"
done
