#!/bin/sh
# Two hosts for real (issue 32): two QEMU guests, each with its own clock,
# a TCP client in one and its server in the other, each recorded by atrace
# inside its guest; the two traces are merged on the host and the sync
# report checked.
#
#   tests/kernels/two_hosts.sh BUILD_DIR [KERNEL]      KERNEL: 6.12 (default) or 6.1
#
# The guests boot Debian's cloud kernel (fetch.sh, with run.sh's QEMU
# flags: TCG, one host thread per guest, no cx16) from one initramfs
# (BUILD_DIR's atrace and target_reqresp with their libraries, busybox,
# the virtio_net modules); the kernel command line tells each its role.
# Guest B (the server) boots first and its QEMU listens on a 127.0.0.1
# port; guest A (the client) boots a few seconds later and connects to it
# (`-netdev socket`: an Ethernet cable between the two guests and nothing
# else). The guests' MONOTONIC clocks start at their boots: they differ by
# the seconds between them, which merge must find from the messages.
#
# In each guest: insmod failover, net_failover, virtio_net and, where they
# are modules (6.1), virtio and virtio_console (fetch.sh); eth0 gets
# 169.254.77.1 (A) or .2 (B); then
#   B: atrace record --kernel=+net -o /tmp/b.data -- target_reqresp server 7777 1000
#   A: atrace record --kernel=+net -o /tmp/a.data -- target_reqresp client 169.254.77.2 7777 1000
# (with --select on the exchange functions, so messages have a function).
# Each guest writes its trace to a virtio serial port that QEMU writes to a
# file on the host (the port is binary-clean) and prints its size and MD5 on the console for the host to
# check. On the host:
#   atrace merge a.data b.data -o m.data; atrace info --format=json -i m.data
# and two_hosts_check.py asserts on the pair's sync report: every receive
# after its send, bound below the smallest round trip the client saw,
# quality ACCURATE, at least 950 of the 2000 messages used; and on the
# merged time line as `script` shows it: each request received after the
# client began to send it, each answer after its request arrived.
#
# Everything lands in BUILD_DIR/kernels/two-hosts/ (console-a.log,
# console-b.log, a.data, b.data, m.data, info.json).
# Exit 0 passed, 1 failed, 77 (skip) without qemu-system-x86_64, busybox,
# python3 or the kernel download tools outside CI (CI=true: 1).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: two_hosts.sh BUILD_DIR [KERNEL]}" && pwd)
kernel=${2:-6.12}
N=1000
PORT=7777

for tool in qemu-system-x86_64 busybox apt-get dpkg-deb xz python3; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "two_hosts.sh: $tool not found (make test installs qemu-system-x86 and busybox-static)" >&2
    [ "${CI:-}" = true ] && exit 1
    exit 77
  fi
done
atrace=$build/atrace
target=$build/tests/targets/target_reqresp
for f in "$atrace" "$target"; do
  [ -x "$f" ] || { echo "two_hosts.sh: $f not built" >&2; exit 1; }
done

out=$build/kernels/two-hosts
. "$here/guest_root.sh"
rm -rf "$out"
mkdir -p "$out"
vmlinuz=$("$here/fetch.sh" "$build/kernels" "$kernel") || exit 1
modules=$(dirname "$vmlinuz")/modules

# The initramfs: run.sh's layout (binaries at their build paths, with
# their libraries), plus the modules and the guest's script.
root=$out/initramfs.root
mkdir -p "$root/modules"
guest_root "$root" "$atrace" "$target"
cp "$modules"/*.ko "$modules/order" "$root/modules/"
cat > "$root/init" <<INIT
#!/bin/busybox sh
$(guest_mounts)
role=\$(sed -n 's/.*atrace_role=\([ab]\).*/\1/p' /proc/cmdline)
hostname host-\$role
fail() { echo "=== failed: \$*"; dmesg | tail -5; poweroff -f; }
for m in \$(cat /modules/order); do insmod /modules/\$m.ko || fail "insmod \$m"; done
if [ \$role = a ]; then self=169.254.77.1; peer=169.254.77.2; else self=169.254.77.2; peer=169.254.77.1; fi
for _ in \$(seq 50); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
ifconfig eth0 \$self netmask 255.255.0.0 up || fail "no eth0"
port=
for _ in \$(seq 50); do
  for p in /sys/class/virtio-ports/*; do [ "\$(cat \$p/name 2>/dev/null)" = trace ] && port=/dev/\${p##*/}; done
  [ -n "\$port" ] && [ -e "\$port" ] && break
  sleep 0.1
done
[ -n "\$port" ] || fail "no virtio serial port named trace"
echo "=== up \$(hostname) uptime \$(cat /proc/uptime)"
# The client starts once the server's guest answers at all (it may still be
# booting); target_reqresp retries its connect while the server's atrace
# starts.
if [ \$role = a ]; then
  answered=
  for _ in \$(seq 300); do
    ping -c 1 -W 1 \$peer >/dev/null 2>&1 && answered=1 && break
    sleep 1
  done
  [ -n "\$answered" ] || fail "\$peer never answered"
  echo "=== peer answers, uptime \$(cat /proc/uptime)"
  set -- client \$peer $PORT $N
else
  set -- server $PORT $N
fi
# atrace's stderr to a file: on the console (a tty) it would draw its
# progress line hundreds of times.
$atrace record --kernel=+net --select='send_request,serve_request' --filter=off \\
  -o /tmp/\$role.data -- $target "\$@" 2> /tmp/record.err
