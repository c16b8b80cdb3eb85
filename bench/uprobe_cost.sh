#!/usr/bin/env bash
# uprobe_cost.sh: the added cost per traced call (entry + exit) of atrace
# against bpftrace counting the same function with uprobe + uretprobe, on the
# same binary in the same run, for functions whose entry takes each uprobe
# path:
#   singlestep  bench_fn_singlestep  entry `mov $imm,%eax`: single-stepped (XOL)
#   nop5        bench_fn_nop5        entry `0f 1f 44 00 00`: optimized (6.18+)
#   push        bench_fn_push        entry `push %rbp`: emulated
#   nop1x5      bench_fn_nop1x5      entry five `90`: emulated 1-byte nop
#   endbrpush   bench_fn_endbrpush   `endbr64; push %rbp`: bpftrace probes the
#                                    single-stepped endbr64 at +0, atrace the
#                                    emulated push at +4 (uprobes/placement.h)
# The entry bytes are checked with objdump before anything runs.
#
# usage: bench/uprobe_cost.sh [-b BUILD] [-n CALLS] [-r ROUNDS]
#                             [-v "singlestep nop5 push endbrpush"] [-a ARGS] [-A] [-w] [-T]
#   -b  build tree holding atrace (default: build); uprobe_target is built
#       from bench/ on its own (see build_target in bench_lib.sh)
#   -n  calls per run (default 200000; singlestep and endbrpush run n/10)
#   -r  rounds; each round runs every variant untraced, under bpftrace and
#       under atrace, in rotating order (default 5)
#   -a  extra options for `atrace record`, e.g. "--attach=perf"; atrace
#       always runs with its defaults (kernel groups included) but for
#       --filter=off: the default relevance filter would detach these
#       empty functions after 1000 calls, and every call's cost is what is
#       measured here
#   -A  skip atrace (bpftrace and baseline only)
#   -w  report elapsed time per call instead of the calling thread's CPU time
#       per call (the default, which other load on the machine disturbs less)
#   -T  also bpftrace timing each call, as its users measure durations
#       (entry time in a map keyed by thread, a histogram of the
#       differences): what taking two timestamps a call costs bpftrace
# Run as root from the repository root. Prints a Markdown table of medians.
# Target and tracers run at nice -10 (BENCH_NICE=N to change, "" for none).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.sh"

build=build n=200000 rounds=5 variants="singlestep nop5 push endbrpush" use_atrace=1 atrace_args="" bt_timing=0
while getopts b:n:r:v:a:AwTh opt; do
	case $opt in
	b) build=$OPTARG ;; n) n=$OPTARG ;; r) rounds=$OPTARG ;;
	v) variants=$OPTARG ;; a) atrace_args=$OPTARG ;; A) use_atrace=0 ;; w) METRIC=wall ;; T) bt_timing=1 ;;
	*) usage; exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || die "run as root (bpftrace and atrace need it)"
need_tools bpftrace bpftool jq objdump
target=$(readlink -f "$(build_target)")
assert_unprobed "$target"
atrace=$(readlink -f "$build/atrace" 2>/dev/null || true)
if ((use_atrace)) && [[ ! -x $atrace ]]; then
	echo "note: $build/atrace not found: atrace columns left empty" >&2
	use_atrace=0
fi
tmp=$(mktemp -d)
trap 'bt_cleanup; rm -rf "$tmp"' EXIT
# A copy, so that a rebuild of the build tree during the run cannot mix two
# versions of atrace in one table.
if ((use_atrace)); then
	cp "$atrace" "$tmp/atrace"
	atrace=$tmp/atrace
fi

