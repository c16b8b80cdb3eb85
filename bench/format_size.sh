#!/usr/bin/env bash
# Trace file size and report memory (issue 3; results in docs/BENCHMARKS.md,
# section "Trace file size and speed").
#
#   bench/format_size.sh [-n A_CALLS] [--no-uftrace] [--rss "10M 100M"] [--no-rss]
#
#   -n A_CALLS   calls of a() in format_workload (default 1000000: 10 million
#                calls, 20 million events)
#   --rss LIST   event counts of the synthetic files (format_synth) on which
#                the peak memory of `atrace report` is measured (default
#                "10M 100M"); --no-rss skips that part
#   env BUILD    the atrace build (default build); needs format_synth there
#   env OUT      work directory (default /tmp/atrace-format-size); its large
#                trace files are removed at the end unless KEEP=1
#
# Needs root (BPF), gcc, /usr/bin/time (package time), and uftrace (package
# uftrace) unless --no-uftrace.
#
# Prints:
#   1. bytes per event of atrace on the demo and on format_workload, and of
#      uftrace on the same workload: uftrace's TID.dat files (its records)
#      and its whole uftrace.data directory (with symbols, maps, task list),
#      each divided by its record count (two per call: entry and exit);
#   2. for format 2: where the bytes go (frames, payload before zstd), and the
#      workload recording re-encoded with other zstd levels and block sizes;
#   3. max RSS of `atrace report` on synthetic files of growing size.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
OUT=${OUT:-/tmp/atrace-format-size}
N=1000000
UFTRACE=1
RSS_LIST="10M 100M"
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N=$2; shift 2 ;;
    --no-uftrace) UFTRACE=0; shift ;;
    --rss) RSS_LIST=$2; shift 2 ;;
    --no-rss) RSS_LIST=""; shift ;;
    *) sed -n '2,28p' "$0" >&2; exit 2 ;;
  esac
done
ATRACE=$BUILD/atrace
[ -x "$ATRACE" ] || { echo "format_size: $ATRACE not built" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "format_size: needs root (BPF)" >&2; exit 1; }
mkdir -p "$OUT"

# Trace events and format version from `atrace report --format=json`/`info`.
json_events() {
  "$ATRACE" report -i "$1" --format=json | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])'
}
fsize() { stat -c %s "$1"; }
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
bpe() { python3 -c "print(f'{$1/$2:.2f}')"; }
secs() { python3 -c "print(f'{$1:.1f}')"; }
now() { date +%s.%N; }

ROWS=()
row() { ROWS+=("$(printf '%-9s %-28s %12s %14s %10s' "$@")"); }

# --- demo ---------------------------------------------------------------------
"$ATRACE" record -o "$OUT/demo.atrace" --select='demo::*' -- "$BUILD/atrace-demo" >/dev/null 2>"$OUT/demo.err"
ev=$(json_events "$OUT/demo.atrace")
DEMO_EV=$ev
by=$(fsize "$OUT/demo.atrace")
row atrace demo "$ev" "$by" "$(bpe "$by" "$ev")"
VERSION=$("$ATRACE" info -i "$OUT/demo.atrace" 2>/dev/null | grep -o -m1 'format [0-9.]*' || true)

# --- format_workload ------------------------------------------------------------
CC=${CC:-gcc}
SRC=$ROOT/bench/format_workload.c
# atrace: 5-byte NOP entries (optimized uprobes on 6.18+), see bench/CMakeLists.txt
# for why -fno-pie. uftrace: mcount calls from plain -pg.
"$CC" -O2 -g -pg -mfentry -mnop-mcount -fno-pie -no-pie -fcf-protection=none \
  -fno-optimize-sibling-calls "$SRC" -o "$OUT/workload_nop5"
"$CC" -O2 -g -pg -fno-optimize-sibling-calls "$SRC" -o "$OUT/workload_pg"
for f in a b c; do
  first=$(objdump -d --no-show-raw-insn "$OUT/workload_nop5" | awk -v f="<$f>:" '$2==f{getline; print; exit}')
  case "$first" in
    *nop*) ;;
    *) echo "format_size: $f() of workload_nop5 does not start with a NOP: $first" >&2; exit 1 ;;
  esac
done
CALLS=$((N * 10))

t0=$(now)
"$ATRACE" record -o "$OUT/workload.atrace" --select='a,b,c' -- "$OUT/workload_nop5" "$N" \
  >"$OUT/workload.out" 2>"$OUT/workload.err"
t1=$(now)
grep -q "calls=$CALLS" "$OUT/workload.out" || { echo "format_size: workload said $(cat "$OUT/workload.out")" >&2; exit 1; }
ev=$(json_events "$OUT/workload.atrace")
WL_EV=$ev
by=$(fsize "$OUT/workload.atrace")
ATRACE_WL_BPE=$(bpe "$by" "$ev")
row atrace "workload ($CALLS calls)" "$ev" "$by" "$ATRACE_WL_BPE"
echo "format_size: atrace recorded $CALLS calls in $(secs "$(echo "$t1 - $t0" | bc)") s" \
     "($(grep -i lost "$OUT/workload.err" | head -1 || true))" >&2

