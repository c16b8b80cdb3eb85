#!/bin/bash
# ctest cli.ManPagesAndCompletion: the man pages the build made from each
# command's --help render without a warning, and the bash completion loads
# in bash and completes what a user types.
#   man_completion.sh BUILD_DIR
set -eu
build=$1
fail() { echo "FAIL: $*"; exit 1; }
for sub in "" record top report script convert info list; do
  page=$build/man/atrace${sub:+-$sub}.1
  [ -s "$page" ] || fail "$page was not made"
  # The page documents the command's own options.
  opt=$("$build/atrace" $sub --help | grep -oE -- '--[a-z][a-z-]+' | grep -v -- '--help' | head -n 1)
  [ -z "$opt" ] || grep -q -- "${opt//-/\\\\-}" "$page" || fail "$page does not mention $opt"
  warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "man -l $page: $warnings"
done
grep -q 'atrace-record' "$build/man/atrace-record.1" || fail "atrace-record.1 is not named atrace-record"

# complete WORD...: what the completion offers for the last word.
complete_line() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _atrace;
           echo "${COMPREPLY[*]}"' _ "$build/completion/atrace" "$@"
}
check() {
  local want=$1
  shift
  local got
  got=$(complete_line "$@")
  [ "$got" = "$want" ] || fail "atrace ${*:2}: completed to '$got', expected '$want'"
}
check "report" atrace rep
check "convert" atrace conv
check "--tid --time" atrace report --ti
check "--kind" atrace script --ki
check "chrome csv callgrind" atrace convert --to c
check "chrome csv callgrind" atrace convert --to = c
check "--slice-args" atrace convert --sl
check "--version" atrace --ver
echo "cli.ManPagesAndCompletion: ok"