# Probe path per variant, checked against the entry bytes.
declare -A want_bytes path calls
want_bytes[singlestep]="b8 b1 79 37 9e" path[singlestep]="single-step (XOL)"
want_bytes[nop5]="0f 1f 44 00 00"
path[nop5]="optimized NOP5 (uprobe syscall)"
kernel_has __x64_sys_uprobe || path[nop5]="emulated NOP5 (kernel without optimized uprobes)"
want_bytes[push]="55" path[push]="emulated (push)"
want_bytes[nop1x5]="90" path[nop1x5]="emulated (1-byte nop)"
want_bytes[endbrpush]="f3 0f 1e fa"
path[endbrpush]="bpftrace: single-step at +0; atrace: emulated push at +4"
ret_path="uretprobe syscall"
kernel_has __x64_sys_uretprobe || ret_path="uretprobe int3 trap"
for v in $variants; do
	[[ -n ${want_bytes[$v]:-} ]] || die "unknown variant '$v'"
	fn=bench_fn_$v
	got=$(entry_bytes "$target" "$fn")
	[[ $got == "${want_bytes[$v]}" ]] ||
		die "$fn starts with '$got' ($(entry_insn "$target" "$fn")), expected '${want_bytes[$v]}': wrong compiler flags?"
	if [[ $v == singlestep ]]; then
		# not emulated: no push, nop, jmp/call/jcc opcode
		case $(entry_insn "$target" "$fn") in
		mov* | lea* | imul*) ;;
		*) die "$fn does not start with mov/lea/imul" ;;
		esac
	fi
	if [[ $v == endbrpush ]] && ((use_atrace)); then
		place=$("$atrace" list "$target" "$fn" | awk -v f="$fn" '$NF == f {print $1, $2}')
		[[ $place == "+4 emulated" ]] || die "atrace list puts $fn's probe at '$place', expected '+4 emulated'"
	fi
	calls[$v]=$n
	[[ $v == singlestep || $v == endbrpush ]] && calls[$v]=$((n / 10 > 1000 ? n / 10 : 1000))
	echo "$fn: entry \`$got\` = $(entry_insn "$target" "$fn") -> ${path[$v]}" >&2
done

declare -A res  # res[variant.mode] = "ns ns ns ..."
declare -A atr_calls atr_lost bt_min
run_base() {
	local ns
	ns=$(run_plain "$target" "bench_fn_$1" "${calls[$1]}")
	echo "run $1 untraced $ns" >&2
	res[$1.base]+="$ns "
}
run_bpftrace() {
	local v=$1 fn=bench_fn_$1 ns c r
	bt_start "uprobe:$target:$fn { @c = count(); } uretprobe:$target:$fn { @r = count(); }" 2
	ns=$(run_plain "$target" "$fn" "${calls[$v]}")
	bt_stop
	c=$(bt_count c) r=$(bt_count r)
	[[ $c -eq ${calls[$v]} && $r -eq ${calls[$v]} ]] ||
		echo "warning: bpftrace $fn: $c entries, $r returns, expected ${calls[$v]}" >&2
	echo "run $v bpftrace $ns" >&2
	res[$v.bpftrace]+="$ns "
}
run_bttime() {
	local v=$1 fn=bench_fn_$1 ns c
	bt_start "uprobe:$target:$fn { @s[tid] = nsecs; } uretprobe:$target:$fn /@s[tid]/ { @d = hist(nsecs - @s[tid]); delete(@s[tid]); @c = count(); }" 2
	ns=$(run_plain "$target" "$fn" "${calls[$v]}")
	bt_stop
	c=$(bt_count c)
	[[ $c -eq ${calls[$v]} ]] || echo "warning: bpftrace timing $fn: $c calls timed, expected ${calls[$v]}" >&2
	echo "run $v bttime $ns" >&2
	res[$v.bttime]+="$ns "
}
run_atrace() {
	local v=$1 fn=bench_fn_$1 out ns json c l
	# shellcheck disable=SC2086 # atrace_args: words on purpose
	if ! out=$(prio "$atrace" record -o "$tmp/x.data" --select="$fn" --filter=off $atrace_args -- \
		"$target" "$fn" "${calls[$v]}" 2>"$tmp/err"); then
		echo "atrace record failed: $(tail -3 "$tmp/err")" >&2
		echo "atrace disabled for the rest of this run" >&2
		use_atrace=0
		return
	fi
	ns=$(parse_ns <<<"$out")
	json=$("$atrace" report -i "$tmp/x.data" --format=json)
	c=$(jq --arg f "$fn" '[.functions[] | select(.name == $f) | .calls] | add // 0' <<<"$json")
	l=$(jq '.lost_events' <<<"$json")
	echo "atrace $fn: calls=$c (expected ${calls[$v]}) lost_events=$l" >&2
	echo "run $v atrace $ns" >&2
	res[$v.atrace]+="$ns "
	atr_calls[$v]+="$c " atr_lost[$v]+="$l "
}

