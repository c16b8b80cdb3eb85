#!/bin/sh
# Build-time: bash completion for atrace, its subcommands, their options and
# the values of --to, read from `atrace SUBCOMMAND --help` so that it knows
# exactly the options atrace has.
#   bash_completion.sh ATRACE OUT
set -eu
atrace=$1 out=$2
subs="record top report script convert info list"
# Option names as the help lists them: "  -i,--input FILE  ...".
options() {
  "$atrace" "$@" --help | grep -E '^ +-' | sed -E 's/^ +//; s/ .*//' | tr ',' '\n' | sort -u |
    tr '\n' ' '
}
formats=$("$atrace" convert --help | sed -n '/^Formats:/,$p' | grep -E '^  [a-z]+:' |
  sed -E 's/^  ([a-z]+):.*/\1/' | tr '\n' ' ')
# --kernel's groups, as record's error for an unknown one lists them.
kernel_groups=$("$atrace" record --kernel=- -- true 2>&1 | sed -n 's/.*(groups: \(.*\)).*/\1/p' |
  tr -d ',')
{
  echo "# bash completion for atrace (generated at build time from atrace's --help)"
  # -p PID: the running processes; while several match, each with its
  # command name ("1234(bash)") for the list bash shows; one alone, bare.
  cat <<'PIDS'
_atrace_pids() {
  local cur=$1 p comm pids=()
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [[ $p == "$cur"* ]] && pids+=("$p")
  done
  COMPREPLY=()
  if [ ${#pids[@]} -gt 1 ]; then
    for p in "${pids[@]}"; do
      read -r comm 2>/dev/null </proc/$p/comm && COMPREPLY+=("$p($comm)")
    done
  fi
  [ ${#COMPREPLY[@]} -gt 1 ] || COMPREPLY=("${pids[@]}")
}
PIDS
  # --select: the functions `atrace list` finds in the -p target or the
  # command after --, within a second (a -p target of another user needs
  # root: then nothing). The word is read from COMP_LINE, as typed: bash
  # splits it at ':' (C++ names) and '='. The items before its last comma
  # are kept; the parameter lists are left out (selectors match without).
  cat <<'FUNCTIONS'
_atrace_functions() {
  local word=$1 i target=() atrace=${COMP_WORDS[0]}
  for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
    case "${COMP_WORDS[i]}" in
      -p | --pid)
        local j=$((i + 1))
        [ "${COMP_WORDS[j]}" = "=" ] && j=$((j + 1))
        target=(-p "${COMP_WORDS[j]}") ;;
      --)
        local exe
        exe=$(type -P -- "${COMP_WORDS[i + 1]}") && target=("$exe")
        break ;;
    esac
  done
  [ ${#target[@]} -gt 0 ] || return
  local head= part=$word name
  case "$word" in *,*) head=${word%,*}, part=${word##*,} ;; esac
  COMPREPLY=()
  while read -r name; do
    [[ $name == "$part"* ]] && COMPREPLY+=("$head$name")
  # `list` reads the program's and its libraries' symbols: 0.7-0.9 s for
  # /usr/bin/perl on a loaded machine; 1 s gave up there (issue 31).
  done < <(timeout 4 "$atrace" list "${target[@]}" 2>/dev/null |
    awk '{ for (i = 1; i <= NF && $i !~ /^0x[0-9a-f]+$/; i++) {}
           if (i > NF) next
           n = ""; for (j = i + 4; j <= NF; j++) n = n (n == "" ? "" : " ") $j
           sub(/\(.*/, "", n); if (n != "" && n !~ / /) print n }' | sort -u)
  # What bash replaces is the part after the word's last ':'.
  if [[ $word == *:* && $COMP_WORDBREAKS == *:* ]]; then
    local colon=${word%"${word##*:}"}
    for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${COMPREPLY[i]#"$colon"}; done
  fi
}
FUNCTIONS
  # --kernel=LIST: the groups, each item of the list, with its +/- sign.
  echo '_atrace_kernel() {'
  echo '  local head= part=$1 sign= g'
  echo '  case "$part" in *,*) head=${part%,*}, part=${part##*,} ;; esac'
  echo '  case "$part" in [+-]*) sign=${part:0:1} part=${part:1} ;; esac'
  echo '  COMPREPLY=()'
  echo "  for g in $kernel_groups; do"
  echo '    [[ $g == "$part"* ]] && COMPREPLY+=("$head$sign$g")'
  echo '  done'
  echo '}'
  echo "_atrace() {"
  echo '  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}'
  echo "  local subs=\"$subs\" opts= formats=\"$formats\""
  echo '  if [ "$COMP_CWORD" -eq 1 ]; then'
  echo "    COMPREPLY=(\$(compgen -W \"\$subs $(options)\" -- \"\$cur\"))"
  echo '    return'
  echo '  fi'
  # --to=FORMAT: bash splits at "=" (COMP_WORDBREAKS), or keeps it in the word.
  echo '  if [ "$prev" = "=" ] && [ "$COMP_CWORD" -ge 2 ]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi'
  echo '  [ "$cur" = "=" ] && cur='
  echo '  case "$cur" in --to=*) COMPREPLY=($(compgen -W "$formats" -- "${cur#--to=}")); return ;; esac'
  echo '  local line=${COMP_LINE:0:COMP_POINT}'
  echo '  local last=${line##* } before=${line% *}'
  echo '  before=${before##* }'
  echo '  case "$last" in --select=*) _atrace_functions "${last#--select=}"; return ;; esac'
  echo '  if [ "$before" = --select ] && [ "$line" != "$last" ]; then _atrace_functions "$last"; return; fi'
  echo '  case "$prev" in'
  echo '    --to) COMPREPLY=($(compgen -W "$formats" -- "$cur")); return ;;'
  echo '    -p | --pid) _atrace_pids "$cur"; return ;;'
  echo '    --kernel) _atrace_kernel "$cur"; return ;;'
  echo '    -i | --input | -o | --output | --html | --diff) COMPREPLY=($(compgen -f -- "$cur")); return ;;'
  echo '  esac'
  echo '  case "${COMP_WORDS[1]}" in'
  for s in $subs; do
    echo "    $s) opts=\"$(options "$s")\" ;;"
  done
  echo '  esac'
  echo '  case "$cur" in'
  echo '    -*) COMPREPLY=($(compgen -W "$opts" -- "$cur")) ;;'
  echo '    *) COMPREPLY=($(compgen -f -- "$cur")) ;;'
  echo '  esac'
  echo "}"
  echo "complete -F _atrace atrace"
} >"$out"
