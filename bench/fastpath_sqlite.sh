#!/usr/bin/env bash
# fastpath_sqlite.sh: sqlite3 inserting 20,000 rows (one INSERT each, one
# transaction, an in-memory table) with every `libsqlite3.so*:sqlite3_*`
# function traced in an ATTACHED sqlite3, side by side in one run:
#   untraced  the same harness, nothing attached
#   fast      atrace record -p PID --fast-path --filter=off (issue 35)
#   kernel    atrace record -p PID --filter=off (uprobes and uretprobes)
#   hot       atrace record -p PID --fast-path=hot (the kernel's probes, the
#             default filter; what it finds too hot patched instead of
#             detached: every call kept)
#   bpftrace  bpftrace -p PID counting the same functions' entries and returns
#   uftrace   uftrace record --force launching sqlite3 (it cannot attach):
#             it hooks the PLT, so it records the shell's calls into
#             libsqlite3 (and libc), not the library's calls to itself
# sqlite3 is started reading a pipe that stays empty until the tracer is in
# (atrace: its "probing" line; bpftrace: its BEGIN; uftrace: sqlite3 has
# run its exec and 0.5 s have passed), then gets `.read FILE`; the time is
# from then to sqlite3's exit (its zombie: the harness's init may reap
# late). Rounds rotate the order of the modes; medians and the slowdown
# against untraced are printed, with the calls each tracer kept and
# atrace's losses. atrace may go on reading its ring after sqlite3's exit:
# "tracer_s" is the time to the tracer's own end. With perf installed, the
# CPU time sqlite3 itself used (perf stat -e task-clock on its pid, from
# the input on) is printed too: on a machine loaded by other work the wall
# time mostly says how long sqlite3 waited for a CPU.
#
# usage: bench/fastpath_sqlite.sh [-b BUILD] [-r ROUNDS] [-m "untraced fast kernel hot bpftrace uftrace"]
# Run as root from the repository root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.sh"
build=build rounds=3 modes="untraced fast kernel bpftrace uftrace"
while getopts b:r:m:h opt; do
	case $opt in
	b) build=$OPTARG ;; r) rounds=$OPTARG ;; m) modes=$OPTARG ;; *) usage; exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || die "run as root"
