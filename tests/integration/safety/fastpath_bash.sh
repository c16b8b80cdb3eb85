# The fast-path corpus's bash script (tests/integration/test_fastpath_corpus.cpp),
# sourced by a `bash -s` that waits on stdin to be attached: subshells,
# pipes, traps, functions, command substitution, a here-document and
# arithmetic loops in the shell itself. No exit: the test sends it last.
# Its output depends on nothing but itself.
set -u
trap 'echo "trap: EXIT status=$?"' EXIT
trap 'echo "trap: USR1 caught"' USR1

fib() {
  local n=$1
  if (( n < 2 )); then echo "$n"; return; fi
  echo $(( $(fib $((n - 1))) + $(fib $((n - 2))) ))
}

# Recursion and arithmetic without a fork: every call in the traced shell.
fib_here() {
  local n=$1 a b
  if (( n < 2 )); then result=$n; return; fi
  fib_here $((n - 1)); a=$result
  fib_here $((n - 2)); b=$result
  result=$((a + b))
}

count_words() { tr ' ' '\n' | grep -c .; }

echo "fib 6 = $(fib 6)"
fib_here 8
echo "fib_here 8 = $result"
sum=0
for ((i = 0; i < 100; i++)); do
  (( sum += i * i % 7 ))
done
echo "loop sum = $sum"
declare -A seen=()
for w in pear apple fig pear kiwi apple pear; do seen[$w]=$(( ${seen[$w]:-0} + 1 )); done
for w in $(printf '%s\n' "${!seen[@]}" | sort); do echo "$w ${seen[$w]}"; done
s="the quick brown fox"
echo "upper: ${s^^} length: ${#s} replaced: ${s//o/0}"
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
