#!/bin/sh
# The multi-kernel subset of the integration tests, on the host kernel and
# on Debian 12's kernels booted under QEMU (TCG: no KVM needed).
#
#   tests/kernels/run.sh BUILD_DIR KERNEL...     KERNEL: host, 6.1, 6.12
#
# For each kernel: `atrace info --kernel` (the features it detects) and the
# integration tests named in SUBSET below, run by the very binaries of
# BUILD_DIR. The results are compared per kernel: every test of the subset
# must pass on every kernel. Under BUILD_DIR/kernels/: the downloaded
# kernels (fetch.sh; a rerun downloads nothing), the initramfs, and per
# kernel console.log, features.txt and results.txt (docs/kernels.md is
# generated from these: tests/kernels/kernels_md.sh).
#
# Exit 0 all passed, 1 a test failed or a kernel did not boot, 77 (skip)
# without qemu-system-x86_64 or busybox outside CI (CI=true: 1).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR KERNEL...}" && pwd)
shift
[ $# -gt 0 ] || { echo "usage: run.sh BUILD_DIR KERNEL..." >&2; exit 2; }

# Launch and attach, exact counts, kernel events, USDT with strings, a
# relevance filter detaching, kill -9 leaving nothing; both attach modes.
SUBSET=${ATRACE_KERNEL_SUBSET:-"\
Launch.RecordsCallsBeforeMain:Launch.PassesExitStatusOn:\
Attach.EndsWhenTargetExits:Attach.MidRunUntilSigint:\
Counts.CTargetNonPie:Counts.CppNamespacesClassesTemplates:Counts.PieWithFourThreads:\
Counts.SharedLibraryFunction:Integration/AttachModes.*:\
KernelEvents.SystemCallsAreCountedExactlyWhereTheyHappen:KernelEvents.NewThreadAndItsNameAppear:\
KernelEvents.FreshPagesFault:KernelEvents.ForkedChildIsFollowedOnlyWhenAsked:\
Usdt.CountsAndIntegerArgumentsAreExact:Usdt.StringArgumentsAreExact:Usdt.BeginEndPairsAreIntervals:\
MaxCalls.DetachesAtItsCount:\
Messages.*:\
KilledRecorder.*"}

tests=$build/tests/integration/atrace_integration_tests
atrace=$build/atrace
out=$build/kernels
mkdir -p "$out"

need_vm=0
for k in "$@"; do [ "$k" = host ] || need_vm=1; done
if [ $need_vm = 1 ]; then
  for tool in qemu-system-x86_64 busybox apt-get dpkg-deb; do
    if ! command -v $tool >/dev/null 2>&1; then
      echo "run.sh: $tool not found (make test installs qemu-system-x86 and busybox-static)" >&2
      [ "${CI:-}" = true ] && exit 1
      exit 77
    fi
  done
fi
for f in "$tests" "$atrace"; do
  [ -x "$f" ] || { echo "run.sh: $f not built" >&2; exit 1; }
done

# The tests the subset names, from the binary itself ("Suite.Test" lines).
"$tests" --gtest_filter="$SUBSET" --gtest_list_tests |
  awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }' > "$out/expected.txt"
[ -s "$out/expected.txt" ] || { echo "run.sh: the subset matches no test" >&2; exit 1; }

# gtest's console lines -> "PASS name" / "FAIL name".
results_of() {
  tr -d '\r' < "$1" | sed -n 's/^\[       OK \] \([^ ]*\).*/PASS \1/p; s/^\[  FAILED  \] \([^ ]*\) (.*/FAIL \1/p' | sort -u
}

. "$here/guest_root.sh"

