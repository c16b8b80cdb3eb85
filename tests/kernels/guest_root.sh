# Sourced by run.sh and two_hosts.sh: the parts of a QEMU guest's
# initramfs both build the same way.
#
#   guest_root ROOT FILE...   ROOT with busybox, each FILE at its own path
#                             and the shared libraries it needs, and the
#                             host's ld.so.cache
#   guest_mounts              the /init lines that mount what atrace needs
#                             and bring up loopback (printed, for a here-doc)

guest_root() {
  _root=$1
  shift
  mkdir -p "$_root/bin" "$_root/proc" "$_root/sys" "$_root/dev" "$_root/tmp" "$_root/etc"
  cp /bin/busybox "$_root/bin/busybox"
  for f in "$@"; do
    mkdir -p "$_root$(dirname "$f")"
    cp "$f" "$_root$f"
    ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/[^ ]* \(/ { print $1 }'
  done | sort -u | while read -r lib; do
    mkdir -p "$_root$(dirname "$lib")"
    cp -L "$lib" "$_root$lib"
  done
  cp /etc/ld.so.cache "$_root/etc/" 2>/dev/null
  return 0
}

guest_mounts() {
  cat <<'MOUNTS'
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf
ifconfig lo 127.0.0.1 up
ulimit -n 65536
MOUNTS
}
