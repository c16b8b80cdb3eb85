#!/usr/bin/env bash
# net_cost.sh: what the net group (record --kernel=+net, issue 32) adds to
# each message, next to the same recording without it, in one run.
# bench/net_workload sends and receives N messages of 64 bytes in one
# thread (TCP on 127.0.0.1, a unix socketpair, a pipe) from net_batch() and
# times the loop. Runs, interleaved over the rounds in an order that
# rotates every round:
#   base    the workload alone
#   off     atrace record --select=net_batch              (default groups)
#   net     atrace record --select=net_batch --kernel=+net
#   other   the workload alone while `atrace record --kernel=+net` traces
#           another process (a sleep): what the group's fexit programs cost
#           the rest of the machine
# Every traced run is checked: `net` must have recorded 2N messages
# (atrace script --kind=message), `off` none, no run lost events.
#
# usage: bench/net_cost.sh [-b BUILD] [-n MESSAGES/2] [-r ROUNDS] [-m "tcp unix pipe"] [-a ARGS]
#   -a  extra options for every `atrace record`, e.g. "--buffer-size=64M"
#       (a loaded machine may not drain the default rings in time: a run
#       that lost events stops the benchmark)
# Run as root from the repository root. Prints a Markdown table of medians:
# CPU ns per message of the calling thread (CLOCK_THREAD_CPUTIME_ID: the
# fexit programs run in it), wall ns per message, and each run's CPU ns
# minus base's and its ratio to base, side by side.
# Workload and tracers run at nice -10 (BENCH_NICE=N to change, "" for none).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.sh"

build=build n=200000 rounds=5 wmodes="tcp unix pipe" atrace_args=""
while getopts b:n:r:m:a:h opt; do
	case $opt in
	b) build=$OPTARG ;; n) n=$OPTARG ;; r) rounds=$OPTARG ;; m) wmodes=$OPTARG ;;
	a) atrace_args=$OPTARG ;;
	*) usage; exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || die "run as root"
need_tools jq
[[ -x $build/atrace ]] || die "no $build/atrace"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$build/atrace" "$tmp/atrace"
atrace=$tmp/atrace
wl="$(build_tree net_workload)/net_workload"

# one RUN MODE: prints "cpu wall" per message.
one() {
	local run=$1 mode=$2 out=$tmp/run.out data=$tmp/run.data
	case $run in
	base) prio "$wl" "$mode" "$n" >"$out" ;;
	off | net)
		local extra=()
		[[ $run == net ]] && extra=(--kernel=+net)
		# shellcheck disable=SC2086
		prio "$atrace" record -o "$data" --select=net_batch "${extra[@]}" $atrace_args -- \
			"$wl" "$mode" "$n" >"$out" 2>"$tmp/err" || die "$(cat "$tmp/err")"
		local lost msgs
		lost=$("$atrace" report -i "$data" --format=json | jq .lost_events)
		[[ $lost == 0 ]] || die "$run $mode: $lost events lost"
		msgs=$("$atrace" script -i "$data" --kind=message --fields=kind | wc -l)
		if [[ $run == net ]]; then
			((msgs >= 2 * n)) || die "net $mode: $msgs messages recorded, want $((2 * n))"
		else
			((msgs == 0)) || die "off $mode: $msgs messages recorded"
		fi ;;
	other)
		sleep 600 &
		local victim=$!
		# shellcheck disable=SC2086
		"$atrace" record -o "$data" --kernel=+net $atrace_args -p "$victim" 2>"$tmp/err" &
		local rec=$!
		sleep 2 # attached (the recorder has loaded and attached by then)
		prio "$wl" "$mode" "$n" >"$out"
		kill -INT "$rec"; wait "$rec" || true
		kill "$victim"; wait "$victim" 2>/dev/null || true ;;
	esac
	echo "$(sed -n 's/^cpu_ns_per_msg=//p' "$out") $(sed -n 's/^ns_per_msg=//p' "$out")"
}

runs="base off net other"
declare -A cpu wall
for ((r = 0; r < rounds; r++)); do
	order=($runs)
	order=("${order[@]:$((r % 4))}" "${order[@]:0:$((r % 4))}")
	for mode in $wmodes; do
		for run in "${order[@]}"; do
			read -r c w < <(one "$run" "$mode")
			cpu[$run.$mode]+="$c "
			wall[$run.$mode]+="$w "
		done
	done
done

echo "| mode | run | CPU ns/msg | wall ns/msg | CPU - base | CPU / base |"
echo "| --- | --- | ---: | ---: | ---: | ---: |"
for mode in $wmodes; do
	b=$(tr ' ' '\n' <<<"${cpu[base.$mode]}" | grep . | median)
	for run in $runs; do
		c=$(tr ' ' '\n' <<<"${cpu[$run.$mode]}" | grep . | median)
		w=$(tr ' ' '\n' <<<"${wall[$run.$mode]}" | grep . | median)
		awk -v m="$mode" -v r="$run" -v c="$c" -v w="$w" -v b="$b" \
			'BEGIN {printf "| %s | %s | %.0f | %.0f | %+.0f | %.2f |\n", m, r, c, w, c - b, c / b}'
	done
done
