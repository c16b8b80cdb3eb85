#!/usr/bin/env bash
# The README's two commands on a fresh Debian 12 machine: a bookworm root
# made by mmdebstrap with nothing but what a person needs to get the code
# (git, make, sudo, and mount, which every installed Debian has), the running kernel's /proc, /sys, /dev, tracefs and
# bpffs mounted in, a clone of this checkout's HEAD inside, then
# `make demo` and `CI=true make test` run there as root. What the
# commands install they install themselves; a step missing from them fails
# here. For releases and for changes to install steps (it downloads some
# 200 packages and builds everything: about an hour on 2 cores).
#
#   .ci/fresh-root.sh [DIR]     DIR: where the root goes (default
#                               /var/tmp/atrace-fresh-root, made anew)
# The log is DIR.log; the exit status is make test's.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "fresh-root: run as root (mmdebstrap, mounts, chroot)" >&2; exit 2; }
command -v mmdebstrap >/dev/null || { echo "fresh-root: needs mmdebstrap (apt-get install mmdebstrap)" >&2; exit 2; }

root=${1:-/var/tmp/atrace-fresh-root}
log=$root.log
mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -R "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}" || true; done
}
trap cleanup EXIT

if [ -e "$root" ]; then
  if findmnt -rn -o TARGET | grep -q "^$root/"; then
    echo "fresh-root: $root has mounts in it; unmount them first" >&2
    exit 2
  fi
  rm -rf --one-file-system "$root"
fi
echo "fresh-root: making $root (log: $log)"
# mount: every installed Debian has it (priority important); the apt
# variant does not, and entering the root needs umount.
mmdebstrap --variant=apt --include=git,make,sudo,ca-certificates,mount bookworm "$root" >"$log" 2>&1

mount_in() {  # mount_in TYPE SOURCE TARGET [OPTIONS]
  mkdir -p "$root$3"
  if [ "$1" = bind ]; then mount --rbind "$2" "$root$3"; mount --make-rslave "$root$3"
  else mount -t "$1" ${4:+-o "$4"} "$2" "$root$3"; fi
  mounts+=("$root$3")
}
# The root is a mount point of its own, as a machine's is: runc's container
# set-up (pivot_root, "/" made a slave) refuses a root that is not.
mount --bind "$root" "$root"
mount --make-private "$root"
mounts+=("$root")
mount_in proc proc /proc
mount_in bind /sys /sys
mount_in bind /dev /dev
mount_in tmpfs tmpfs /run mode=755
mount_in tmpfs tmpfs /tmp mode=1777
# tracefs and bpffs come with /sys's recursive bind where the host has them.
[ -d "$root/sys/kernel/tracing/events" ] || mount_in tracefs tracefs /sys/kernel/tracing
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# The network's trust, not atrace's install steps: a machine whose traffic
# goes through a proxy with its own CA (these VMs) trusts it in
# /usr/local/share/ca-certificates; npm, which the speedscope test runs,
# reads NODE_EXTRA_CA_CERTS.
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >>"$log" 2>&1
fi

git clone -q "$PWD" "$root/root/atrace"
echo "fresh-root: make demo, then make test, in the root"
set +e
# The root becomes the root of a mount namespace of its own (pivot_root),
# as a machine's is, not a chroot: a chroot's processes that make mount
# namespaces of their own (the container tests, podman exec) would see
# paths from the host's root, which no machine shows them.
unshare --mount --propagation private -- sh -c '
  cd "$1" && mkdir -p .old-root && pivot_root . .old-root && cd / &&
  umount -l /.old-root && rmdir /.old-root &&
  exec /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TERM=dumb CI=true ${2:+NODE_EXTRA_CA_CERTS=$2} \
    bash -c "cd /root/atrace && time make demo && time make test"' \
  fresh-root "$root" "${NODE_EXTRA_CA_CERTS:+/etc/ssl/certs/ca-certificates.crt}" >>"$log" 2>&1
status=$?
set -e
tail -n 15 "$log"
echo "fresh-root: exit $status (log: $log)"
exit "$status"
