#!/usr/bin/env bash
# Records small real trace files as fuzz seeds with the current build.
#
#   tests/fuzz/make_corpus.sh DIR        (env ATRACE_BUILD, default build)
#
# Needs root (BPF) and a built atrace with its test targets. Writes a few files
# of a few KB each into DIR: one per test target (C non-PIE, C++ namespaces,
# threads, shared library), one with no events, and copies of one cut short
# (as a killed recorder leaves it). Run at fuzz time by tests/fuzz/run.sh, so
# the seeds always have the current format version; a few of them are also
# committed in tests/fuzz/corpus/ (refresh with: make_corpus.sh tests/fuzz/corpus).
# The crafted_*.atrace seeds there (issue 18's crafted files) are written by
# the unit tests instead: ATRACE_WRITE_SEEDS=tests/fuzz/corpus \
#   build/tests/unit/atrace_unit_tests --gtest_filter='FormatsBounds.CraftedSeeds*'.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${ATRACE_BUILD:-$ROOT/build}
DIR=${1:?usage: make_corpus.sh DIR}
ATRACE=$BUILD/atrace
T=$BUILD/tests/targets
if [ ! -x "$ATRACE" ] || [ ! -x "$T/target_c" ]; then
  echo "make_corpus: $ATRACE or the test targets are not built" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "make_corpus: recording needs root" >&2
  exit 1
fi
mkdir -p "$DIR"

record() {  # NAME SELECT CMD...
  local name=$1 sel=$2
  shift 2
  if ! "$ATRACE" record -o "$DIR/$name.atrace" --select="$sel" -- "$@" \
      >/dev/null 2>"$DIR/.err"; then
    echo "make_corpus: recording $name failed:" >&2
    cat "$DIR/.err" >&2
    rm -f "$DIR/.err"
    return 1
  fi
  rm -f "$DIR/.err"
}

record c_nested 'outer,middle,leaf,sleeper' "$T/target_c" 20
record c_empty 'leaf' "$T/target_c" 0
record cpp 'ns::*' "$T/target_cpp" 3 4 5
record threads 'worker_step' "$T/target_threads" 40
record shared 'libtarget_shared.so:shared_fn' "$T/target_lib" 30

# Cut short: what a recorder killed mid-write leaves (half, and all but 1 byte).
size=$(stat -c %s "$DIR/threads.atrace")
head -c $((size / 2)) "$DIR/threads.atrace" >"$DIR/threads_cut_half.atrace"
head -c $((size - 1)) "$DIR/threads.atrace" >"$DIR/threads_cut_last.atrace"
(cd "$DIR" && ls -l c_nested.atrace c_empty.atrace cpp.atrace threads.atrace shared.atrace \
  threads_cut_half.atrace threads_cut_last.atrace) | sed 's/^/make_corpus: /'
