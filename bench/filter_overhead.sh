#!/usr/bin/env bash
# filter_overhead.sh: how much of atrace's tracing overhead the relevance
# filters (issue 5) take away, on tests/targets/target_filter: a tiny hot()
# (a few ns of work) called 1000 times by each call of a ~1 ms slow(),
# slow() called SLOW times (default 300) per thread; both functions traced
# (--select=hot,slow, atrace's default kernel groups: with sched on, the
# filters leave out the time a thread spent preempted; -a --no-kernel for
# the filters alone). Configurations:
#   entries  push: target_filter (every function starts with push %rbp:
#                  emulated uprobe)
#            nop5: target_filter_nop5 (-pg -mfentry -mnop-mcount: every
#                  function starts with 0f 1f 44 00 00, the optimized path)
#            singlestep: target_filter_singlestep (-fomit-frame-pointer:
#                  hot() starts with a store to the red zone, single-stepped,
#                  ~10 us a hit and no cheaper instruction to move to)
#            (the entry bytes of hot and slow are checked with objdump first)
#   threads  1, or 2 threads each doing the whole work at once
#   modes    untraced   the target alone
#            off        atrace record --filter=off
#            absolute   --filter=absolute (default threshold 2us, min calls 1000)
#            relative   --filter=relative
#            maxcalls   --filter=off --filter-max-calls=1000 (MAXCALLS_ARGS to change)
# Every round runs every configuration in every mode, in an order that
# rotates each round. Measured by the target itself (--time) over its work
# only (attach and start-up of atrace excluded): CPU time of the whole
# process (all threads: uprobe handlers and BPF programs run in the traced
# threads) and elapsed time; besides, the CPU time of atrace and the target
# together over the whole `atrace record` (bash's times of the children:
# start-up, attach, draining, writing and detaching included) and the size
# of the trace file; and the elapsed time of the whole run (`atrace
# record -- target`, or the target alone when untraced: atrace's start-up
# and teardown included, bench/startup.sh). Reported: medians, and the
# share of the tracing overhead a filter removes, (off - filtered) /
# (off - untraced), from the medians and its range over the rounds (each
# round's own runs): over the target's own work (start-up subtracted) and
# over the whole run (start-up included; for a short program the fixed
# start-up cost is a large part of the overhead no filter can remove). Every run
# is checked: the target's output (counts and checksum) equals the untraced
# output, slow's calls are exact, nothing was lost, and a filtered run
# detached hot (rule named).
#
# usage: bench/filter_overhead.sh [-b BUILD] [-r ROUNDS] [-n SLOW] [-e "push nop5 singlestep"]
#                                 [-t "1 2"] [-m "untraced off absolute relative maxcalls"]
#                                 [-a ARGS]
#   -b  build tree holding atrace and tests/targets (default: build; copies
#       are run, so a rebuild during the run cannot mix versions)
#   -r  rounds (default 5)
#   -n  slow() calls per thread (default 300; hot() is called 1000 times each)
#   -a  extra options for every `atrace record`
# Run as root from the repository root. Prints Markdown tables.
# Target and atrace run at nice -10 (BENCH_NICE=N to change, "" for none).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.sh"

build=build rounds=5 slow=300 entries="push nop5" threadsl="1 2" atrace_args=""
modes="untraced off absolute relative maxcalls"
while getopts b:r:n:e:t:m:a:h opt; do
	case $opt in
	b) build=$OPTARG ;; r) rounds=$OPTARG ;; n) slow=$OPTARG ;; e) entries=$OPTARG ;;
	t) threadsl=$OPTARG ;; m) modes=$OPTARG ;; a) atrace_args=$OPTARG ;;
	*) usage; exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || die "run as root (atrace needs it)"
need_tools jq objdump
hot_per_slow=1000
declare -A mode_args=(
	[off]="--filter=off"
	[absolute]="--filter=absolute"
	[relative]="--filter=relative"
	[maxcalls]="${MAXCALLS_ARGS:---filter=off --filter-max-calls=1000}"
)
declare -A mode_rule=([absolute]=absolute [relative]=relative [maxcalls]=max-calls)
for m in $modes; do
	[[ $m == untraced || -n ${mode_args[$m]:-} ]] || die "unknown mode '$m'"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[[ -x $build/atrace ]] || die "$build/atrace not found (build the project first)"
