#!/bin/sh
# ctest install.FindPackage: installs this build into a fresh prefix with
# `cmake --install`, configures and builds tests/install/consumer against it
# with find_package(atrace), runs the program and checks that its probes are
# in the ELF notes with one semaphore per probe name; and that the man pages
# and the bash completion are installed.
#   run.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$1 src=$2 work=$3
command -v man >/dev/null || { echo "man is not installed (man-db: make test installs it)"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/atrace/probe.h"
test -x "$work/prefix/bin/atrace"
# The man pages and the completion, where man and bash-completion look.
test -f "$work/prefix/share/man/man1/atrace.1"
# The docs the man pages point to.
test -f "$work/prefix/share/doc/atrace/containers.md"
test -f "$work/prefix/share/doc/atrace/report-json.md"
# One page per subcommand the installed atrace has (its --help lists them).
subs=$("$work/prefix/bin/atrace" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 { print $1 }')
[ -n "$subs" ] || { echo "atrace --help lists no subcommand"; exit 1; }
for sub in $subs; do
  man -M "$work/prefix/share/man" -w "atrace-$sub" >/dev/null ||
    { echo "no man page atrace-$sub installed"; exit 1; }
done
test -f "$work/prefix/share/bash-completion/completions/atrace"
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$work/consumer" >/dev/null
out=$("$work/consumer/consumer")
[ "$out" = "traced=0" ] || { echo "consumer printed: $out"; exit 1; }
notes=$(readelf -n "$work/consumer/consumer")
for p in run__begin run__end step; do
  echo "$notes" | grep -q "Name: $p\$" || { echo "no USDT note for consumer:$p"; exit 1; }
done
# Two sites of consumer:step (C and C++ units) share one semaphore.
sems=$(echo "$notes" | grep -A1 "Name: step$" | grep -o "Semaphore: 0x[0-9a-f]*" | sort -u | wc -l)
[ "$sems" = 1 ] || { echo "consumer:step has $sems semaphores, expected 1"; exit 1; }
echo "install.FindPackage: ok"
