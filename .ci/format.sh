#!/usr/bin/env bash
# clang-format (.clang-format at the root) over the C++ sources.
#
#   .ci/format.sh [--check] [FILE...]
#
# Without FILEs: every C++ file git knows (*.cpp, *.h), except the ones in
# kernel style (bpf/, include/atrace/probe.h, *.c), which .clang-format does
# not describe. Rewrites the files in place (`make format`); with --check,
# changes nothing, names each file that differs and fails if any does
# (`make format-check`, run by .ci/run).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHECK=0
if [ "${1:-}" = --check ]; then CHECK=1; shift; fi
FMT=
for f in clang-format clang-format-14; do
  if command -v "$f" >/dev/null; then FMT=$f; break; fi
done
[ -n "$FMT" ] || { echo "format: clang-format not found (Debian package clang-format)" >&2; exit 2; }

cd "$ROOT"
if [ $# -gt 0 ]; then
  FILES=("$@")
else
  mapfile -t FILES < <(git ls-files '*.cpp' '*.h' | grep -v -E '^bpf/|^include/atrace/probe\.h$')
fi
if [ $CHECK = 0 ]; then
  "$FMT" -i --style=file "${FILES[@]}"
  echo "format: ${#FILES[@]} files formatted"
  exit 0
fi
differ=0
for f in "${FILES[@]}"; do
  if ! "$FMT" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "format: $f differs from .clang-format (make format)"
    differ=$((differ + 1))
  fi
done
if [ $differ -gt 0 ]; then
  echo "format: $differ of ${#FILES[@]} files differ" >&2
  exit 1
fi
echo "format: ${#FILES[@]} files match .clang-format"
