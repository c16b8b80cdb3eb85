#!/usr/bin/env bash
# syscall_cost.sh: what atrace's kernel event groups add to each system call
# of a system-call-heavy program (issue 4), next to strace and perf on the
# same program, in the same run. bench/syscall_workload makes N system calls
# (getppid, or 1-byte reads of /dev/zero) from sc_batch(), 10 000 a call,
# and times the loop. Runs, interleaved over the rounds in an order that
# rotates every round:
#   base       the workload alone
#   nokernel   atrace record --no-kernel --select=sc_batch   (uprobes only)
#   syscalls   atrace record --kernel=syscalls --select=sc_batch
#   all        atrace record --select=sc_batch                (all kernel groups)
#   other      the workload alone while `atrace record --kernel=syscalls`
#              traces another process (an idle syscall_workload): what
#              atrace's system-call tracepoints cost the rest of the system
#   strace     strace -c -f                                   (ptrace)
#   perftrace  perf trace -s                                  (summary only)
#   perfrecord perf record -e raw_syscalls:sys_enter,raw_syscalls:sys_exit
# strace and perf run N/50 calls (they are 20 to 300 times slower per call).
# Every run's event counts are checked: atrace's lost_events and events
# (`atrace report --format=json`), strace's and perf trace's count of the
# call, perf record's samples and LOST_SAMPLES.
#
# usage: bench/syscall_cost.sh [-b BUILD] [-n CALLS] [-r ROUNDS]
#                              [-m "getppid read"] [-t "base nokernel ..."]
#                              [-a ARGS]
#   -b  build tree holding atrace (default: build; a copy is run); the
#       workload is built from bench/ on its own (build_tree in bench_lib.sh)
#   -n  system calls per run (default 1000000; strace and perf: N/50)
#   -r  rounds (default 5)
#   -m  workload modes (default "getppid read")
#   -t  runs (default: all of the above that can run here)
#   -a  extra options for every `atrace record`, e.g. "--buffer-size=64M"
# Run as root from the repository root. Installs strace and linux-perf with
# apt-get when missing; mounts tracefs for perf when it is not mounted (and
# unmounts it at the end only then). Prints Markdown tables of medians:
# elapsed ns per call (CLOCK_MONOTONIC) and CPU ns per call of the calling
# thread (CLOCK_THREAD_CPUTIME_ID: tracepoint BPF programs run in it; ptrace
# stops, strace's and perf's own work do not) and CPU ns per call of all
# processes of the run (tracer and workload, from getrusage of the
# children; start-up and exit removed by subtracting a run with a tenth of
# the calls, made right after each run), each minus `base`, and as ratios
# to `syscalls`.
# Workload and tracers run at nice -10 (BENCH_NICE=N to change, "" for none).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.sh"

build=build n=1000000 rounds=5 wmodes="getppid read" runs="" atrace_args=""
while getopts b:n:r:m:t:a:h opt; do
	case $opt in
	b) build=$OPTARG ;; n) n=$OPTARG ;; r) rounds=$OPTARG ;;
	m) wmodes=$OPTARG ;; t) runs=$OPTARG ;; a) atrace_args=$OPTARG ;;
	*) usage; exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || die "run as root (atrace, strace -f and perf need it)"
need_tools jq objdump bpftool
all_runs="base nokernel syscalls all other strace perftrace perfrecord"
[[ -n $runs ]] || runs=$all_runs
for r in $runs; do [[ " $all_runs " == *" $r "* ]] || die "unknown run '$r'"; done
has_run() { [[ " $runs " == *" $1 "* ]]; }
n_slow=$((n / 50 > 1000 ? n / 50 : 1000))
n_prec=$((n / 10 > 1000 ? n / 10 : 1000))

# Missing tools: apt-get update once, then install.
apt_updated=0
apt_need() {  # apt_need COMMAND PACKAGE
	command -v "$1" >/dev/null && return 0
	if ((!apt_updated)); then apt-get update -qq >&2 || true; apt_updated=1; fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2 ||
		echo "note: cannot install $2" >&2
	command -v "$1" >/dev/null
}
if has_run strace && ! apt_need strace strace; then
	echo "note: no strace: strace run skipped" >&2
	runs=${runs/strace/}
fi
if { has_run perftrace || has_run perfrecord; } && ! apt_need perf linux-perf; then
	echo "note: no perf: perf runs skipped" >&2
	runs=${runs/perftrace/} runs=${runs/perfrecord/}