need_tools sqlite3 bpftrace python3
[[ $modes != *uftrace* ]] || need_tools uftrace
export BPFTRACE_MAX_PROBES=${BPFTRACE_MAX_PROBES:-4096} BPFTRACE_MAX_BPF_PROGS=${BPFTRACE_MAX_BPF_PROGS:-4096}
atrace=$(realpath "$build/atrace")
work=$(mktemp -d "${TMPDIR:-/tmp}/fastpath_sqlite.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 -c "
print('create table t(a integer, b text);'); print('begin;')
for i in range(20000): print(f\"insert into t values({i}, 'row{i}');\")
print('commit;'); print('select count(*), sum(a) from t;')" >"$work/ins.sql"
lib=$(ldconfig -p | awk '/libsqlite3\.so\.0 / && !f {print $NF; f = 1}')
[[ -n $lib ]] || die "libsqlite3.so.0 not found"

# One run: prints "MODE MS OUTPUT-OK NOTE"
one() {
	local mode=$1 go=$work/go out=$work/out err=$work/err.$1 tracer=""
	rm -rf "$go" "$out" "$work/uftrace.data"
	# An in-memory database named after this run: its pid is found by it,
	# not mistaken for another sqlite3 on the machine.
	local db="file:fastpath_sqlite_$$?mode=memory"
	local cmd=(sqlite3 "$db")
	[[ $mode == uftrace ]] && cmd=(uftrace record --force -d "$work/uftrace.data" sqlite3 "$db")
	( (while [[ ! -e $go ]]; do sleep 0.005; done; printf '.read %s\n' "$work/ins.sql") |
		"${cmd[@]}" >"$out" 2>"$err" & )
	local pid=""
	for _ in $(seq 100); do pid=$(pgrep -n -f "^sqlite3 file:fastpath_sqlite_$$" || true); [[ -n $pid ]] && break; sleep 0.01; done
	case $mode in
	fast | kernel | hot)
		local extra=(--filter=off)
		[[ $mode == fast ]] && extra=(--fast-path --filter=off)
		[[ $mode == hot ]] && extra=(--fast-path=hot)
		"$atrace" record -p "$pid" -v "${extra[@]}" --select='libsqlite3.so*:sqlite3_*' \
			-o "$work/$mode.data" 2>"$err" &
		tracer=$!
		for _ in $(seq 600); do grep -q "probing" "$err" 2>/dev/null && break; sleep 0.05; done ;;
	bpftrace)
		bpftrace -p "$pid" -e "BEGIN { printf(\"ready\\n\"); } uprobe:$lib:sqlite3_* { @e = count(); } uretprobe:$lib:sqlite3_* { @r = count(); }" \
			>"$err" 2>&1 &
		tracer=$!
		# BEGIN runs once every probe is attached.
		for _ in $(seq 2400); do grep -q "^ready" "$err" 2>/dev/null && break; sleep 0.05; done ;;
	uftrace) sleep 0.5 ;;  # its libmcount is set up before sqlite3's main
	esac
	local s e cpu=$work/cpu stat=""
	rm -f "$cpu"
	if command -v perf >/dev/null; then
		perf stat -x, -e task-clock -p "$pid" -o "$cpu" 2>/dev/null &
		stat=$!
		sleep 0.2
	fi
	s=$(date +%s%N)
	touch "$go"
	while [[ -e /proc/$pid ]] && [[ $(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null) != Z ]]; do sleep 0.001; done
	e=$(date +%s%N)
	if [[ $mode == bpftrace ]]; then kill -INT "$tracer" 2>/dev/null || true; fi
	[[ -n $tracer ]] && wait "$tracer" || true
	if [[ -n $stat ]]; then kill -INT "$stat" 2>/dev/null || true; wait "$stat" || true; fi
	[[ $mode == uftrace ]] && while pgrep -f "^uftrace record --force -d $work" >/dev/null; do sleep 0.01; done
	local t=$(date +%s%N)
	local ok=no note=""
	grep -q '^20000|199990000$' "$out" && ok=yes
	case $mode in
	fast | kernel | hot)
		note=$(grep -oE '[0-9]+ records,|[0-9]+ records lost|[0-9]+ functions? patched instead' "$err" | tr '\n' ' ' || true)
		note+=$("$atrace" report -i "$work/$mode.data" --format=json 2>/dev/null |
			python3 -c 'import json,sys; d=json.load(sys.stdin); print("calls", sum(f["calls"] for f in d["functions"]), "lost", d["lost_events"])' || true) ;;
	bpftrace) note=$(grep -E '^@' "$err" | tr '\n' ' ' || true) ;;
	uftrace) note="sqlite3_* calls $(uftrace report -d "$work/uftrace.data" 2>/dev/null |
		awk '$NF ~ /^sqlite3_/ {s += $(NF-1)} END {print s + 0}')" ;;
	esac
	local cpu_ms=$(awk -F, '/task-clock/ {printf "%.0f", $1}' "$cpu" 2>/dev/null)
	echo "$mode $(( (e - s) / 1000000 )) $ok cpu_ms ${cpu_ms:-?} tracer_s $(echo "scale=2; ($t - $s) / 1000000000" | bc) $note"
}

results=$work/results
for ((r = 0; r < rounds; r++)); do
	set -- $modes
	for ((k = 0; k < r % $#; k++)); do set -- "${@:2}" "$1"; done
	for m in "$@"; do one "$m" | tee -a "$results" >&2; done
done
echo
echo "| mode | median ms | x untraced | median CPU ms | x untraced | output right | last run (tracer_s: to the tracer's end) |"
echo "| --- | ---: | ---: | ---: | ---: | --- | --- |"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(awk '$1 == "untraced" {print $2}' "$results" | median)
cbase=$(awk '$1 == "untraced" {print $5}' "$results" | median)
for m in $modes; do
	med=$(awk -v m="$m" '$1 == m {print $2}' "$results" | median)
	cmed=$(awk -v m="$m" '$1 == m {print $5}' "$results" | median)
	ok=$(awk -v m="$m" '$1 == m {print $3}' "$results" | sort -u | tr '\n' ' ')
	last=$(awk -v m="$m" '$1 == m {$1=$2=$3=$4=$5=""; print}' "$results" | tail -1)
	echo "| $m | $med | $(echo "scale=2; $med / ${base:-1}" | bc) | $cmed | $(echo "scale=2; $cmed / ${cbase:-1}" | bc 2>/dev/null) | $ok | $last |"
done
