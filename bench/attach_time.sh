#!/usr/bin/env bash
# attach_time.sh: how long attaching 1 000 to 10 000 function probes takes
# (issue 6; goal: 10 000 functions attached in under a second), with
# atrace's uprobe_multi links (a few bulk links), with atrace's perf-event
# links (one per probe) and with bpftrace attaching the same functions with
# a wildcard, in one run. The target, bench/many_fns_N (gen_many_fns.py), has
# N distinct functions bench_mf_* starting with `push %rbp`; `run` calls
# each once and exits, `wait SEC` calls them all every 50 ms. Runs, for each
# N, interleaved over the rounds in an order that rotates every round:
#   multi     atrace record --attach=multi --select='bench_mf_*' -- many_fns_N run
#   perf      the same with --attach=perf
#   bpftrace  bpftrace -e 'uprobe:BIN:bench_mf_* { @c = count(); }' -c 'BIN run'
#   pmulti    atrace record --attach=multi -p PID --duration=0.1 (many_fns_N
#             wait: a live process)
#   pperf     the same with --attach=perf (not in the default set)
# atrace runs with --no-kernel --filter=off (function probes only, nothing
# detached). Measured:
#   attach  atrace: its own figure ("attached in X ms": attaching the entry
#           and return probes of every function, programs already loaded);
#           bpftrace: from its "Attaching N probes..." line (stamped when it
#           reaches the script) to the target's first instruction of main
#           (CLOCK_REALTIME printed by the target): loading a program per
#           probe, attaching them, starting the target
#   ready   from the tool's start to the target's main (start-up, symbol
#           lookup, BPF loading, atrace's calibration, attach): when the
#           target runs with every probe in place; launch mode only
#   total   from the tool's start to its exit (the target's run, which is
#           short, and the detach included)
# Checked: atrace's probing line names N functions and the trace holds N
# entries and N exits (launch mode) or N probes (-p); bpftrace attached N
# probes and counted N hits. A run failing a check is listed and left out.
# perf-event links cost an RCU Tasks Trace grace period or two each when
# closed (synchronize_rcu_tasks_trace in the kernel): 0.1 to 0.2 s per probe
# here, so a perf or bpftrace run on 4 000 functions lasts about 15 minutes,
# hence -R. They also hold fds: atrace's perf mode 4 per function (a perf
# event and a link, entry and return), bpftrace 2 per probe (a perf event
# and a program); a run that needs more than the open-file limit is skipped
# with a note (-f runs it anyway: it attaches part of the functions, or
# fails, and its teardown takes as long).
#
# usage: bench/attach_time.sh [-b BUILD] [-r ROUNDS] [-R SLOW_ROUNDS]
#                             [-s "1000 10000"] [-m "multi perf bpftrace pmulti"]
#                             [-l NOFILE] [-a ARGS]
#   -b  build tree holding atrace (default: build; a copy is run); the
#       targets are built from bench/ on its own (build_tree in bench_lib.sh)
#   -r  rounds (default 3)
#   -R  rounds for perf, pperf and bpftrace on 4 000 functions and more
#       (default 1)
#   -s  sizes (default "1000 4000 10000": the targets built)
#   -m  runs (default "multi perf bpftrace pmulti"; pperf on request)
#   -l  open-file limit for the tools (default: the hard limit; raising the
#       hard limit needs CAP_SYS_RESOURCE)
#   -f  run perf and bpftrace even where the open-file limit is too low
#   -a  extra options for every `atrace record`
# Run as root from the repository root. Needs jq, bpftool, python3;
# bpftrace for the bpftrace runs (BPFTRACE_MAX_PROBES is set to N).
# Target and tools run at nice -10 (BENCH_NICE=N to change, "" for none).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.sh"

build=build rounds=3 slow_rounds=1 sizes="1000 4000 10000" runs="multi perf bpftrace pmulti"
nofile=hard force=0 atrace_args=""
while getopts b:r:R:s:m:l:a:fh opt; do
	case $opt in
	b) build=$OPTARG ;; r) rounds=$OPTARG ;; R) slow_rounds=$OPTARG ;; s) sizes=$OPTARG ;;
	m) runs=$OPTARG ;; l) nofile=$OPTARG ;; a) atrace_args=$OPTARG ;; f) force=1 ;;
	*) usage; exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || die "run as root (atrace and bpftrace need it)"
