#!/bin/bash
# The safety corpus's bash script (tests/integration/test_safety.cpp): subshells,
# pipes, traps, functions, command substitution and a here-document. Its
# output depends on nothing but itself, so a traced run must print exactly
# what an untraced one does.
set -u
trap 'echo "trap: EXIT status=$?"' EXIT
trap 'echo "trap: USR1 caught"' USR1

fib() {
  local n=$1
  if (( n < 2 )); then echo "$n"; return; fi
  echo $(( $(fib $((n - 1))) + $(fib $((n - 2))) ))
}

count_words() { tr ' ' '\n' | grep -c .; }

echo "fib 6 = $(fib 6)"
echo "words = $(echo one two three four five | count_words)"
( echo "subshell pid differs: $([ $BASHPID != $$ ] && echo yes)"; exit 3 )
echo "subshell status = $?"
kill -USR1 $$
seq 1 200 | awk '{ s += $1 } END { print "sum =", s }'
printf '%s\n' c a b | sort | paste -sd, -
while read -r k v; do echo "$k -> $v"; done <<HERE
alpha 1
beta 2
HERE
{ echo "to stderr" >&2; echo "to stdout"; } 2>&1 | cat
echo "error line" >&2
false || echo "false handled"
exit 7
