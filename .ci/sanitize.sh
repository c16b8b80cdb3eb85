#!/usr/bin/env bash
# The unit tests, and atrace recording and reading back the demo, built with
# AddressSanitizer and UndefinedBehaviorSanitizer (-DATRACE_SANITIZE=ON,
# cmake/sanitizers.cmake) in a build directory of their own; the first
# report (memory error, leak, undefined behaviour) fails the run.
#
#   .ci/sanitize.sh [BUILD_DIR]      (default build-asan)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-asan}
JOBS=$(nproc)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# -O1 -g1: less to compile than RelWithDebInfo's -O2 -g, still line numbers
# in the reports.
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DATRACE_TESTS=ON -DATRACE_SANITIZE=ON >/dev/null
cmake --build "$B" -j "$JOBS" --target atrace_unit_tests atrace atrace-demo
# The unit-test binary itself, not ctest -L unit: ctest starts one process
# per test, and each sanitized start costs about a second (5 min for the
# suite against 1 min in one process here). A sanitizer report aborts the
# binary, which fails the script; leaks are checked once, at its exit.
(cd "$B/tests/unit" && ./atrace_unit_tests --gtest_brief=1)

# atrace under the sanitizers on a real recording: the recorder (BPF, rings,
# reordering, relevance filter, writer), then every reader of the file.
work=$(mktemp -d "${TMPDIR:-/tmp}/atrace-asan.XXXXXX")
trap 'rm -rf "$work"' EXIT
run() {  # CMD...: runs it, its output to $work/out; fails the script loudly
  if ! "$@" >"$work/out" 2>"$work/err"; then
    echo "sanitize: failed: $*" >&2
    cat "$work/err" >&2
    exit 1
  fi
}
A=$B/atrace
T=$work/demo.data
run "$A" record -o "$T" --select='demo::*' --kernel=all -- "$B/atrace-demo"
run "$A" report -i "$T"
grep -q 'demo::process_batch' "$work/out" || { echo "sanitize: report lacks demo::process_batch" >&2; exit 1; }
run "$A" report -i "$T" --format=json --threads --compensate
run "$A" report -i "$T" --tree --depth=3
# --callers takes a name as `atrace report` prints it, or without its
# parameters; not a glob.
run "$A" report -i "$T" --callers=demo::checksum
run "$A" report -i "$T" --syscalls
run "$A" report -i "$T" --diff="$T"
run "$A" report -i "$T" --html="$work/demo.html"
run "$A" script -i "$T"
run "$A" info -i "$T"
# Every format `convert --help` lists.
formats=$("$A" convert --help | sed -n '/^Formats:/,$p' | sed -n 's/^  \([a-z0-9-]*\):.*/\1/p')
[ -n "$formats" ] || { echo "sanitize: no format found in atrace convert --help" >&2; exit 1; }
for to in $formats; do
  # clickhouse loads into a server (the Tables integration tests start
  # one); its rows are --to=tables', converted here.
  [ "$to" = clickhouse ] && continue
  run "$A" convert -i "$T" --to="$to" -o "$work/demo.$to"
done
echo "sanitize: unit tests and the demo's record, report, script, info and convert clean"
