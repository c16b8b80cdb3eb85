# Shared helpers of uprobe_cost.sh and uprobe_paths.sh (sourced, not run).
# shellcheck shell=bash

die() { echo "${0##*/}: $*" >&2; exit 1; }

# usage: prints the comment block at the top of the running script.
usage() { awk 'NR > 1 && /^#/ {print; next} NR > 1 {exit}' "$0"; }

need_tools() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || die "$t not found (apt-get install ${t/objdump/binutils})"
	done
}

# build_target [TARGET...]: builds bench/ on its own (cmake -S bench) in
# ${BENCH_BUILD:-/tmp/atrace-bench-build-HASH}, incrementally, and prints
# the path of that build tree. A private build tree keeps the benchmark
# independent of the state of the project's build (and of builds running in
# it); HASH names the checkout, since CMake refuses a tree another checkout
# configured.
build_tree() {
	local here own
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	own=${BENCH_BUILD:-${TMPDIR:-/tmp}/atrace-bench-build-$(printf %s "$here" | md5sum | cut -c1-8)}
	{ cmake -S "$here" -B "$own" -DCMAKE_BUILD_TYPE=Release &&
		cmake --build "$own" --target "${@:-uprobe_target}"; } >"$own.log" 2>&1 ||
		die "cannot build ${*:-uprobe_target} (see $own.log)"
	echo "$own"
}

# build_target: path of a freshly built uprobe_target.
build_target() { echo "$(build_tree uprobe_target)/uprobe_target"; }

# entry_bytes BIN FN: the hex bytes of FN's first instruction.
entry_bytes() {
	objdump -d --no-addresses "$1" --disassemble="$2" 2>/dev/null |
		awk -v fn="<$2>:" '$0 ~ fn {getline; sub(/^[ \t]+/, ""); split($0, a, "\t"); print a[1]; exit}' |
		sed 's/ *$//'
}

# entry_insn BIN FN: first instruction, as objdump prints it.
entry_insn() {
	objdump -d --no-addresses "$1" --disassemble="$2" 2>/dev/null |
		awk -v fn="<$2>:" '$0 ~ fn {getline; n = split($0, a, "\t"); print a[n]; exit}' |
		sed 's/  */ /g; s/ *$//'
}

# prio CMD...: runs CMD at nice level BENCH_NICE (default -10, "" for
# none), so that the measured processes (target and tracer alike) are less
# disturbed by other work on the machine.
PRIO=()
[[ -n ${BENCH_NICE--10} ]] && PRIO=(nice -n "${BENCH_NICE--10}")
prio() { "${PRIO[@]}" "$@"; }

# METRIC: cpu (default: CPU time of the calling thread per call, robust to
# other load on the machine) or wall (elapsed time per call).
METRIC=cpu

# parse_ns < uprobe_target output: the per-call figure of METRIC.
parse_ns() {
	local key=' ns_per_call='
	[[ $METRIC == cpu ]] && key=' cpu_ns_per_call='
	sed -n "s/.*$key\([0-9.]*\).*/\1/p"
}

# run_plain BIN FN N: the per-call figure of one run of uprobe_target.
run_plain() {
	prio "$1" "$2" "$3" | parse_ns
}

BT_PID=
BT_OUT=

# bt_start PROGRAM NPROBES: starts bpftrace and returns once NPROBES uprobes
# of it are attached and it handles SIGINT. bpftrace prints "Attaching N
# probes..." before it attaches, so that line is not enough: wait until the
# kernel lists them (bpftool perf list shows perf-event-attached BPF programs
# by pid). A background job of a script starts with SIGINT ignored; a SIGINT
# sent before bpftrace installs its handler would be lost, hence the SigCgt
# check.
bt_start() {
	local prog=$1 want=$2 i n cgt
	BT_OUT=$(mktemp)
	"${PRIO[@]}" bpftrace -e "$prog" >"$BT_OUT" 2>&1 &  # nice execs: same pid
	BT_PID=$!
	for ((i = 0; i < 300; i++)); do
		kill -0 "$BT_PID" 2>/dev/null || { cat "$BT_OUT" >&2; die "bpftrace exited"; }
		if grep -q '^Attaching' "$BT_OUT"; then
			n=$(bpftool perf list -j 2>/dev/null |
				jq --argjson p "$BT_PID" '[.[] | select(.pid == $p)] | length')
			cgt=$(awk '/^SigCgt:/ {print $2}' "/proc/$BT_PID/status" 2>/dev/null)
			if [[ ${n:-0} -ge $want ]] && (((16#${cgt:-0} >> 1) & 1)); then
				return 0
			fi
		fi
		sleep 0.1
	done
	kill -INT "$BT_PID"
	die "bpftrace did not attach $want probes in 30 s"
}

# bt_stop: stops bpftrace and sets BT_MAPS to its map output ("@c: 123"
# lines). Not to be called in a subshell: wait needs the parent shell.
BT_MAPS=
bt_stop() {
	local i
	for ((i = 0; i < 30; i++)); do
		kill -INT "$BT_PID" 2>/dev/null || break
		timeout 1 tail --pid="$BT_PID" -f /dev/null && break
	done
	wait "$BT_PID" 2>/dev/null || true
	BT_MAPS=$(grep '^@' "$BT_OUT" || true)
	rm -f "$BT_OUT"
	BT_PID=
}

bt_cleanup() { [[ -n $BT_PID ]] && kill -INT "$BT_PID" 2>/dev/null; true; }

# bt_count NAME: the value of @NAME in BT_MAPS (0 when absent).
bt_count() { awk -v k="@$1:" '$1 == k {print $2; f=1} END {if (!f) print 0}' <<<"$BT_MAPS"; }

# median: median of the numbers on stdin.
median() {
	sort -g | awk '{a[NR] = $1} END {if (NR == 0) {print "nan"; exit}
		if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

# assert_unprobed BIN: dies when some process already has a uprobe on BIN
# (a left-over tracer would make the untraced runs traced).
assert_unprobed() {
	local who
	who=$(bpftool perf list -j 2>/dev/null |
		jq -r --arg f "$1" '[.[] | select(.filename == $f) | .pid] | unique | join(" ")')
	[[ -z $who ]] || die "uprobes already attached to $1 by pid $who; stop them first"
}

kernel_has() { grep -qw "$1" /proc/kallsyms; }