cp "$build/atrace" "$tmp/atrace"
atrace=$tmp/atrace
declare -A bin want
want[push.hot]="55" want[push.slow]="55"
want[nop5.hot]="0f 1f 44 00 00" want[nop5.slow]="0f 1f 44 00 00"
# singlestep: hot() stores to the red zone first (mov %rsi,-0x8(%rsp)), so no
# instruction of its prefix can take the probe instead: every hit is stepped.
want[singlestep.hot]="48 89 74 24 f8" want[singlestep.slow]="41 57"
for e in $entries; do
	src=$build/tests/targets/target_filter
	[[ $e == push ]] || src=${src}_$e
	[[ -n ${want[$e.hot]:-} ]] || die "unknown entry kind '$e'"
	[[ -x $src ]] || die "$src not found (cmake --build $build --target atrace_test_targets)"
	cp "$src" "$tmp/target_$e"
	bin[$e]=$tmp/target_$e
	for fn in hot slow; do
		got=$(entry_bytes "${bin[$e]}" "$fn")
		[[ $got == "${want[$e.$fn]}" ]] ||
			die "$fn of $src starts with '$got' ($(entry_insn "${bin[$e]}" "$fn")), expected '${want[$e.$fn]}'"
	done
	if objdump -d "${bin[$e]}" | grep -qE 'call.*<(mcount|__fentry__)'; then
		die "$src calls mcount/__fentry__: built without -mnop-mcount?"
	fi
	echo "target_filter ($e): hot starts with \`${want[$e.hot]}\`, slow with \`${want[$e.slow]}\`" >&2
done

# res[entry.threads.mode.field] = "v v v ..." over rounds (field: cpu wall
# all size hot); round[entry.threads.mode.r] = cpu of round r.
declare -A res ref roundv
add() { res[$1]+="$2 "; }
target_args() { echo "$slow $hot_per_slow --threads=$1 --time"; }
# times_children: user + system CPU seconds of this shell's finished
# children so far (the second line of bash's `times`), read from a file:
# `times` in a command substitution would report the subshell's (none).
times_children() {
	times >"$tmp/times"
	awk 'NR == 2 {
		split($1, u, /[ms]/); split($2, s, /[ms]/)
		printf "%.6f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$tmp/times"
}

# one ENTRY THREADS MODE ROUND
one() {
	local e=$1 t=$2 m=$3 r=$4 key=$1.$2.$3 out json cpu wall all size hotc slowc lost rules t0 t1 lat
	local run0 run1
	# shellcheck disable=SC2046 # target_args: words on purpose
	if [[ $m == untraced ]]; then
		times_children >"$tmp/t0"
		run0=$(date +%s%N)
		out=$(prio "${bin[$e]}" $(target_args "$t"))
		run1=$(date +%s%N)
		times_children >"$tmp/t1"
		size=0 hotc=0
	else
		rm -f "$tmp/x.data" "$tmp/x.data.exclude"
		times_children >"$tmp/t0"
		run0=$(date +%s%N)
		# shellcheck disable=SC2086
		if ! out=$(prio "$atrace" record -o "$tmp/x.data" --select=hot,slow \
			${mode_args[$m]} $atrace_args -- "${bin[$e]}" $(target_args "$t") 2>"$tmp/err"); then
			die "atrace record ($key) failed: $(tail -3 "$tmp/err")"
		fi
		run1=$(date +%s%N)
		times_children >"$tmp/t1"
		size=$(stat -c %s "$tmp/x.data")
		json=$("$atrace" report -i "$tmp/x.data" --format=json)
		hotc=$(jq '[.functions[] | select(.name == "hot") | .calls] | add // 0' <<<"$json")
		slowc=$(jq '[.functions[] | select(.name == "slow") | .calls] | add // 0' <<<"$json")
		lost=$(jq '.lost_events' <<<"$json")
		rules=$(jq -r '[.detached[]? | "\(.name):\(.rule)"] | join(",")' <<<"$json")
		[[ $slowc -eq $((slow * t)) ]] || echo "warning: $key: slow calls $slowc, expected $((slow * t))" >&2
		[[ $lost -eq 0 ]] || echo "warning: $key: $lost events lost" >&2
		if [[ -n ${mode_rule[$m]:-} && $rules != "hot:${mode_rule[$m]}" ]]; then
			echo "warning: $key: detached '$rules', expected hot:${mode_rule[$m]}" >&2
		fi
		[[ $m == off && -n $rules ]] && echo "warning: $key: detached '$rules' with --filter=off" >&2
		res[$key.rules]=$rules
		# atrace's own measure of its detach latency, when it prints one
		lat=$(sed -n 's/.*decision to probes gone: median \([0-9.]*\) ms.*/\1/p' "$tmp/err")
		[[ -n $lat ]] && add "$key.lat" "$lat"
	fi
	cpu=$(sed -n 's/^cpu_ns=//p' <<<"$out") wall=$(sed -n 's/^wall_ns=//p' <<<"$out")
	local body
	body=$(grep -v -e '^cpu_ns=' -e '^wall_ns=' <<<"$out")
	if [[ -z ${ref[$e.$t]:-} ]]; then
		ref[$e.$t]=$body
	elif [[ $body != "${ref[$e.$t]}" ]]; then
		echo "warning: $key: the target's output differs from the first run's:" >&2
		diff <(echo "${ref[$e.$t]}") <(echo "$body") >&2 || true
	fi
	t0=$(<"$tmp/t0") t1=$(<"$tmp/t1")
	all=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", (b - a) * 1e9}')
	add "$key.cpu" "$cpu"
	add "$key.wall" "$wall"
	add "$key.all" "$all"
	add "$key.size" "$size"
	add "$key.run" "$((run1 - run0))"
	add "$key.hot" "$hotc"
	roundv[$key.$r.cpu]=$cpu roundv[$key.$r.wall]=$wall roundv[$key.$r.run]=$((run1 - run0))
}