fi

W=$(readlink -f "$(build_tree syscall_workload)/syscall_workload")
got=$(entry_bytes "$W" sc_batch)
[[ $got == 55 ]] || die "sc_batch starts with '$got' ($(entry_insn "$W" sc_batch)), expected 55 (push %rbp)"
echo "sc_batch: entry \`$got\` = $(entry_insn "$W" sc_batch) -> emulated uprobe" >&2

tmp=$(mktemp -d)
tracefs=/sys/kernel/tracing
tracefs_was_mounted=0
mountpoint -q "$tracefs" && tracefs_was_mounted=1
IDLE_APID='' IDLE_PID=''
# A CPU-accounting cgroup for the measured runs (see timed).
CG=''
for d in /sys/fs/cgroup/cpuacct /sys/fs/cgroup/cpu,cpuacct /sys/fs/cgroup; do
	if [[ -f $d/cpuacct.usage || -f $d/cpu.stat ]] && mkdir "$d/atrace-syscall-cost.$$" 2>/dev/null; then
		CG=$d/atrace-syscall-cost.$$
		break
	fi
done
cg_usage() {
	if [[ -f $CG/cpuacct.usage ]]; then cat "$CG/cpuacct.usage"
	else awk '$1 == "usage_usec" {print $2 * 1000}' "$CG/cpu.stat"; fi
}
[[ -n $CG ]] || echo "note: no cpuacct cgroup: all-process CPU from getrusage (misses unreaped processes)" >&2
cleanup() {
	stop_idle || true
	# perf mounts tracefs on its own: unmount whenever it was not mounted before.
	((tracefs_was_mounted)) || ! mountpoint -q "$tracefs" || umount "$tracefs" || true
	[[ -n $CG ]] && rmdir "$CG" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
if { has_run perftrace || has_run perfrecord; } && ! mountpoint -q "$tracefs"; then
	mount -t tracefs nodev "$tracefs" || echo "note: cannot mount tracefs" >&2
fi

atrace=$(readlink -f "$build/atrace" 2>/dev/null || true)
kernel_opts=1
if [[ ! -x $atrace ]]; then
	echo "note: $build/atrace not found: atrace runs skipped" >&2
	for r in nokernel syscalls all other; do runs=${runs/$r/}; done
else
	# A copy, so that a rebuild during the run cannot mix versions.
	cp "$atrace" "$tmp/atrace"
	atrace=$tmp/atrace
	if ! "$atrace" record --help 2>&1 | grep -q -- '--no-kernel'; then
		kernel_opts=0
		echo "note: this atrace has no --kernel/--no-kernel: 'nokernel' is plain" \
			"atrace record; syscalls, all, other skipped" >&2
		for r in syscalls all other; do runs=${runs/$r/}; done
	fi
fi
# The atrace measured: ATRACE_REV=REV names the commit it was built from
# (default: "repository at HEAD", which is right only for a fresh build).
rev=${ATRACE_REV:-"repository at $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"}

# field NAME < workload output: the value of NAME=.
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p; s/^$1=\([0-9.]*\).*/\1/p" | head -1; }

# Another system-call tracer running during a run (anyone's BPF program on
# the sys_enter/sys_exit tracepoints, a perf process) would put every task on
# the slow system-call path, the measured ones included: checked before and
# after each run, and such runs are left out of the medians (and counted).
foreign_tracers() {
	local l p
	l=$( {
		bpftool link show -j 2>/dev/null | jq -r '.[] | .tp_name // empty'
		bpftool perf list -j 2>/dev/null | jq -r '.[] | .tracepoint // empty'
	} | grep -cE '^(sys_enter|sys_exit)$' || true)
	p=$(pgrep -x perf | wc -l)
	echo $((l + p))
}

declare -A wall cpu tcpu tcpu0 notes lost extra nfor nfor0 excluded lossy
# note KEY TEXT: a checked count or warning shown under the table.
note() { notes[$1]+="$2; "; }
# timed CMD...: runs CMD (at BENCH_NICE), its stderr to $tmp/err, and writes
# the CPU ns used by CMD and all its descendants (the tracer and its
# workload, start-up included) to $tmp/time. Measured with a cpuacct cgroup
# of this script's own (cgroup v1; cgroup v2: cpu.stat), which counts
# every process in it whether reaped or not (perf trace does not reap its
# workload: getrusage would miss it); without one, getrusage of the
# children (ms resolution).
timed() {
	if [[ -n $CG ]]; then
		(
			echo "$BASHPID" >"$CG/cgroup.procs"
			u0=$(cg_usage)
			if prio "$@" 2>"$tmp/err"; then rc=0; else rc=$?; fi
			echo $(($(cg_usage) - u0)) >"$tmp/time"
			exit $rc
		)
	else
		local TIMEFORMAT='%3U %3S'
		{ time prio "$@" 2>"$tmp/err"; } 2>"$tmp/time.s"
		awk '{printf "%.0f\n", ($1 + $2) * 1e9}' "$tmp/time.s" >"$tmp/time"
	fi
}
# Every run is made twice per round: with its full count of calls, and (SHORT=1,
# CPU time of all processes only) with a tenth of it. The difference divided by
# the difference of calls is the CPU per call of all processes without the
# start-up and exit of tracer and workload.
SHORT=0
calls_for() {  # calls_for RUN
	local c=$n
	case $1 in strace | perftrace) c=$n_slow ;; perfrecord) c=$n_prec ;; esac
	((SHORT)) && c=$((c / 10))
	echo "$c"
}
# record WMODE RUN OUTPUT CALLS: the figures of one run, kept pending until
# the run is known to be clean (commit_run).
record() {
	local t
	t=$(cat "$tmp/time")
	P_KEY=$1.$2
	if ((SHORT)); then
		P_TCPU0=$t P_N0=$4
		return
	fi
	P_WALL=$(field ns_per_call <<<"$3") P_CPU=$(field cpu_ns_per_call <<<"$3")
	P_TCPU=$t P_N=$4
}
# pend_extra LOST EXTRA: a tracer's loss count and file figures for this run.
pend_extra() { P_LOST=$1 P_EXTRA=$2; }
clear_run() { P_KEY='' P_WALL='' P_CPU='' P_TCPU='' P_N='' P_TCPU0='' P_N0='' P_LOST='' P_EXTRA=''; }
# A run that lost events did less work than a complete recording: its
# losses and sizes are shown, its times are left out of the medians.
commit_run() {
	local k=$P_KEY
	[[ -n $k ]] || return 0
	if [[ -n $P_LOST && $P_LOST != 0 ]]; then
		lossy[$k]=$((${lossy[$k]:-0} + 1))
		lost[$k]+="$P_LOST "
		notes[$k]+="a run lost $P_LOST events (file bytes:events:...: $P_EXTRA); "
		return 0
	elif [[ -n $P_WALL ]]; then
		wall[$k]+="$P_WALL " cpu[$k]+="$P_CPU " tcpu[$k]+="$P_TCPU " nfor[$k]=$P_N
	fi
	[[ -n $P_TCPU0 ]] && tcpu0[$k]+="$P_TCPU0 " nfor0[$k]=$P_N0
	[[ -n $P_LOST ]] && lost[$k]+="$P_LOST "
	[[ -n $P_EXTRA ]] && extra[$k]+="$P_EXTRA "
	return 0
}

