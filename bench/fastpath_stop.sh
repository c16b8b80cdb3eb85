#!/usr/bin/env bash
# fastpath_stop.sh: how long the fast path's patching stops a running
# program (issue 35, docs/fast-path.md "Injection"): a batch of 100 patches
# in tests/targets/target_fastpath_inject with 8 busy worker threads (11
# threads in all), 20 rounds per run, median and worst of each phase
# (every thread stopped, the sites written, every thread detached, the
# whole time the program did not run), as the integration test
# FastPathInject.StopTimeOfABatchOf100Patches measures it. The goal is a
# stop under 10 ms; no assertion, the figures go to docs/BENCHMARKS.md.
#
# usage: bench/fastpath_stop.sh [-b BUILD] [-r RUNS]
# Run as root from the repository root, after building
# atrace_integration_tests.
set -euo pipefail
build=build runs=3
while getopts b:r: opt; do
	case $opt in
	b) build=$OPTARG ;; r) runs=$OPTARG ;; *) exit 2 ;;
	esac
done
[[ $EUID -eq 0 ]] || { echo "run as root" >&2; exit 2; }
bin=$build/tests/integration/atrace_integration_tests
[[ -x $bin ]] || { echo "build atrace_integration_tests first ($bin)" >&2; exit 2; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, kernel $(uname -r)"
for _ in $(seq "$runs"); do
	"$bin" --gtest_filter=FastPathInject.StopTimeOfABatchOf100Patches 2>&1 | grep '^batch of'
done
