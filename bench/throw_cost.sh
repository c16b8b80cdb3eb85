#!/usr/bin/env bash
# throw_cost.sh: what atrace adds to a C++ throw through traced frames
# (issue 29), for one or two builds of atrace in the same run.
# bench/throw_workload calls tw_f1 -> tw_f2 -> tw_f3 N times; tw_f3 either
# returns or throws to a catch in the (untraced) loop, and the program
# prints the loop's ns per iteration. With --select='tw_*' both loops pay
# the three entry probes; the throw also pays the unwind guard: its probes
# on the unwinder (_Unwind_RaiseException, __cxa_begin_catch,
# _Unwind_DeleteException) and the round trip to the recorder that puts
# the original return addresses back before the unwinder reads them
# (docs/exceptions.md). Per build and round:
#   added = (traced throw - traced return) - (untraced throw - untraced return)
# Rounds interleave the builds. Prints the median of each figure, and the
# added cost from the fastest traced throw and return of all rounds (on a
# loaded machine the least disturbed runs: other work only adds), and, with
# two builds, the ratios of the added costs (new / baseline).
#
# usage: bench/throw_cost.sh [-b BUILD] [-B BASELINE] [-n N] [-r ROUNDS]
#   -b  build tree or atrace binary (default: build; a copy is run)
#   -B  a second one to compare with (e.g. main's build)
#   -n  iterations per run (default 5000)
#   -r  rounds (default 3)
# Run as root from the repository root. Workload and atrace run at nice -10
# (BENCH_NICE=N to change, "" for none): the figures are about atrace's
# own latencies, not about other work on the machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.sh"

build=build baseline="" n=5000 rounds=3
while getopts b:B:n:r:h opt; do
	case $opt in
	b) build=$OPTARG ;; B) baseline=$OPTARG ;; n) n=$OPTARG ;; r) rounds=$OPTARG ;;
	*) usage; exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || die "run as root (atrace needs it)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# copy_atrace SRC NAME: a private copy of a build's atrace (the build may
# change while the benchmark runs).
copy_atrace() {
	local a=$1
	[[ -d $a ]] && a=$a/atrace
	[[ -x $a ]] || die "no atrace at $1"
	cp "$a" "$tmp/$2"
	echo "$tmp/$2"
}
names=(new)
declare -A bin
bin[new]=$(copy_atrace "$build" atrace-new)
if [[ -n $baseline ]]; then
	names=(baseline new)
	bin[baseline]=$(copy_atrace "$baseline" atrace-baseline)
fi
work="$(build_tree throw_workload)/throw_workload"
nice_level=${BENCH_NICE--10}
prio() { if [[ -n $nice_level ]]; then nice -n "$nice_level" "$@"; else "$@"; fi; }

# per MODE [ATRACE]: ns per iteration of one run.
per() {
	local out
	if [[ -n ${2:-} ]]; then
		out=$(prio "$2" record -o "$tmp/t.atrace" --select='tw_*' --filter=off --no-kernel \
			-- "$work" "$1" "$n" 2>"$tmp/err") || die "atrace failed: $(cat "$tmp/err")"
	else
		out=$(prio "$work" "$1" "$n")
	fi
	sed -n 's/.*ns_per_iteration=\([0-9]*\).*/\1/p' <<<"$out"
}
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }

declare -A added throw ret
uthrow="" uret=""
for ((r = 0; r < rounds; r++)); do
	ut=$(per throw) ur=$(per return)
	uthrow+="$ut " uret+="$ur "
	for name in "${names[@]}"; do
		tt=$(per throw "${bin[$name]}") tr=$(per return "${bin[$name]}")
		throw[$name]+="$tt " ret[$name]+="$tr "
		added[$name]+="$(((tt - tr) - (ut - ur))) "
		echo "round $r $name: untraced throw $ut ns, return $ur ns; traced throw $tt ns, return $tr ns" >&2
	done
done

minimum() { sort -n | head -1; }
col() { tr ' ' '\n' <<<"$1" | grep . | "$2"; }
echo "| atrace | traced throw, median (ns/iter) | traced return, median | added, median of rounds (ns) | traced throw, fastest | traced return, fastest | added, from the fastest (ns) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
declare -A med fast
for name in "${names[@]}"; do
	med[$name]=$(col "${added[$name]}" median)
	ft=$(col "${throw[$name]}" minimum) fr=$(col "${ret[$name]}" minimum)
	fast[$name]=$(((ft - fr) - ($(col "$uthrow" minimum) - $(col "$uret" minimum))))
	echo "| $name | $(col "${throw[$name]}" median) | $(col "${ret[$name]}" median) | ${med[$name]} |" \
		"$ft | $fr | ${fast[$name]} |"
done
if [[ -n $baseline ]]; then
	awk -v a="${med[new]}" -v b="${med[baseline]}" -v fa="${fast[new]}" -v fb="${fast[baseline]}" \
		'BEGIN {printf "\nadded to a throw, new / baseline: %.2f (medians), %.2f (fastest)\n", a / b, fa / fb}'
fi