need_tools jq bpftool python3
all_runs="multi perf bpftrace pmulti pperf"
for r in $runs; do [[ " $all_runs " == *" $r "* ]] || die "unknown run '$r'"; done
for s in $sizes; do [[ $s =~ ^(1000|4000|10000)$ ]] || die "size $s: the targets have 1000, 4000 or 10000 functions"; done
has_run() { [[ " $runs " == *" $1 "* ]]; }
if has_run bpftrace && ! command -v bpftrace >/dev/null; then
	echo "note: no bpftrace: bpftrace runs skipped" >&2
	runs=${runs/bpftrace/}
fi
[[ $nofile == hard ]] && nofile=$(ulimit -Hn)
ulimit -Hn "$nofile" 2>/dev/null || true
ulimit -n "$nofile" || die "cannot set the open-file limit to $nofile (hard limit $(ulimit -Hn))"

tree=$(build_tree $(for s in $sizes; do echo "many_fns_$s"; done))
declare -A BIN
for s in $sizes; do
	BIN[$s]=$(readlink -f "$tree/many_fns_$s")
	assert_unprobed "${BIN[$s]}"
done
tmp=$(mktemp -d)
WAIT_PID=''
stop_wait() {
	[[ -n $WAIT_PID ]] || return 0
	kill -TERM "$WAIT_PID" 2>/dev/null || true
	wait "$WAIT_PID" 2>/dev/null || true
	WAIT_PID=''
}
trap 'stop_wait; rm -rf "$tmp"' EXIT
atrace=$(readlink -f "$build/atrace" 2>/dev/null || true)
[[ -x $atrace ]] || die "$build/atrace not found (-b BUILD)"
# A copy, so that a rebuild during the run cannot mix versions.
cp "$atrace" "$tmp/atrace"
atrace=$tmp/atrace
rev=${ATRACE_REV:-"repository at $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"}

declare -A attach ready total notes bad
note() { notes[$1]+="$2; "; }
fail() { note "$1" "$2"; bad[$1]=$((${bad[$1]:-0} + 1)); }
# ms A B: (B - A) in ms, both in seconds.
ms() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", (b - a) * 1000}'; }
# start_s < target output: its main's CLOCK_REALTIME, in seconds.
start_s() { sed -n 's/^\(.* \)\{0,1\}start_ns=\([0-9]*\)\([0-9]\{9\}\)$/\2.\3/p' | head -1; }

# check_trace KEY N WANT_CALLS: the probing line and the trace's counts.
check_trace() {
	local line info e x p
	line=$(grep -m1 '^atrace: probing' "$tmp/err" || true)
	[[ $line == "atrace: probing $2 functions:"* ]] || { fail "$1" "probing line: '$line'"; return 1; }
	info=$("$atrace" info -i "$tmp/a.data")
	e=$(sed -n 's/^By kind:.*[ ,]entry \([0-9]*\).*/\1/p; s/^By kind: *entry \([0-9]*\).*/\1/p' <<<"$info" | head -1)
	x=$(sed -n 's/^By kind:.*[ ,]exit \([0-9]*\).*/\1/p' <<<"$info" | head -1)
	p=$(sed -n 's/^Probes: *\([0-9]*\).*/\1/p' <<<"$info")
	[[ $p == "$2" ]] || { fail "$1" "$p probes in the trace, expected $2"; return 1; }
	if ((${3})); then
		[[ $e == "$2" && $x == "$2" ]] || { fail "$1" "entries $e exits $x, expected $2"; return 1; }
	else
		((${e:-0} > 0)) || { fail "$1" "no entry recorded"; return 1; }
	fi
	echo "$1: ${line#atrace: }; entries $e exits $x" >&2
}

