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
# stops, strace's and perf's own work do not), each minus `base`.
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
cleanup() {
	[[ -n $IDLE_PID ]] && kill -TERM "$IDLE_PID" 2>/dev/null
	[[ -n $IDLE_APID ]] && kill -TERM "$IDLE_APID" 2>/dev/null
	# perf mounts tracefs on its own: unmount whenever it was not mounted before.
	((tracefs_was_mounted)) || ! mountpoint -q "$tracefs" || umount "$tracefs" || true
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
rev=$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)

# field NAME < workload output: the value of NAME=.
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p; s/^$1=\([0-9.]*\).*/\1/p" | head -1; }

# Other system-call tracers (BPF links on tracepoints, perf tracepoint events,
# strace/perf processes) would put the 'base' runs on the slow path too:
# counted before each base run and reported.
foreign_tracers() {
	local l p
	l=$(bpftool link show -j 2>/dev/null |
		jq '[.[] | select(.type == "raw_tracepoint" or .type == "tracing")] | length' 2>/dev/null || echo 0)
	p=$( (pgrep -x strace; pgrep -x perf; pgrep -x bpftrace) | wc -l)
	echo $((l + p))
}

declare -A wall cpu sysns notes lost extra nfor
# note KEY TEXT: a checked count or warning shown under the table.
note() { notes[$1]+="$2; "; }
record() {  # record WMODE RUN OUTPUT
	local o=$3
	wall[$1.$2]+="$(field ns_per_call <<<"$o") "
	cpu[$1.$2]+="$(field cpu_ns_per_call <<<"$o") "
	sysns[$1.$2]+="$(field sys_ns_per_call <<<"$o") "
}

run_base() {
	local f out
	f=$(foreign_tracers)
	out=$(prio "$W" "$1" "$n")
	[[ $f == 0 && $(foreign_tracers) == 0 ]] || note "$1.base" "another tracer was attached during a run"
	record "$1" base "$out"
}

# atrace_run WMODE RUN KERNEL_OPTION
atrace_run() {
	local out json ev lo sc size
	# shellcheck disable=SC2086 # $3 and atrace_args: words on purpose
	if ! out=$(prio "$atrace" record -o "$tmp/a.data" --select=sc_batch $3 $atrace_args -- \
		"$W" "$1" "$n" 2>"$tmp/err"); then
		echo "atrace record $3 failed: $(tail -3 "$tmp/err")" >&2
		note "$1.$2" "a run failed: $(tail -1 "$tmp/err")"
		return
	fi
	json=$("$atrace" report -i "$tmp/a.data" --format=json)
	ev=$(jq '.events' <<<"$json")
	lo=$(jq '.lost_events' <<<"$json")
	sc=$(jq -r '[.functions[] | select(.name == "sc_batch") | .syscalls // empty] | add // "n/a"' <<<"$json")
	size=$(stat -c %s "$tmp/a.data")
	echo "atrace $3 $1: events=$ev lost=$lo sc_batch syscalls=$sc bytes=$size" >&2
	record "$1" "$2" "$out"
	lost[$1.$2]+="$lo "
	extra[$1.$2]+="$size:$ev:$sc "
}
run_nokernel() { atrace_run "$1" nokernel "$( ((kernel_opts)) && echo --no-kernel)"; }
run_syscalls() { atrace_run "$1" syscalls --kernel=syscalls; }
run_all() { atrace_run "$1" all ""; }

run_other() {
	local i idle_pid out
	# shellcheck disable=SC2086
	prio "$atrace" record -o "$tmp/o.data" --select=sc_batch --kernel=syscalls $atrace_args -- \
		"$W" idle 600 >"$tmp/idle.out" 2>"$tmp/idle.err" &
	IDLE_APID=$!
	for ((i = 0; i < 300; i++)); do
		grep -q '^idle pid=' "$tmp/idle.out" && break
		kill -0 "$IDLE_APID" 2>/dev/null || break
		sleep 0.1
	done
	idle_pid=$(sed -n 's/^idle pid=\([0-9]*\).*/\1/p' "$tmp/idle.out")
	if [[ -z $idle_pid ]]; then
		echo "atrace (other) did not start: $(tail -3 "$tmp/idle.err")" >&2
		note "$1.other" "a run failed to start"
		kill -TERM "$IDLE_APID" 2>/dev/null || true
		wait "$IDLE_APID" 2>/dev/null || true
		IDLE_APID=
		return
	fi
	IDLE_PID=$idle_pid
	out=$(prio "$W" "$1" "$n")
	kill -TERM "$idle_pid"
	wait "$IDLE_APID" || note "$1.other" "atrace exited with $?"
	IDLE_APID='' IDLE_PID=''
	record "$1" other "$out"
}

run_strace() {
	local out c
	out=$(prio strace -c -f -o "$tmp/strace.txt" -- "$W" "$1" "$n_slow")
	c=$(awk -v s="$1" '$NF == s {print $4}' "$tmp/strace.txt")
	[[ ${c:-0} -ge $n_slow ]] || note "$1.strace" "counted ${c:-0} $1 calls, expected $n_slow"
	record "$1" strace "$out"
	nfor[$1.strace]=$n_slow
}