run_base() {
	local out calls
	calls=$(calls_for base)
	out=$(timed "$W" "$1" "$calls")
	record "$1" base "$out" "$calls"
}

# atrace_run WMODE RUN KERNEL_OPTION
atrace_run() {
	local out json ev lo sc size ns calls
	calls=$(calls_for "$2")
	# shellcheck disable=SC2086 # $3 and atrace_args: words on purpose
	if ! out=$(timed "$atrace" record -o "$tmp/a.data" --select=sc_batch $3 $atrace_args -- \
		"$W" "$1" "$calls"); then
		echo "atrace record $3 failed: $(tail -3 "$tmp/err")" >&2
		note "$1.$2" "a run failed: $(tail -1 "$tmp/err")"
		return
	fi
	record "$1" "$2" "$out" "$calls"
	((SHORT)) && return
	json=$("$atrace" report -i "$tmp/a.data" --format=json)
	ev=$(jq '.events' <<<"$json")
	lo=$(jq '.lost_events' <<<"$json")
	sc=$(jq -r '[.functions[] | select(.name == "sc_batch") | .syscalls // empty] | add // "n/a"' <<<"$json")
	size=$(stat -c %s "$tmp/a.data")
	# System call entries recorded, from `atrace info` ("By kind: ... syscall N"):
	# N calls of the loop plus those of start-up and exit.
	ns=$("$atrace" info -i "$tmp/a.data" | sed -n 's/^By kind:.*[ ,]syscall \([0-9]*\).*/\1/p')
	[[ -z $3 || $3 == *syscalls* ]] && ((${ns:-0} < calls)) &&
		note "$1.$2" "a run recorded ${ns:-0} system calls, fewer than $calls"
	# sc_batch makes every call of the loop: the report must attribute exactly
	# those to it (atrace versions with per-function system calls).
	[[ (-z $3 || $3 == *syscalls*) && $sc =~ ^[0-9]+$ && $sc != "$calls" && $lo == 0 ]] &&
		note "$1.$2" "sc_batch was attributed $sc system calls, not $calls"
	echo "atrace ${3:-(all)} $1: events=$ev lost=$lo syscalls=${ns:-0} sc_batch syscalls=$sc bytes=$size" >&2
	pend_extra "$lo" "$size:$ev:${ns:-0}:$sc"
}
run_nokernel() { atrace_run "$1" nokernel "$( ((kernel_opts)) && echo --no-kernel)"; }
run_syscalls() { atrace_run "$1" syscalls --kernel=syscalls; }
run_all() { atrace_run "$1" all ""; }