# atrace_launch KEY MODE N
atrace_launch() {
	local t0 t1 out a s
	t0=$EPOCHREALTIME
	# shellcheck disable=SC2086 # atrace_args: words on purpose
	if ! out=$(prio "$atrace" record -o "$tmp/a.data" --no-kernel --filter=off --attach="$2" \
		--select='bench_mf_*' $atrace_args -- "${BIN[$3]}" run 2>"$tmp/err"); then
		fail "$1" "atrace failed: $(grep -m1 '^atrace: ' "$tmp/err" || tail -1 "$tmp/err")"
		return
	fi
	t1=$EPOCHREALTIME
	check_trace "$1" "$3" 1 || return 0
	a=$(sed -n 's/.*attached in \([0-9.]*\) ms.*/\1/p' "$tmp/err")
	s=$(start_s <<<"$out")
	attach[$1]+="$a " ready[$1]+="$(ms "$t0" "$s") " total[$1]+="$(ms "$t0" "$t1") "
}

# atrace_pid KEY MODE N: attach to a live many_fns_N for 0.1 s.
atrace_pid() {
	local t0 t1 a i pid=''
	"${PRIO[@]}" "${BIN[$3]}" wait 600 >"$tmp/wait.out" &  # nice execs: same pid
	WAIT_PID=$!
	for ((i = 0; i < 100; i++)); do
		pid=$(sed -n 's/^pid=\([0-9]*\)/\1/p' "$tmp/wait.out")
		[[ -n $pid ]] && break
		sleep 0.05
	done
	[[ $pid == "$WAIT_PID" ]] || { stop_wait; fail "$1" "target did not start"; return; }
	t0=$EPOCHREALTIME
	# shellcheck disable=SC2086
	if ! prio "$atrace" record -o "$tmp/a.data" --no-kernel --filter=off --attach="$2" \
		--select='bench_mf_*' --duration=0.1 $atrace_args -p "$pid" 2>"$tmp/err"; then
		stop_wait
		fail "$1" "atrace failed: $(grep -m1 '^atrace: ' "$tmp/err" || tail -1 "$tmp/err")"
		return
	fi
	t1=$EPOCHREALTIME
	stop_wait
	check_trace "$1" "$3" 0 || return 0
	a=$(sed -n 's/.*attached in \([0-9.]*\) ms.*/\1/p' "$tmp/err")
	attach[$1]+="$a " total[$1]+="$(ms "$t0" "$t1") "
}

# bt_launch KEY N: bpftrace's lines are stamped as they arrive.
bt_launch() {
	local t0 t1 ta s c
	t0=$EPOCHREALTIME
	BPFTRACE_MAX_PROBES=$(($2 + 16)) prio bpftrace -e "uprobe:${BIN[$2]}:bench_mf_* { @c = count(); }" \
		-c "${BIN[$2]} run" 2>&1 |
		while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done >"$tmp/bt.out"
	t1=$EPOCHREALTIME
	ta=$(awk '$2 == "Attaching" {print $1; exit}' "$tmp/bt.out")
	s=$(start_s <"$tmp/bt.out")
	c=$(awk '$2 == "@c:" {print $3}' "$tmp/bt.out")
	grep -q "Attaching $2 probes" "$tmp/bt.out" ||
		{ fail "$1" "bpftrace: $(grep -m1 -v RLIMIT "$tmp/bt.out" | cut -d' ' -f2-)"; return; }
	[[ $c == "$2" ]] || { fail "$1" "bpftrace counted ${c:-nothing}, expected $2"; return; }
	[[ -n $ta && -n $s ]] || { fail "$1" "no Attaching line or start_ns"; return; }
	echo "$1: bpftrace attached $2 probes, counted $c" >&2
	attach[$1]+="$(ms "$ta" "$s") " ready[$1]+="$(ms "$t0" "$s") " total[$1]+="$(ms "$t0" "$t1") "
}

run_one() {  # run_one MODE N
	case $1 in
	multi | perf) atrace_launch "$1.$2" "$1" "$2" ;;
	pmulti) atrace_pid "$1.$2" multi "$2" ;;
	pperf) atrace_pid "$1.$2" perf "$2" ;;
	bpftrace) bt_launch "$1.$2" "$2" ;;
	esac
}
slow() { [[ $2 -ge 4000 && $1 != multi && $1 != pmulti ]]; }
# fds_needed MODE N: what the tool holds while attached, roughly.
fds_needed() {
	case $1 in
	perf | pperf) echo $((4 * $2 + 200)) ;;
	bpftrace) echo $((2 * $2 + 200)) ;;
	*) echo 200 ;;
	esac
}