modes=(base bpftrace atrace)
((bt_timing)) && modes+=(bttime)
for ((r = 0; r < rounds; r++)); do
	for v in $variants; do
		for ((k = 0; k < ${#modes[@]}; k++)); do
			m=${modes[(k + r) % ${#modes[@]}]}
			[[ $m == atrace ]] && ((!use_atrace)) && continue
			"run_$m" "$v"
		done
	done
	echo "round $((r + 1))/$rounds done" >&2
done

med() { tr ' ' '\n' <<<"${1:-}" | { grep . || true; } | median; }
fmt() { [[ $1 == nan ]] && echo "TODO" || printf '%.1f' "$1"; }
sub() { [[ $1 == nan || $2 == nan ]] && echo nan || awk -v a="$1" -v b="$2" 'BEGIN {print a - b}'; }
echo
echo "kernel $(uname -r), $(nproc) CPUs, bpftrace $(bpftrace --version | awk '{print $2}'), $rounds rounds, medians of $METRIC ns/call; return probes: $ret_path; atrace record --filter=off ${atrace_args:-(otherwise default options)}"
echo
echo "| function | entry path | calls/run | untraced ns/call | bpftrace ns/call | atrace ns/call | bpftrace added | atrace added | atrace/bpftrace | atrace calls recorded | atrace lost |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"
for v in $variants; do
	b=$(med "${res[$v.base]:-}") t=$(med "${res[$v.bpftrace]:-}") a=$(med "${res[$v.atrace]:-}")
	db=$(sub "$t" "$b") da=$(sub "$a" "$b")
	ratio=TODO rec=TODO lost=TODO
	if [[ $da != nan ]]; then
		ratio=$(awk -v a="$da" -v b="$db" 'BEGIN {printf "%.2f", a / b}')
		rec=$(tr ' ' '\n' <<<"${atr_calls[$v]}" | grep . | sort -u | paste -sd/)
		[[ $rec == "${calls[$v]}" ]] && rec="$rec (all)" || rec="$rec (expected ${calls[$v]})"
		lost=$(tr ' ' '\n' <<<"${atr_lost[$v]}" | grep . | sort -g | tail -1)
	fi
	echo "| bench_fn_$v | ${path[$v]} | ${calls[$v]} | $(fmt "$b") | $(fmt "$t") | $(fmt "$a") | $(fmt "$db") | $(fmt "$da") | $ratio | $rec | $lost |"
done
if ((bt_timing)); then
	echo
	echo "| function | entry path | bpftrace timing added | atrace added | atrace / bpftrace timing |"
	echo "| --- | --- | ---: | ---: | ---: |"
	for v in $variants; do
		b=$(med "${res[$v.base]:-}") tt=$(med "${res[$v.bttime]:-}") a=$(med "${res[$v.atrace]:-}")
		dt=$(sub "$tt" "$b") da=$(sub "$a" "$b")
		ratio=TODO
		[[ $da != nan && $dt != nan ]] && ratio=$(awk -v a="$da" -v b="$dt" 'BEGIN {printf "%.2f", a / b}')
		echo "| bench_fn_$v | ${path[$v]} | $(fmt "$dt") | $(fmt "$da") | $ratio |"
	done
fi