if [ "$UFTRACE" = 1 ]; then
  command -v uftrace >/dev/null || { echo "format_size: uftrace not installed (apt-get install uftrace)" >&2; exit 1; }
  rm -rf "$OUT/uftrace.data"
  t0=$(now)
  uftrace record -d "$OUT/uftrace.data" "$OUT/workload_pg" "$N" >/dev/null
  t1=$(now)
  echo "format_size: uftrace recorded in $(secs "$(echo "$t1 - $t0" | bc)") s" >&2
  # Records: entry and exit of every -pg function, main included; counted by
  # uftrace itself (one line per record in `uftrace dump`).
  urec=$(uftrace dump -d "$OUT/uftrace.data" 2>/dev/null | grep -cE '\[(entry|exit ?)\]' || true)
  [ "$urec" -gt 0 ] || urec=$((2 * (CALLS + 1)))
  # Per-task record files (TID.dat); perf-cpu*.dat hold scheduling events.
  dat=$(cat "$OUT"/uftrace.data/[0-9]*.dat | wc -c)
  all=$(du -sb "$OUT/uftrace.data" | cut -f1)
  UF_BPE=$(bpe "$dat" "$urec")
  row uftrace "workload, TID.dat" "$urec" "$dat" "$UF_BPE"
  row uftrace "workload, uftrace.data/" "$urec" "$all" "$(bpe "$all" "$urec")"
fi

echo
[ -n "$VERSION" ] && echo "atrace trace file: $VERSION"
printf '%-9s %-28s %12s %14s %10s %s\n' tool trace events bytes bytes/ev "vs uftrace TID.dat"
for r in "${ROWS[@]}"; do
  b=$(echo "$r" | awk '{print $NF}')
  if [ "$UFTRACE" = 1 ]; then echo "$r   $(ratio "$b" "$UF_BPE")"; else echo "$r"; fi
done

# --- techniques: where the bytes go, other writer settings (format 2) ------------
SYNTH=$BUILD/bench/format_synth
if [ "$VERSION" = "format 2.0" ] || [[ "$VERSION" == "format 2."* ]]; then
  for t in demo workload; do
    echo
    echo "Frames of the $t recording (bench/format_frames.py):"
    [ "$t" = demo ] && e=$DEMO_EV || e=$WL_EV
    python3 "$ROOT/bench/format_frames.py" "$OUT/$t.atrace" "$e"
  done
  if [ -x "$SYNTH" ]; then
    echo
    echo "The workload recording re-encoded by format_synth -i with other writer settings:"
    printf '%-28s %12s %10s %14s\n' "writer setting" bytes bytes/ev "writer ev/s"
    for setting in "-z 3" "-z -5" "-z 1" "-z 9" "-z 19" "-k 16K" "-k 256K" "-k 1M"; do
      # shellcheck disable=SC2086
      line=$("$SYNTH" -i "$OUT/workload.atrace" -o "$OUT/recode.atrace" $setting)
      b=$(echo "$line" | sed -E 's/.* bytes=([0-9]+).*/\1/')
      r=$(echo "$line" | sed -E 's/.*writer_events_per_s=([0-9.]+M).*/\1/')
      printf '%-28s %12s %10s %14s\n' "$setting" "$b" "$(bpe "$b" "$WL_EV")" "$r"
    done
    rm -f "$OUT/recode.atrace"
  fi
fi

# --- peak memory of atrace report -------------------------------------------------
if [ -n "$RSS_LIST" ]; then
  [ -x "$SYNTH" ] || { echo "format_size: $SYNTH not built" >&2; exit 1; }
  echo
  printf '%-30s %12s %14s %12s %10s\n' "atrace report on" events "file bytes" "max RSS KB" "time s"
  rss_of() {  # FILE LABEL
    /usr/bin/time -v "$ATRACE" report -i "$1" >/dev/null 2>"$OUT/time.txt" || {
      cat "$OUT/time.txt" >&2; return 1; }
    local kb el
    kb=$(awk -F: '/Maximum resident set size/{gsub(/ /,"",$2); print $2}' "$OUT/time.txt")
    el=$(awk '/Elapsed \(wall clock\)/{print $NF}' "$OUT/time.txt")
    printf '%-30s %12s %14s %12s %10s\n' "$2" "$(json_events "$1" 2>/dev/null || echo ?)" \
      "$(fsize "$1")" "$kb" "$el"
  }
  rss_of "$OUT/demo.atrace" "demo (recorded)"
  rss_of "$OUT/workload.atrace" "workload (recorded)"
  for n in $RSS_LIST; do
    "$SYNTH" -n "$n" -o "$OUT/synth.atrace" >"$OUT/synth.txt"
    rss_of "$OUT/synth.atrace" "synthetic $n (format_synth)"
    echo "  ($(cat "$OUT/synth.txt"))"
    rm -f "$OUT/synth.atrace"
  done
fi
[ -n "${KEEP:-}" ] || rm -rf "$OUT/uftrace.data" "$OUT/workload.atrace"