run_perftrace() {
	local out c
	if ! out=$(prio perf trace -s -o "$tmp/ptrace.txt" -- "$W" "$1" "$n_slow" 2>"$tmp/err"); then
		note "$1.perftrace" "perf trace failed: $(tail -1 "$tmp/err")"
		echo "perf trace failed: $(tail -3 "$tmp/err")" >&2
		return
	fi
	c=$(awk -v s="$1" '$1 == s {print $2}' "$tmp/ptrace.txt")
	[[ ${c:-0} -ge $n_slow ]] || note "$1.perftrace" "counted ${c:-0} $1 calls, expected $n_slow"
	record "$1" perftrace "$out"
	nfor[$1.perftrace]=$n_slow
}

run_perfrecord() {
	local out l s
	if ! out=$(prio perf record -q -m 8M -o "$tmp/perf.data" \
		-e raw_syscalls:sys_enter,raw_syscalls:sys_exit -- "$W" "$1" "$n_slow" 2>"$tmp/err"); then
		note "$1.perfrecord" "perf record failed: $(tail -1 "$tmp/err")"
		echo "perf record failed: $(tail -3 "$tmp/err")" >&2
		return
	fi
	# Per-event sections follow the aggregated one; sum their samples and losses.
	read -r s l < <(perf report -i "$tmp/perf.data" --stats 2>/dev/null | awk '
		/stats:$/ && !/Aggregated/ {ev = 1}
		ev && /SAMPLE events:/ && !/LOST/ {s += $NF}
		ev && /LOST_SAMPLES events:/ {l += $NF}
		END {print s + 0, l + 0}')
	echo "perf record $1: samples=$s lost=$l bytes=$(stat -c %s "$tmp/perf.data")" >&2
	record "$1" perfrecord "$out"
	lost[$1.perfrecord]+="$l "
	extra[$1.perfrecord]+="$(stat -c %s "$tmp/perf.data"):$s:n/a "
	nfor[$1.perfrecord]=$n_slow
}

order=()
for r in $all_runs; do has_run "$r" && order+=("$r"); done
k=${#order[@]}
((k > 0)) || die "nothing to run"
echo "runs: ${order[*]}; modes: $wmodes; $n calls per run ($n_slow under strace/perf); $rounds rounds" >&2
for ((r = 0; r < rounds; r++)); do
	for m in $wmodes; do
		for ((j = 0; j < k; j++)); do
			"run_${order[(j + r) % k]}" "$m"
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
echo "kernel $(uname -r), $(nproc) CPUs, atrace at $rev${atrace_args:+ ($atrace_args)}," \
	"$(strace -V 2>/dev/null | head -1 || true), $(perf version 2>/dev/null || true);" \
	"$rounds rounds, medians; load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
for m in $wmodes; do
	bw=$(med "${wall[$m.base]:-}") bc=$(med "${cpu[$m.base]:-}")
	sw=$(sub "$(med "${wall[$m.syscalls]:-}")" "$bw")
	sc=$(sub "$(med "${cpu[$m.syscalls]:-}")" "$bc")
	echo
	echo "workload: $m, $n calls per run"
	echo
	echo "| run | calls/run | ns/call | added ns/call | added / syscalls | range ns/call | CPU ns/call | added CPU | added CPU / syscalls | sys ns/call | lost events | trace bytes/call |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for r in "${order[@]}"; do
		w=$(med "${wall[$m.$r]:-}") c=$(med "${cpu[$m.$r]:-}") s=$(med "${sysns[$m.$r]:-}")
		aw=$(sub "$w" "$bw") ac=$(sub "$c" "$bc")
		calls=${nfor[$m.$r]:-$n}
		l="" b=""
		if [[ -n ${lost[$m.$r]:-} ]]; then
			l=$(tr ' ' '\n' <<<"${lost[$m.$r]}" | grep . | sort -g | paste -sd/)
			b=$(tr ' ' '\n' <<<"${extra[$m.$r]}" | grep . | cut -d: -f1 |
				awk -v n="$calls" '{print $1 / n}' | median | awk '{printf "%.2f", $1}')
		fi
		if [[ $r == base ]]; then
			echo "| ${label[$r]} | $calls | $(f0 "$w") | 0 | | $(range "${wall[$m.$r]:-}") | $(f0 "$c") | 0 | | $(f0 "$s") | | |"
		else
			echo "| ${label[$r]} | $calls | $(f0 "$w") | $(f0 "$aw") | $(div "$aw" "$sw") | $(range "${wall[$m.$r]:-}") | $(f0 "$c") | $(f0 "$ac") | $(div "$ac" "$sc") | $(f0 "$s") | $l | $b |"
		fi
	done
	for r in "${order[@]}"; do
		[[ -n ${notes[$m.$r]:-} ]] && echo "- ${label[$r]}: ${notes[$m.$r]}"
		if [[ -n ${extra[$m.$r]:-} && $r != perfrecord ]]; then
			echo "- ${label[$r]}: file bytes:events:sc_batch syscalls per run: ${extra[$m.$r]}"
		fi
		if [[ $r == perfrecord && -n ${extra[$m.$r]:-} ]]; then
			echo "- ${label[$r]}: perf.data bytes:samples per run: ${extra[$m.$r]}"
		fi
	done
done