# Everything the tests run, at the same absolute paths, with their shared
# libraries, busybox for a shell, and an /init that runs the subset. /tmp
# stays the initramfs's own (writable) directory: a tmpfs mounted there
# would hide a build tree under /tmp, where CI may have cloned.
make_initramfs() {
  root=$out/initramfs.root
  rm -rf "$root"
  # atrace, the demo, the test targets and their libraries.
  files=$tests
  for f in "$build"/* "$build"/tests/targets/*; do
    [ -f "$f" ] || continue
    case $f in *.so|*.so.*) ;; *) [ -x "$f" ] || continue ;; esac
    head -c 4 "$f" | grep -q ELF || continue
    files="$files $f"
  done
  # shellcheck disable=SC2086 # the list splits on spaces, as built
  guest_root "$root" $files
  cat > "$root/init" <<INIT
#!/bin/busybox sh
$(guest_mounts)
echo "=== features"
$atrace info --kernel
echo "=== tests"
CI=true ATRACE_TEST_TIME_SCALE=10 $tests --gtest_filter='$SUBSET' --gtest_color=no
echo "=== done \$?"
poweroff -f
INIT
  chmod +x "$root/init"
  (cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null) > "$out/initramfs.cpio"
}

# The emulated machine. QEMU 7.2's TCG gets CMPXCHG16B wrong now and then
# (flags with reserved bits set after SLUB's `cmpxchg16b %gs:(%rsi)`):
# 6.12 oopsed in the allocator, the scheduler or at boot (a double fault
# with -cpu qemu64 or Nehalem). Without cx16 the kernel takes its other
# path, and no run has crashed since. One host thread runs both vCPUs
# (thread=single): with multi-threaded TCG 6.12 also hit an "Oops: int3"
# on a site the kernel was patching as atrace attached its tracepoints.
cpu=${ATRACE_QEMU_CPU:-max,cx16=off}

run_kernel() {
  k=$1
  dir=$out/$k
  mkdir -p "$dir"
  rm -f "$dir/console.log" "$dir/features.txt" "$dir/results.txt"
  if [ "$k" = host ]; then
    "$atrace" info --kernel > "$dir/features.txt" 2>&1
    CI=${CI:-} "$tests" --gtest_filter="$SUBSET" --gtest_color=no > "$dir/console.log" 2>&1
  else
    vmlinuz=$("$here/fetch.sh" "$out" "$k") || return 1
    [ -f "$out/initramfs.cpio" ] || make_initramfs
    # A boot that has not reached /init within 120 s (an emulated early
    # boot can hang) is tried once more.
    for attempt in 1 2; do
      qemu-system-x86_64 -accel tcg,thread=single -cpu "$cpu" -smp 2 -m 1024 \
        -kernel "$vmlinuz" -initrd "$out/initramfs.cpio" \
        -append "console=ttyS0 quiet panic=-1" -nographic -no-reboot \
        < /dev/null > "$dir/console.log" 2>&1 &
      qemu=$!
      waited=0
      while kill -0 $qemu 2>/dev/null; do
        if [ $waited -ge 120 ] && ! grep -qa '=== features' "$dir/console.log"; then break; fi
        if [ $waited -ge 1500 ]; then break; fi
        sleep 1
        waited=$((waited + 1))
      done
      if kill -0 $qemu 2>/dev/null; then
        kill $qemu; sleep 1; kill -9 $qemu 2>/dev/null
        echo "run.sh: kernel $k: no progress after $waited s (attempt $attempt, $dir/console.log)" >&2
      fi
      wait $qemu 2>/dev/null
      grep -qa '=== features' "$dir/console.log" && break
      cp "$dir/console.log" "$dir/console.failed-boot.log"
    done
    tr -d '\r' < "$dir/console.log" |
      sed -n '/=== features/,/=== tests/p' | sed '1d;$d' > "$dir/features.txt"
  fi
  results_of "$dir/console.log" > "$dir/results.txt"
}

rm -f "$out/initramfs.cpio"
status=0
for k in "$@"; do
  start=$(date +%s)
  run_kernel "$k" || status=1
  echo "kernel $k: $(grep -c '^PASS' "$out/$k/results.txt") passed, $(grep -c '^FAIL' "$out/$k/results.txt") failed ($(( $(date +%s) - start )) s) -- $(head -1 "$out/$k/features.txt")"
done

# The comparison: one row per test, one column per kernel.
printf '%-62s' test
for k in "$@"; do printf ' %-6s' "$k"; done
echo
while read -r t; do
  printf '%-62s' "$t"
  for k in "$@"; do
    r=$(awk -v t="$t" '$2 == t { print $1 }' "$out/$k/results.txt")
    [ "$r" = PASS ] || status=1
    printf ' %-6s' "${r:-none}"
  done
  echo
done < "$out/expected.txt"
if [ $status != 0 ]; then
  for k in "$@"; do
    grep -q '^FAIL' "$out/$k/results.txt" && { echo "--- $k: failures (from $out/$k/console.log)"; \
      tr -d '\r' < "$out/$k/console.log" | grep -B30 '^\[  FAILED  \]' | head -150; }
  done
fi
exit $status