read -ra mlist <<<"$modes"
nm=${#mlist[@]}
for ((r = 0; r < rounds; r++)); do
	for e in $entries; do
		for t in $threadsl; do
			for ((k = 0; k < nm; k++)); do
				one "$e" "$t" "${mlist[(k + r) % nm]}" "$r"
			done
		done
	done
	echo "round $((r + 1))/$rounds done" >&2
done

med() { tr ' ' '\n' <<<"${1:-}" | { grep . || true; } | median; }
ms() { awk -v v="$1" 'BEGIN {printf "%.1f", v / 1e6}'; }
share() { awk -v o="$1" -v f="$2" -v b="$3" 'BEGIN {
	if (o - b <= 0) print "n/a"; else printf "%.1f %%", 100 * (o - f) / (o - b) }'; }
# range over rounds of the per-round share: "min to max"
share_range() {
	local e=$1 t=$2 m=$3 field=$4 r vals=""
	for ((r = 0; r < rounds; r++)); do
		vals+=$(awk -v o="${roundv[$e.$t.off.$r.$field]}" -v f="${roundv[$e.$t.$m.$r.$field]}" \
			-v b="${roundv[$e.$t.untraced.$r.$field]}" 'BEGIN {
			if (o - b > 0) printf "%.1f\n", 100 * (o - f) / (o - b) }')$'\n'
	done
	sort -g <<<"$vals" | grep . | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%s to %s %%", lo, hi}'
}

load=$(cut -d' ' -f1-3 /proc/loadavg)
echo
echo "kernel $(uname -r), $(nproc) CPUs, load average at the end $load; $rounds rounds, medians;" \
	"target_filter $slow x $hot_per_slow calls of hot() per thread; atrace record --select=hot,slow ${atrace_args}"
for e in $entries; do
	for t in $threadsl; do
		echo
		echo "### entries: $e, threads: $t"
		echo
		echo "| mode | target CPU ms | target elapsed ms | atrace+target CPU ms | run elapsed ms | trace bytes | hot calls recorded | detached | decision to probes gone ms | overhead removed (CPU) | per round (CPU) | overhead removed (elapsed, start-up subtracted) | per round | overhead removed (run elapsed, start-up included) | per round |"
		echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- | ---: | --- | ---: | --- |"
		bc=$(med "${res[$e.$t.untraced.cpu]:-}") bw=$(med "${res[$e.$t.untraced.wall]:-}")
		oc=$(med "${res[$e.$t.off.cpu]:-}") ow=$(med "${res[$e.$t.off.wall]:-}")
		br=$(med "${res[$e.$t.untraced.run]:-}") or=$(med "${res[$e.$t.off.run]:-}")
		for m in $modes; do
			c=$(med "${res[$e.$t.$m.cpu]}") w=$(med "${res[$e.$t.$m.wall]}")
			a=$(med "${res[$e.$t.$m.all]}") s=$(med "${res[$e.$t.$m.size]}")
			h=$(med "${res[$e.$t.$m.hot]}") rn=$(med "${res[$e.$t.$m.run]}")
			sc="" sr="" swl="" swr="" srl="" srr=""
			if [[ $m != untraced && $m != off && -n ${res[$e.$t.off.cpu]:-} && -n ${res[$e.$t.untraced.cpu]:-} ]]; then
				sc=$(share "$oc" "$c" "$bc") sr=$(share_range "$e" "$t" "$m" cpu)
				swl=$(share "$ow" "$w" "$bw") swr=$(share_range "$e" "$t" "$m" wall)
				srl=$(share "$or" "$rn" "$br") srr=$(share_range "$e" "$t" "$m" run)
			fi
			l=$(med "${res[$e.$t.$m.lat]:-}")
			[[ $l == nan ]] && l=""
			echo "| $m | $(ms "$c") | $(ms "$w") | $(ms "$a") | $(ms "$rn") | $(printf '%.0f' "$s") | $(printf '%.0f' "$h") | ${res[$e.$t.$m.rules]:-} | $l | $sc | $sr | $swl | $swr | $srl | $srr |"
		done
	done
done