run_other() {
	local i idle_pid='' out ev calls
	calls=$(calls_for other)
	rm -f "$tmp/idle.out"
	: >"$tmp/idle.out"
	# Not through prio (a function: $! would be a subshell's pid); nice execs.
	# shellcheck disable=SC2086
	"${PRIO[@]}" "$atrace" record -o "$tmp/o.data" --select=sc_batch --kernel=syscalls $atrace_args -- \
		"$W" idle 600 >>"$tmp/idle.out" 2>"$tmp/idle.err" &
	IDLE_APID=$!
	# atrace releases its target once everything is attached; the target then
	# prints its pid. Only a child of this atrace counts.
	for ((i = 0; i < 600; i++)); do
		idle_pid=$(sed -n 's/^idle pid=\([0-9]*\).*/\1/p' "$tmp/idle.out")
		[[ -n $idle_pid && $(ps -o ppid= -p "$idle_pid" 2>/dev/null | tr -d ' ') == "$IDLE_APID" ]] && break
		idle_pid=''
		kill -0 "$IDLE_APID" 2>/dev/null || break
		sleep 0.1
	done
	IDLE_PID=$idle_pid
	if [[ -z $idle_pid ]]; then
		echo "atrace (other) did not start: $(tail -3 "$tmp/idle.err")" >&2
		note "$1.other" "a run failed to start"
		stop_idle
		return
	fi
	out=$(timed "$W" "$1" "$calls")
	stop_idle || note "$1.other" "atrace tracing the idle process exited with an error"
	record "$1" other "$out" "$calls"
	((SHORT)) && return
	# The measured process must not be in that trace: a few events only.
	ev=$("$atrace" report -i "$tmp/o.data" --format=json | jq '.events')
	echo "atrace (other) $1: events of the idle process=$ev" >&2
	((ev < calls)) || note "$1.other" "the idle process's trace has $ev events"
}

# stop_idle: ends the idle target (atrace leaves a launched target running
# when it is signalled, so the target is the one to stop), then its atrace.
stop_idle() {
	local rc=0 i
	[[ -n $IDLE_PID ]] && kill -TERM "$IDLE_PID" 2>/dev/null
	if [[ -n $IDLE_APID ]]; then
		for ((i = 0; i < 100; i++)); do
			kill -0 "$IDLE_APID" 2>/dev/null || break
			# not started yet: its target is still held, and has no pid line
			((i == 50)) && kill -TERM "$IDLE_APID" 2>/dev/null
			sleep 0.1
		done
		wait "$IDLE_APID" 2>/dev/null || rc=$?
	fi
	IDLE_APID='' IDLE_PID=''
	return $rc
}

run_strace() {
	local out c calls
	calls=$(calls_for strace)
	out=$(timed strace -c -f -o "$tmp/strace.txt" -- "$W" "$1" "$calls")
	c=$(awk -v s="$1" '$NF == s {print $4}' "$tmp/strace.txt")
	[[ ${c:-0} -ge $calls ]] || note "$1.strace" "counted ${c:-0} $1 calls, expected $calls"
	record "$1" strace "$out" "$calls"
}

