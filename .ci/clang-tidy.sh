#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy at the root) on the project's sources, in
# parallel; any finding fails (WarningsAsErrors).
#
#   .ci/clang-tidy.sh [-j JOBS] BUILD_DIR [FILE|DIR...|all]
#
# BUILD_DIR holds compile_commands.json and the generated headers (BPF
# skeletons, embedded text): a configured and built tree. Checks the source
# files of the compile database in the FILEs and DIRs given (headers through
# the sources including them); without any, in the folders known clean
# (CLEAN below: the ones checked so far, widened as folders are cleaned);
# `all` checks every source of the tree (not the generated ones in build
# directories). Run by .ci/run and `make tidy`.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
JOBS=$(nproc)
if [ "${1:-}" = -j ]; then JOBS=$2; shift 2; fi
[ $# -ge 1 ] || { echo "usage: $0 [-j JOBS] BUILD_DIR [FILE|DIR...|all]" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
shift
CLEAN=(formats tools)
if [ $# -eq 0 ]; then
  set -- "${CLEAN[@]/#/$ROOT/}"
elif [ "$*" = all ]; then
  set --
fi
DB=$BUILD/compile_commands.json
[ -f "$DB" ] || { echo "clang-tidy: $DB not found: configure $BUILD first" >&2; exit 2; }
TIDY=
for t in clang-tidy clang-tidy-14; do
  if command -v "$t" >/dev/null; then TIDY=$t; break; fi
done
[ -n "$TIDY" ] || { echo "clang-tidy: not found (Debian package clang-tidy)" >&2; exit 2; }

# Sources: the database's files in the source tree, outside any build
# directory (a directory holding a CMakeCache.txt), optionally narrowed to
# the FILEs given.
mapfile -t FILES < <(python3 - "$DB" "$ROOT" "$@" <<'PY'
import json, os, sys
db, root = sys.argv[1], sys.argv[2]
wanted = [os.path.realpath(f) for f in sys.argv[3:]]
def is_wanted(f):
    return not wanted or any(f == w or f.startswith(w + "/") for w in wanted)
seen = set()
for entry in json.load(open(db)):
    f = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
    if not f.startswith(root + "/") or f in seen:
        continue
    d = os.path.dirname(f)
    while d != root and not os.path.exists(os.path.join(d, "CMakeCache.txt")):
        d = os.path.dirname(d)
    if d != root:
        continue  # generated, in a build directory
    if not is_wanted(f):
        continue
    seen.add(f)
    print(f)
PY
)
if [ ${#FILES[@]} -eq 0 ]; then
  echo "clang-tidy: no source file to check"
  exit 0
fi
# Findings in the project's headers too, not in generated or system ones.
FILTER="^$ROOT/(base|formats|uprobes|record|analysis|output|tools|tests|bench|demo|include)/"
echo "clang-tidy: ${#FILES[@]} files, $JOBS jobs ($("$TIDY" --version | grep -o 'version [0-9.]*'))"
set +e
printf '%s\0' "${FILES[@]}" |
  xargs -0 -n 1 -P "$JOBS" "$TIDY" -p "$BUILD" --quiet --header-filter="$FILTER" 2>&1 |
  grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Error while processing '
status=${PIPESTATUS[1]}
set -e
if [ "$status" -ne 0 ]; then
  echo "clang-tidy: FAILED (findings above; .clang-tidy says which checks are on)" >&2
  exit 1
fi
echo "clang-tidy: clean"
