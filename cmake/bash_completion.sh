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
{
  echo "# bash completion for atrace (generated at build time from atrace's --help)"
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
  echo '  case "$prev" in'
  echo '    --to) COMPREPLY=($(compgen -W "$formats" -- "$cur")); return ;;'
  echo '    -p | --pid) COMPREPLY=($(compgen -W "$(ls /proc | grep -E "^[0-9]+$")" -- "$cur")); return ;;'
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