run_perftrace() {
	local out c calls
	calls=$(calls_for perftrace)
	if ! out=$(timed perf trace -s -o "$tmp/ptrace.txt" -- "$W" "$1" "$calls"); then
		note "$1.perftrace" "perf trace failed: $(tail -1 "$tmp/err")"
		echo "perf trace failed: $(tail -3 "$tmp/err")" >&2
		return
	fi
	c=$(awk -v s="$1" '$1 == s {print $2}' "$tmp/ptrace.txt")
	[[ ${c:-0} -ge $calls ]] || note "$1.perftrace" "counted ${c:-0} $1 calls, expected $calls"
	record "$1" perftrace "$out" "$calls"
}

run_perfrecord() {
	local out l s calls
	calls=$(calls_for perfrecord)
	if ! out=$(timed perf record -q -m 8M -o "$tmp/perf.data" \
		-e raw_syscalls:sys_enter,raw_syscalls:sys_exit -- "$W" "$1" "$calls"); then
		note "$1.perfrecord" "perf record failed: $(tail -1 "$tmp/err")"
		echo "perf record failed: $(tail -3 "$tmp/err")" >&2
		return
	fi
	record "$1" perfrecord "$out" "$calls"
	((SHORT)) && return
	# Per-event sections follow the aggregated one; sum their samples and losses.
	read -r s l < <(perf report -i "$tmp/perf.data" --stats 2>/dev/null | awk '
		/stats:$/ && !/Aggregated/ {ev = 1}
		ev && /SAMPLE events:/ && !/LOST/ {s += $NF}
		ev && /LOST_SAMPLES events:/ {l += $NF}
		END {print s + 0, l + 0}')
	echo "perf record $1: samples=$s lost=$l bytes=$(stat -c %s "$tmp/perf.data")" >&2
	pend_extra "$l" "$(stat -c %s "$tmp/perf.data"):$s"
}

order=()
for r in $all_runs; do has_run "$r" && order+=("$r"); done
k=${#order[@]}
((k > 0)) || die "nothing to run"
echo "runs: ${order[*]}; modes: $wmodes; $n calls per run ($n_slow under strace and perf trace, $n_prec under perf record); $rounds rounds" >&2
for ((r = 0; r < rounds; r++)); do
	for m in $wmodes; do
		for ((j = 0; j < k; j++)); do
			run=${order[(j + r) % k]}
			clear_run
			f=$(foreign_tracers)
			SHORT=0
			"run_$run" "$m"
			SHORT=1
			"run_$run" "$m"
			if [[ $f == 0 && $(foreign_tracers) == 0 ]]; then
				commit_run
			else
				echo "another system-call tracer was running: $run $m left out" >&2
				excluded[$m.$run]=$((${excluded[$m.$run]:-0} + 1))
			fi
		done
	done
	echo "round $((r + 1))/$rounds done $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

med() { tr ' ' '\n' <<<"${1:-}" | { grep . || true; } | median; }
range() { tr ' ' '\n' <<<"${1:-}" | grep . | sort -g | sed -n '1p;$p' | paste -sd' ' |
	awk '{if (NF == 0) print "n/a"; else printf "%.0f–%.0f", $1, ($2 == "" ? $1 : $2)}'; }
f0() { [[ $1 == nan ]] && echo "n/a" || printf '%.0f' "$1"; }
sub() { [[ $1 == nan || $2 == nan ]] && echo nan || awk -v a="$1" -v b="$2" 'BEGIN {print a - b}'; }
div() { [[ $1 == nan || $2 == nan ]] && echo "n/a" || awk -v a="$1" -v b="$2" 'BEGIN {if (b == 0) print "n/a"; else printf "%.2f", a / b}'; }
# allcpu KEY: CPU ns per call of all processes, start-up and exit excluded:
# (median CPU s of the full runs - median of the short ones) / (calls - calls).
allcpu() {
	local a b
	a=$(med "${tcpu[$1]:-}") b=$(med "${tcpu0[$1]:-}")
	[[ $a == nan || $b == nan ]] && { echo nan; return; }
	awk -v a="$a" -v b="$b" -v n="${nfor[$1]}" -v m="${nfor0[$1]}" 'BEGIN {print (a - b) / (n - m)}'
}
declare -A label=(
	[base]="workload alone"
	[nokernel]="atrace --no-kernel (uprobe on sc_batch only)"
	[syscalls]="atrace --kernel=syscalls"
	[all]="atrace (all kernel groups)"
	[other]="workload alone, atrace --kernel=syscalls tracing another process"
	[strace]="strace -c -f"
	[perftrace]="perf trace -s"
	[perfrecord]="perf record -e raw_syscalls:sys_{enter,exit}"
)

echo
echo "kernel $(uname -r), $(nproc) CPUs, atrace $rev${atrace_args:+ ($atrace_args)}," \
	"$(strace -V 2>/dev/null | head -1 || true), $(perf version 2>/dev/null || true);" \
	"$rounds rounds, medians; load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
for m in $wmodes; do
	bw=$(med "${wall[$m.base]:-}") bc=$(med "${cpu[$m.base]:-}") bt=$(allcpu "$m.base")
	sw=$(sub "$(med "${wall[$m.syscalls]:-}")" "$bw")
	sc=$(sub "$(med "${cpu[$m.syscalls]:-}")" "$bc")
	st=$(sub "$(allcpu "$m.syscalls")" "$bt")
	echo
	echo "workload: $m; ns per system call: elapsed, CPU time of the calling thread, CPU time of all processes of the run (tracer and workload, start-up and exit excluded: runs with a tenth of the calls subtracted); \"added\" = minus the workload alone; \"/ sc\" = added / added by atrace --kernel=syscalls"
	echo
	echo "| run | calls/run | elapsed | added | / sc | thread CPU (min–max) | added | / sc | all CPU | added | / sc | events lost per run | trace bytes/call |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for r in "${order[@]}"; do
		w=$(med "${wall[$m.$r]:-}") c=$(med "${cpu[$m.$r]:-}") t=$(allcpu "$m.$r")
		aw=$(sub "$w" "$bw") ac=$(sub "$c" "$bc") at=$(sub "$t" "$bt")
		calls=${nfor[$m.$r]:-$n}
		l="" b=""
		if [[ -n ${lost[$m.$r]:-} ]]; then
			l=$(tr ' ' '\n' <<<"${lost[$m.$r]}" | grep . | sort -g | paste -sd/)
			b=$(tr ' ' '\n' <<<"${extra[$m.$r]:-}" | { grep . || true; } | cut -d: -f1 |
				awk -v n="$calls" '{print $1 / n}' | median |
				awk '{if ($1 == "nan") print "n/a"; else printf "%.2f", $1}')
		fi
		if [[ $r == base ]]; then
			echo "| ${label[$r]} | $calls | $(f0 "$w") | | | $(f0 "$c") ($(range "${cpu[$m.$r]:-}")) | | | $(f0 "$t") | | | | |"
		else
			echo "| ${label[$r]} | $calls | $(f0 "$w") | $(f0 "$aw") | $(div "$aw" "$sw") |" \
				"$(f0 "$c") ($(range "${cpu[$m.$r]:-}")) | $(f0 "$ac") | $(div "$ac" "$sc") |" \
				"$(f0 "$t") | $(f0 "$at") | $(div "$at" "$st") | $l | $b |"
		fi
	done
	echo
	for r in "${order[@]}"; do
		[[ -n ${notes[$m.$r]:-} ]] && echo "- ${label[$r]}: ${notes[$m.$r]}"
		[[ -n ${excluded[$m.$r]:-} ]] &&
			echo "- ${label[$r]}: ${excluded[$m.$r]} run(s) left out: another system-call tracer was running"
		[[ -n ${lossy[$m.$r]:-} ]] &&
			echo "- ${label[$r]}: ${lossy[$m.$r]} run(s) lost events: times left out of the medians"
		echo "- ${label[$r]}: elapsed ns/call per run: ${wall[$m.$r]:-}"
		if [[ -n ${extra[$m.$r]:-} && $r != perfrecord ]]; then
			echo "- ${label[$r]}: file bytes:events:syscall entries:sc_batch syscalls per run: ${extra[$m.$r]}"
		fi
		if [[ $r == perfrecord && -n ${extra[$m.$r]:-} ]]; then
			echo "- ${label[$r]}: perf.data bytes:samples per run: ${extra[$m.$r]}"
		fi
		if [[ $r == perfrecord && -n ${lost[$m.$r]:-} ]]; then
			echo "- ${label[$r]}: samples lost per run: ${lost[$m.$r]}"
		fi
	done
done
