#!/usr/bin/env bash
# Fuzzes the trace file reader with libFuzzer: the ctest test fuzz.libfuzzer
# of a build configured with -DATRACE_FUZZ=ON (tests/fuzz/run.sh makes one).
#
#   tests/fuzz/fuzz.sh FUZZER FORMAT_SYNTH OUT_DIR
#
#   env ATRACE_FUZZ_SECONDS  how long to fuzz (default 60; 0 only replays the
#                            seeds once)
#   env ATRACE_FUZZ_ARGS     more libFuzzer arguments
#   env ATRACE_BUILD         the atrace build used to record fresh seeds
#                            (default build)
#
# Seeds: the committed ones in tests/fuzz/corpus/ (may be of an older format
# version: still useful inputs), synthetic files written now by FORMAT_SYNTH
# (bench/format_synth.cpp, built on the same sanitized objects, so always of
# the current format), and real files recorded now by tests/fuzz/make_corpus.sh
# with the atrace build (needs root for BPF and a build of the current
# sources; skipped with a note when it cannot run). New inputs found go to
# OUT_DIR/corpus, crashes to OUT_DIR/artifacts/ (crash-*, leak-*, oom-*,
# timeout-*): the file is the reproducer, replay it with
#   FUZZER OUT_DIR/artifacts/crash-...
# Exit status: 0 when no crash was found, non-zero otherwise.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 3 ] || { echo "usage: $0 FUZZER FORMAT_SYNTH OUT_DIR" >&2; exit 2; }
FUZZER=$1 SYNTH=$2 OUT=$3
SECONDS_TO_RUN=${ATRACE_FUZZ_SECONDS:-60}
ATRACE_BUILD=${ATRACE_BUILD:-$ROOT/build}
mkdir -p "$OUT/corpus" "$OUT/artifacts"

SEEDS=$(mktemp -d "${TMPDIR:-/tmp}/atrace-fuzz-seeds.XXXXXX")
trap 'rm -rf "$SEEDS"' EXIT
cp "$ROOT"/tests/fuzz/corpus/* "$SEEDS"/ 2>/dev/null || true
# Synthetic seeds: small, several threads, many functions, and cut short.
"$SYNTH" -n 200 -t 2 -f 4 -o "$SEEDS/synth_small.atrace" >/dev/null
"$SYNTH" -n 3000 -t 5 -f 40 -b 500 -o "$SEEDS/synth_threads.atrace" >/dev/null
# Tiny blocks: too small for zstd to shrink, so stored as they are and open
# to mutation (with fix_checksums in the fuzz target).
"$SYNTH" -n 400 -t 3 -f 6 -b 50 -k 24 -o "$SEEDS/synth_stored.atrace" >/dev/null
size=$(stat -c %s "$SEEDS/synth_threads.atrace")
head -c $((size * 2 / 3)) "$SEEDS/synth_threads.atrace" >"$SEEDS/synth_threads_cut.atrace"
if ! ATRACE_BUILD=$ATRACE_BUILD "$ROOT/tests/fuzz/make_corpus.sh" "$SEEDS"; then
  echo "fuzz: no fresh seeds recorded (see above); using the committed ones" >&2
fi
echo "fuzz: $(ls "$SEEDS" | wc -l) seed files"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ARGS=(-rss_limit_mb=2048 -timeout=25 -max_len=1048576 -print_final_stats=1
      -dict="$ROOT/tests/fuzz/trace.dict"
      -artifact_prefix="$OUT/artifacts/")
# shellcheck disable=SC2206
EXTRA=(${ATRACE_FUZZ_ARGS:-})
set +e
if [ "$SECONDS_TO_RUN" = 0 ]; then
  # Replay every seed once.
  "$FUZZER" "${ARGS[@]}" -runs=0 "$OUT/corpus" "$SEEDS" ${EXTRA[@]+"${EXTRA[@]}"}
else
  "$FUZZER" "${ARGS[@]}" -max_total_time="$SECONDS_TO_RUN" \
    "$OUT/corpus" "$SEEDS" ${EXTRA[@]+"${EXTRA[@]}"}
fi
status=$?
set -e
if [ $status -ne 0 ]; then
  echo "fuzz: FAILED (exit $status); reproducers:" >&2
  ls -l "$OUT"/artifacts/ >&2 || true
  exit $status
fi
echo "fuzz: no crash"
