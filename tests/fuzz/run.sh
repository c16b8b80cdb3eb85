#!/usr/bin/env bash
# Builds the libFuzzer target over the trace file reader and runs it.
#
#   tests/fuzz/run.sh [-t SECONDS] [-- LIBFUZZER_ARGS...]
#
#   -t SECONDS   how long to fuzz (default 60; 0 only builds and replays the
#                seeds once)
#   env FUZZ_OUT     build directory (default build/fuzz)
#   env ATRACE_BUILD the atrace build used to record fresh seeds (default build)
#
# The main build uses g++; libFuzzer needs clang, so this script configures a
# build directory of its own with clang++ and -DATRACE_FUZZ=ON
# (cmake/sanitizers.cmake: -fsanitize=fuzzer-no-link,address,undefined on
# the code, -fsanitize=fuzzer on the target), builds the fuzz target and its
# seed writer only (tests/fuzz/CMakeLists.txt), and runs the ctest test
# fuzz.libfuzzer (tests/fuzz/fuzz.sh: seeds, where the reproducers go).
# Exit status: 0 when no crash was found, non-zero otherwise.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_TO_RUN=60
while [ $# -gt 0 ]; do
  case "$1" in
    -t) SECONDS_TO_RUN=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [-t SECONDS] [-- LIBFUZZER_ARGS...]" >&2; exit 2 ;;
  esac
done
OUT=${FUZZ_OUT:-$ROOT/build/fuzz}
CXX=${FUZZ_CXX:-}
if [ -z "$CXX" ]; then
  for c in clang++ clang++-16 clang++-15 clang++-14; do
    if command -v "$c" >/dev/null; then CXX=$c; break; fi
  done
fi
[ -n "$CXX" ] || { echo "fuzz: clang++ not found (package clang)" >&2; exit 1; }

cmake -S "$ROOT" -B "$OUT" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX" \
  -DATRACE_TESTS=ON -DATRACE_FUZZ=ON >/dev/null
cmake --build "$OUT" -j "$(nproc)" --target fuzz_trace_reader format_synth
echo "fuzz: built $OUT/tests/fuzz/fuzz_trace_reader; reproducers go to $OUT/artifacts/"
ATRACE_FUZZ_SECONDS=$SECONDS_TO_RUN ATRACE_FUZZ_ARGS="$*" \
  ctest --test-dir "$OUT" -R '^fuzz\.libfuzzer$' --output-on-failure
