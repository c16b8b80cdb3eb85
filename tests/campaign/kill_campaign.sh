#!/usr/bin/env bash
# The long kill campaign, for before a release: integration.KillCampaign
# (tests/integration/test_killed_recorder.cpp) with many more trials than
# CI's 20. Each round kills atrace at random moments (SIGKILL, SIGINT,
# SIGTERM) in launch and attach mode and checks the target, leftovers and
# the file after each kill; this script adds up the rounds' figures.
#
#   tests/campaign/kill_campaign.sh [-b BUILD_DIR] [-n TRIALS_PER_MODE] [-r ROUNDS] [-s SEED]
#
# As root, on a build with -DATRACE_TESTS=ON (target atrace_integration_tests).
# Prints each trial, then "kill campaign: T trials, F failures" and exits 1
# when F > 0. A round's seed (printed) replays it:
#   ATRACE_KILL_SEED=S ATRACE_KILL_TRIALS=N BUILD/tests/integration/atrace_integration_tests \
#     --gtest_filter='KillCampaign.*'
set -euo pipefail
build=build per_mode=50 rounds=1 seed=""
while getopts "b:n:r:s:" opt; do
  case $opt in
    b) build=$OPTARG ;;
    n) per_mode=$OPTARG ;;
    r) rounds=$OPTARG ;;
    s) seed=$OPTARG ;;
    *) sed -n '8p' "$0" >&2; exit 2 ;;
  esac
done
bin=$build/tests/integration/atrace_integration_tests
if [ ! -x "$bin" ]; then
  echo "kill_campaign: $bin not found: build the target atrace_integration_tests" >&2
  exit 2
fi

trials=0 failures=0 seeds=""
for ((r = 0; r < rounds; r++)); do
  s=${seed:+$((seed + r))}
  s=${s:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
  log=$(ATRACE_KILL_SEED=$s ATRACE_KILL_TRIALS=$per_mode "$bin" \
          --gtest_filter='KillCampaign.*' --gtest_color=no 2>&1) || true
  printf '%s\n' "$log" | grep -E '^(trial |kill campaign:|.*Failure)' || true
  line=$(printf '%s\n' "$log" | grep -E '^kill campaign: seed=[0-9]+ trials=' | tail -1)
  if [ -z "$line" ]; then
    # The round did not get to its summary (a setup failure): all of it failed.
    printf '%s\n' "$log" | tail -20 >&2
    trials=$((trials + 2 * per_mode)) failures=$((failures + 2 * per_mode))
  else
    t=${line##*trials=}; t=${t%% *}
    f=${line##*failures=}
    trials=$((trials + t)) failures=$((failures + f))
  fi
  seeds+="$s "
done
echo "kill campaign: $trials trials, $failures failures (seeds: ${seeds% })"
[ "$failures" -eq 0 ]
