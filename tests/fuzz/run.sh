#!/usr/bin/env bash
# Builds the libFuzzer target over the trace file reader and runs it.
#
#   tests/fuzz/run.sh [-t SECONDS] [-- LIBFUZZER_ARGS...]
#
#   -t SECONDS   how long to fuzz (default 60; 0 only builds and replays the
#                seeds once)
#   env FUZZ_OUT     build and work directory (default build/fuzz)
#   env ATRACE_BUILD the atrace build used to record fresh seeds (default build)
#
# The main build uses g++; libFuzzer needs clang, so this script compiles the
# sources of the atrace_formats library (as listed in formats/CMakeLists.txt)
# and tests/fuzz/fuzz_trace_reader.cpp itself with
#   clang++ -fsanitize=fuzzer,address,undefined
# and links what formats/CMakeLists.txt links (its PkgConfig:: targets).
#
# Seeds: the committed ones in tests/fuzz/corpus/ (may be of an older format
# version: still useful inputs), synthetic files written now by
# bench/format_synth.cpp (built here on the same objects, so always of the
# current format), and real files recorded now by tests/fuzz/make_corpus.sh
# with the atrace build (needs root for BPF and a build of the current
# sources; skipped with a note when it cannot run). New inputs found go to $FUZZ_OUT/corpus,
# crashes to $FUZZ_OUT/artifacts/ (crash-*, leak-*, oom-*, timeout-*): the file
# is the reproducer, replay it with
#   $FUZZ_OUT/fuzz_trace_reader $FUZZ_OUT/artifacts/crash-...
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
ATRACE_BUILD=${ATRACE_BUILD:-$ROOT/build}
CXX=${FUZZ_CXX:-}
if [ -z "$CXX" ]; then
  for c in clang++ clang++-16 clang++-15 clang++-14; do
    if command -v "$c" >/dev/null; then CXX=$c; break; fi
  done
fi
[ -n "$CXX" ] || { echo "fuzz: clang++ not found (package clang)" >&2; exit 1; }
mkdir -p "$OUT/obj" "$OUT/corpus" "$OUT/artifacts"

# Sources and libraries of atrace_formats, read from its CMakeLists.txt so
# that the fuzz build follows the library when files or dependencies change.
FMT_CMAKE=$ROOT/formats/CMakeLists.txt
mapfile -t SOURCES < <(grep -v '^\s*#' "$FMT_CMAKE" | grep -oE '[A-Za-z0-9_./-]+\.(cpp|cc|c)\b' | sort -u)
[ ${#SOURCES[@]} -gt 0 ] || { echo "fuzz: no sources found in $FMT_CMAKE" >&2; exit 1; }
PKG_MODULES=()
for var in $(grep -v '^\s*#' "$FMT_CMAKE" | grep -oE 'PkgConfig::[A-Za-z0-9_]+' | sed 's/PkgConfig:://' | sort -u); do
  # pkg_check_modules(VAR [REQUIRED] [QUIET] IMPORTED_TARGET module...)
  line=$(cat "$ROOT/CMakeLists.txt" "$FMT_CMAKE" | tr '\n' ' ' |
         grep -oE "pkg_check_modules\(\s*$var\s[^)]*\)" | head -1 || true)
  [ -n "$line" ] || { echo "fuzz: cannot find pkg_check_modules($var ...)" >&2; exit 1; }
  mods=$(echo "$line" | sed -E 's/pkg_check_modules\(\s*[A-Za-z0-9_]+//; s/\)//; s/\b(REQUIRED|QUIET|IMPORTED_TARGET|GLOBAL|NO_CMAKE_PATH|NO_CMAKE_ENVIRONMENT_PATH)\b//g')
  for m in $mods; do PKG_MODULES+=("$m"); done
done
# The fuzz target itself recomputes XXH3 checksums.
case " ${PKG_MODULES[*]:-} " in *" libxxhash "*) ;; *) PKG_MODULES+=(libxxhash) ;; esac
PKG_CFLAGS=""
PKG_LIBS=""
if [ ${#PKG_MODULES[@]} -gt 0 ]; then
  PKG_CFLAGS=$(pkg-config --cflags "${PKG_MODULES[@]}")
  PKG_LIBS=$(pkg-config --libs "${PKG_MODULES[@]}")
fi

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CXXFLAGS="-std=c++20 -O1 -g -fno-omit-frame-pointer $SAN -I$ROOT -DATRACE_VERSION=\"fuzz\" $PKG_CFLAGS"
OBJS=()
for s in "${SOURCES[@]}"; do
  src=$ROOT/formats/$s
  obj=$OUT/obj/$(echo "$s" | tr / _).o
  # shellcheck disable=SC2086
  "$CXX" $CXXFLAGS -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
  OBJS+=("$obj")
done
# shellcheck disable=SC2086
"$CXX" $CXXFLAGS -fsanitize=fuzzer "$ROOT/tests/fuzz/fuzz_trace_reader.cpp" \
  "${OBJS[@]}" $PKG_LIBS -o "$OUT/fuzz_trace_reader"
# format_synth (bench/) on the same objects: synthetic seeds of the current
# format, without BPF or root.
# shellcheck disable=SC2086
"$CXX" $CXXFLAGS -fsanitize=fuzzer-no-link "$ROOT/bench/format_synth.cpp" \
  "${OBJS[@]}" $PKG_LIBS -o "$OUT/format_synth"
echo "fuzz: built $OUT/fuzz_trace_reader (${SOURCES[*]}; ${PKG_MODULES[*]:-no libraries})"

# Seeds.
SEEDS=$(mktemp -d "${TMPDIR:-/tmp}/atrace-fuzz-seeds.XXXXXX")
trap 'rm -rf "$SEEDS"' EXIT
cp "$ROOT"/tests/fuzz/corpus/* "$SEEDS"/ 2>/dev/null || true
# Synthetic seeds: small, several threads, many functions, and cut short.
"$OUT/format_synth" -n 200 -t 2 -f 4 -o "$SEEDS/synth_small.atrace" >/dev/null
"$OUT/format_synth" -n 3000 -t 5 -f 40 -b 500 -o "$SEEDS/synth_threads.atrace" >/dev/null
# Tiny blocks: too small for zstd to shrink, so stored as they are and open
# to mutation (with fix_checksums in the fuzz target).
"$OUT/format_synth" -n 400 -t 3 -f 6 -b 50 -k 24 -o "$SEEDS/synth_stored.atrace" >/dev/null
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
set +e
if [ "$SECONDS_TO_RUN" = 0 ]; then
  # Replay every seed once.
  "$OUT/fuzz_trace_reader" "${ARGS[@]}" -runs=0 "$OUT/corpus" "$SEEDS" "$@"
else
  "$OUT/fuzz_trace_reader" "${ARGS[@]}" -max_total_time="$SECONDS_TO_RUN" \
    "$OUT/corpus" "$SEEDS" "$@"
fi
status=$?
set -e
if [ $status -ne 0 ]; then
  echo "fuzz: FAILED (exit $status); reproducers:" >&2
  ls -l "$OUT"/artifacts/ >&2 || true
  exit $status
fi
echo "fuzz: no crash"
