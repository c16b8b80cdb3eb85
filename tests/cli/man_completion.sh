#!/bin/bash
# ctest cli.ManPagesAndCompletion: the man pages the build made from each
# command's --help render without a warning, and the bash completion loads
# in bash and completes what a user types.
#   man_completion.sh BUILD_DIR
set -eu
build=$1
fail() { echo "FAIL: $*"; exit 1; }
command -v man >/dev/null || fail "man is not installed (man-db: make test installs it)"
# Every subcommand atrace has (its --help lists them), and atrace itself.
subs=$("$build/atrace" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 { print $1 }')
echo "$subs" | grep -qx top || fail "atrace --help lists no top: '$subs'"
for sub in "" $subs; do
  page=$build/man/atrace${sub:+-$sub}.1
  [ -s "$page" ] || fail "$page was not made"
  # The page documents the command's own options.
  opt=$("$build/atrace" $sub --help | grep -oE -- '--[a-z][a-z-]+' | grep -v -- '--help' | head -n 1)
  [ -z "$opt" ] || grep -q -- "${opt//-/\\\\-}" "$page" || fail "$page does not mention $opt"
  # Examples stay one per line, and no page points into a checkout's docs/.
  if grep -q '^\.SH EXAMPLES' "$page"; then
    sed -n '/^\.SH EXAMPLES/,/^\.SH/p' "$page" | grep -qx '\.nf' || fail "$page runs its examples together"
  fi
  ! grep -q '[ (]docs/[a-z\-]*\.md' "$page" || fail "$page names docs/*.md, which are not installed there"
  warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "man -l $page: $warnings"
done
grep -q 'atrace-record' "$build/man/atrace-record.1" || fail "atrace-record.1 is not named atrace-record"

# complete_at N WORD...: what the completion offers for word N, the cursor
# at its end (atrace is the build's, found on PATH as a user's would be).
complete_at() {
  PATH=$build:$PATH bash -c 'source "$1"; at=$2; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$at;
           COMP_LINE="$*"; upto=("${@:1:at+1}"); upto="${upto[*]}"; COMP_POINT=${#upto};
           _atrace; echo "${COMPREPLY[*]}"' _ "$build/completion/atrace" "$@"
}
# complete WORD...: the same for the last word.
complete_line() { complete_at $(($# - 1)) "$@"; }
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
check "chrome csv callgrind clickhouse" atrace convert --to c
check "chrome csv callgrind clickhouse" atrace convert --to = c
check "--slice-args" atrace convert --sl
check "--version" atrace --ver
check "top" atrace to
check "--interval" atrace top --interv

# Option values, from the lists atrace checks them against (`atrace
# __values`), not file names. Bash splits "--sort=s" at "=" into "--sort",
# "=", "s" (COMP_WORDBREAKS); without "=" there, the word stays whole.
check "self selfoff selfsys" atrace report --sort = se
check "self selfoff selfsys" atrace top --sort se
check "--sort=self --sort=selfoff --sort=selfsys" atrace report --sort=se
check "calls,self calls,selfoff calls,selfsys" atrace report --fields = calls,se
check "calls total self avg min max offcpu selfoff systime selfsys syscalls faults" \
  atrace top --fields =
check "sched syscalls" atrace record --kernel = s
check "+sched +syscalls" atrace record --kernel = +s
check "sched,syscalls sched,faults sched,proc sched,net sched,all" atrace top --kernel = sched,
check "+syscalls,-faults" atrace record --kernel = +syscalls,-f
check "--kernel=proc" atrace record --kernel=p
check "--to=chrome --to=csv --to=callgrind --to=clickhouse" atrace convert --to=c
check "json" atrace report --format j
check "auto always" atrace script --color a
check "syscall,thread-exit" atrace script --kind = syscall,t
check "+pid" atrace script -F +p
check "relative" atrace record --filter = r
check "multi" atrace top --attach m

# -p: running pids, with their command names while several match.
"$build/tests/targets/target_threads" --forever 30 >/dev/null &
target=$!
trap 'kill $target 2>/dev/null' EXIT
got=" $(complete_line atrace record -p "$target") "
case "$got" in
  " $target " | *" $target(target_threads) "*) ;;
  *) fail "atrace record -p $target: completed to '$got'" ;;
esac
got=$(complete_line atrace top --pid "${target:0:1}")
case " $got " in *" $target(target_threads) "*) ;; *) fail "--pid ${target:0:1}: '$got'" ;; esac
# --select=: the functions of the command after -- or of the -p process.
targets=$build/tests/targets
got=$(complete_at 2 atrace record --select=le -- "$targets/target_c" 10)
[ "$got" = leaf ] || fail "--select=le -- target_c: completed to '$got', expected 'leaf'"
got=$(complete_at 2 atrace top --select=middle,le -- "$targets/target_c")
[ "$got" = middle,leaf ] || fail "--select=middle,le: completed to '$got'"
got=$(complete_at 3 atrace record --select le -- "$targets/target_c")
[ "$got" = leaf ] || fail "--select le: completed to '$got', expected 'leaf'"
check "tick" atrace top -p "$target" --select=tic
check "" atrace record --select=le
echo "cli.ManPagesAndCompletion: ok"