configs=()
for s in $sizes; do
	for m in $all_runs; do has_run "$m" && configs+=("$m $s"); done
done
k=${#configs[@]}
((k > 0)) || die "nothing to run"
echo "runs: ${configs[*]/%/;} $rounds rounds ($slow_rounds for perf and bpftrace on 4000 and more); open-file limit $(ulimit -n)" >&2
for ((r = 0; r < rounds; r++)); do
	for ((j = 0; j < k; j++)); do
		read -r m s <<<"${configs[(j + r) % k]}"
		slow "$m" "$s" && ((r >= slow_rounds)) && continue
		if (($(fds_needed "$m" "$s") > $(ulimit -n) && !force)); then
			((r == 0)) && note "$m.$s" "not run: needs about $(fds_needed "$m" "$s") open files, limit $(ulimit -n) (-f to try)"
			continue
		fi
		echo "$(date -u +%H:%M:%S) $m $s" >&2
		run_one "$m" "$s"
	done
	echo "round $((r + 1))/$rounds done $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

med() { tr ' ' '\n' <<<"${1:-}" | { grep . || true; } | median; }
range() { tr ' ' '\n' <<<"${1:-}" | { grep . || true; } | sort -g | sed -n '1p;$p' | paste -sd' ' |
	awk '{if (NF == 0) print "n/a"; else printf "%s–%s", $1, ($2 == "" ? $1 : $2)}'; }
fmt() { [[ $1 == nan ]] && echo "" || awk -v v="$1" 'BEGIN {if (v >= 100) printf "%.0f", v; else printf "%.1f", v}'; }
count() { tr ' ' '\n' <<<"${1:-}" | grep -c . || true; }
declare -A label=(
	[multi]="atrace --attach=multi (uprobe_multi links)"
	[perf]="atrace --attach=perf (a perf-event link per probe)"
	[bpftrace]="bpftrace, wildcard (a perf-event uprobe and program per probe)"
	[pmulti]="atrace --attach=multi -p PID --duration=0.1"
	[pperf]="atrace --attach=perf -p PID --duration=0.1"
)

echo
echo "kernel $(uname -r), $(nproc) CPUs, atrace $rev${atrace_args:+ ($atrace_args)}," \
	"$(bpftrace --version 2>/dev/null || echo 'no bpftrace'); open-file limit $(ulimit -n);" \
	"medians in ms; load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| functions | run | runs | attach (min–max) | ready | total | 10 000 in < 1 s |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | --- |"
for c in "${configs[@]}"; do
	read -r m s <<<"$c"
	key=$m.$s
	a=$(med "${attach[$key]:-}")
	goal=""
	if [[ $s == 10000 && $a != nan ]]; then
		goal=$(awk -v a="$a" 'BEGIN {print (a < 1000) ? "met" : "not met"}')
	fi
	if [[ $a == nan ]]; then
		echo "| $s | ${label[$m]} | 0 | not measured (below) | | | |"
		continue
	fi
	echo "| $s | ${label[$m]} | $(count "${attach[$key]:-}") | $(fmt "$a") ($(range "${attach[$key]:-}")) |" \
		"$(fmt "$(med "${ready[$key]:-}")") | $(fmt "$(med "${total[$key]:-}")") | $goal |"
done
echo
for c in "${configs[@]}"; do
	read -r m s <<<"$c"
	key=$m.$s
	[[ -n ${notes[$key]:-} ]] && echo "- $s, ${label[$m]}: ${notes[$key]}"
	[[ -n ${bad[$key]:-} ]] && echo "- $s, ${label[$m]}: ${bad[$key]} run(s) failed a check: left out"
	echo "- $s, ${label[$m]}: attach/ready/total ms per run: ${attach[$key]:-} / ${ready[$key]:-} / ${total[$key]:-}"
done
