#!/bin/sh
# What the sched group's wake-up programs cost every wake-up of the
# machine (sched_waking + sched_wakeup, on by default): `perf bench sched
# pipe` (two tasks waking each other through pipes) while nothing is
# recorded, while OLD records an unrelated sleeping process, and while NEW
# does; ROUNDS alternating rounds, usecs per round trip.
#
#   bench/wakeup_cost.sh OLD_ATRACE NEW_ATRACE [ROUNDS] [LOOPS]
set -eu
OLD=$1 NEW=$2 ROUNDS=${3:-6} LOOPS=${4:-100000}
one() {
  if [ -n "$1" ]; then
    "$1" record -o /tmp/wakeup_cost.data --select=nanosleep -- sleep 8 >/dev/null 2>&1 &
    sleep 2
  fi
  perf bench sched pipe -l "$LOOPS" 2>/dev/null | awk '/usecs\/op/ {print $1}'
  wait
  rm -f /tmp/wakeup_cost.data
}
echo "none old new (usecs per round trip)"
i=0
while [ $i -lt "$ROUNDS" ]; do
  echo "$(one '') $(one "$OLD") $(one "$NEW")"
  i=$((i + 1))
done