echo "=== record exit \$? uptime \$(cat /proc/uptime)"
cat /tmp/record.err
cat /tmp/\$role.data > \$port
echo "=== sent \$(wc -c < /tmp/\$role.data) \$(md5sum < /tmp/\$role.data | cut -d' ' -f1)"
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null) > "$out/initramfs.cpio"
rm -rf "$root"

# One guest: role (a or b), its MAC's last byte, the -netdev socket end.
# QEMU 7.2's TCG and cx16: see run.sh.
cpu=${ATRACE_QEMU_CPU:-max,cx16=off}
boot() {
  qemu-system-x86_64 -accel tcg,thread=single -cpu "$cpu" -smp 2 -m 1024 \
    -kernel "$vmlinuz" -initrd "$out/initramfs.cpio" \
    -append "console=ttyS0 quiet panic=-1 atrace_role=$1" -nographic -no-reboot \
    -netdev "socket,id=cable,$3" -device "virtio-net-pci,netdev=cable,mac=52:54:00:12:77:0$2" \
    -chardev "file,id=trace,path=$out/$1.serial" \
    -device virtio-serial-pci -device virtserialport,chardev=trace,name=trace \
    < /dev/null > "$out/console-$1.log" 2>&1 &
  echo $!
}

# The pair of guests, once: B first, then A, both until they power off.
# Fails when a guest did not come up within 300 s (an emulated early boot
# can hang: see run.sh), did not finish within 1500 s or 120 s after the
# other had stopped.
run_pair() {
  rm -f "$out"/*.serial "$out"/console-*.log
  qemu_b=$(boot b 2 "listen=127.0.0.1:$cable")
  # A's QEMU connects to B's at its start: B's must listen by then (seen in
  # /proc/net/tcp: a test connection would be taken for A's). The wait also
  # makes the two boots seconds apart.
  listening=":$(printf %04X "$cable") 00000000:0000 0A"
  for _ in $(seq 50); do
    grep -q "$listening" /proc/net/tcp && break
    sleep 0.2
  done
  sleep 3
  qemu_a=$(boot a 1 "connect=127.0.0.1:$cable")
  waited=0
  alone=0
  while kill -0 "$qemu_a" 2>/dev/null || kill -0 "$qemu_b" 2>/dev/null; do
    if [ $waited -ge 300 ] && ! { grep -qa '=== up' "$out/console-a.log" && grep -qa '=== up' "$out/console-b.log"; }; then break; fi
    [ $waited -ge 1500 ] && break
    # A guest left alone (its peer failed) would wait for it for ever.
    kill -0 "$qemu_a" 2>/dev/null && kill -0 "$qemu_b" 2>/dev/null || alone=$((alone + 1))
    [ $alone -ge 120 ] && break
    sleep 1
    waited=$((waited + 1))
  done
  ok=0
  for q in "$qemu_a" "$qemu_b"; do
    if kill -0 "$q" 2>/dev/null; then
      ok=1
      kill "$q"; sleep 1; kill -9 "$q" 2>/dev/null
    fi
    wait "$q" 2>/dev/null
  done
  [ $ok = 0 ] || echo "two_hosts.sh: a guest made no progress after $waited s ($out/console-[ab].log)" >&2
  return $ok
}

start=$(date +%s)
for _ in 1 2; do
  # A free port on 127.0.0.1 for the guests' cable.
  cable=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  run_pair && break
  for r in a b; do cp "$out/console-$r.log" "$out/console-$r.failed-boot.log" 2>/dev/null; done
done
echo "two_hosts.sh: guests done in $(( $(date +%s) - start )) s"

# Each trace: exactly the bytes the guest said it sent.
status=0
for r in a b; do
  tr -d '\r' < "$out/console-$r.log" | grep -a '===\|^ready\|^requests\|^atrace' | sed 's/.*===/===/' | sed "s/^/  guest $r: /"
  # shellcheck disable=SC2046
  set -- $(tr -d '\r' < "$out/console-$r.log" | sed -n 's/^=== sent \([0-9]*\) \([0-9a-f]*\)$/\1 \2/p')
  if [ $# != 2 ] || [ ! -f "$out/$r.serial" ]; then
    echo "two_hosts.sh: guest $r sent no trace; the end of $out/console-$r.log:" >&2
    tr -d '\r' < "$out/console-$r.log" | tail -30 >&2
    status=1
    continue
  fi
  head -c "$1" "$out/$r.serial" > "$out/$r.data"
  if [ "$(wc -c < "$out/$r.data")" != "$1" ] || [ "$(md5sum < "$out/$r.data" | cut -d' ' -f1)" != "$2" ]; then
    echo "two_hosts.sh: guest $r's trace arrived damaged ($1 bytes, md5 $2 expected)" >&2
    status=1
  fi
done
[ $status = 0 ] || exit 1

"$atrace" script -i "$out/a.data" > "$out/a.script" || exit 1
"$atrace" script -i "$out/b.data" > "$out/b.script" || exit 1
echo "two_hosts.sh: messages: a $(grep -c 'message:' "$out/a.script"), b $(grep -c 'message:' "$out/b.script")"
if ! "$atrace" merge "$out/a.data" "$out/b.data" -o "$out/m.data"; then
  echo "two_hosts.sh: atrace merge failed" >&2
  exit 1
fi
"$atrace" info -i "$out/m.data" || exit 1
"$atrace" info --format=json -i "$out/m.data" > "$out/info.json" || exit 1
"$atrace" script -i "$out/m.data" --host host-a > "$out/m-a.script" || exit 1
"$atrace" script -i "$out/m.data" --host host-b > "$out/m-b.script" || exit 1
python3 "$here/two_hosts_check.py" "$out/a.script" "$out/info.json" $N "$out/m-a.script" "$out/m-b.script"
