#!/bin/sh
# Build-time: target_c as distributions ship programs, for the tests of
# symbols kept apart (uprobes/debug_symbols.h):
#   OUT/debuglink/target_c   stripped, .gnu_debuglink to target_c.debug beside it
#   OUT/mini/target_c        stripped, its function symbols as MiniDebugInfo
#                            (.gnu_debugdata, Fedora's recipe)
#   OUT/bare/target_c        stripped, nothing kept
#   make_variants.sh TARGET_C OUT
set -eu
src=$1 out=$2
rm -rf "$out" && mkdir -p "$out/debuglink" "$out/mini" "$out/bare"
objcopy --only-keep-debug "$src" "$out/debuglink/target_c.debug"
objcopy --strip-all --add-gnu-debuglink="$out/debuglink/target_c.debug" "$src" "$out/debuglink/target_c"
objcopy --strip-all "$src" "$out/bare/target_c"
# MiniDebugInfo: the function symbols .dynsym does not have, in a debug
# file stripped of everything else, xz-compressed into the program.
tmp="$out/mini/work"
mkdir -p "$tmp"
nm -D "$src" --format=posix --defined-only | awk '{ print $1 }' | sort >"$tmp/dynsyms"
nm "$src" --format=posix --defined-only | awk '$2 == "T" || $2 == "t" { print $1 }' | sort >"$tmp/funcsyms"
comm -13 "$tmp/dynsyms" "$tmp/funcsyms" >"$tmp/keep"
objcopy --only-keep-debug "$src" "$tmp/mini"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$tmp/keep" "$tmp/mini"
xz -z "$tmp/mini"
objcopy --strip-all --add-section .gnu_debugdata="$tmp/mini.xz" "$src" "$out/mini/target_c"
rm -rf "$tmp"
