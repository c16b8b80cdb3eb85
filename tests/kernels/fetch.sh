#!/bin/sh
# Downloads a Debian cloud kernel and prints the path of its vmlinuz.
#   fetch.sh CACHE_DIR VERSION     VERSION: 6.1 or 6.12 (Debian 12 and its backports)
# Everything lands in CACHE_DIR (build/kernels): a private apt state (its own
# sources list and package lists: the system's apt configuration is neither
# read nor changed) and the unpacked kernel, so a second run downloads
# nothing. Only apt-get, dpkg-deb and xz are used.
#
# Beside vmlinuz, CACHE_DIR/VERSION/modules/ holds the few modules a guest
# loads itself for the two-host test (two_hosts.sh): virtio_net, what it
# needs, and virtio_console, those the kernel has as modules (6.1 has all
# of virtio as modules, 6.12 only virtio_net and failover), decompressed
# where the package has them as .ko.xz (busybox insmod: no depmod, no
# compression), and modules/order, the order to load them in.
set -eu
cache=$1
version=$2
case $version in
  6.1|6.12) ;;
  *) echo "fetch.sh: unknown kernel '$version' (6.1 or 6.12)" >&2; exit 2 ;;
esac

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
done_file=$cache/$version/vmlinuz
# In load order: each after those it needs. One the package lacks is built in.
modules="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
  failover net_failover virtio_net virtio_console"
if [ -s "$done_file" ] && [ -s "$cache/$version/modules/order" ]; then
  echo "$done_file"
  exit 0
fi

apt=$cache/apt
mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/etc/preferences.d" "$apt/etc/sources.list.d"
mirror=${ATRACE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cat > "$apt/etc/sources.list" <<SRC
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm-backports main
SRC
opts="-o Dir::Etc=$apt/etc -o Dir::Etc::SourceList=$apt/etc/sources.list
  -o Dir::Etc::SourceParts=$apt/etc/sources.list.d -o Dir::Etc::PreferencesParts=$apt/etc/preferences.d
  -o Dir::State::Lists=$apt/lists -o Dir::Cache=$apt -o Dir::Cache::archives=$apt/archives
  -o Debug::NoLocking=1 -o APT::Sandbox::User=root -o APT::Get::List-Cleanup=0 -o Acquire::Languages=none"
# The package lists: fetched once, then reused.
if ! ls "$apt/lists/"*_dists_bookworm-backports_*Packages* >/dev/null 2>&1; then
  # shellcheck disable=SC2086
  apt-get $opts -qq update >&2
fi
# The newest cloud kernel image of that series in that suite.
# shellcheck disable=SC2086
pkg=$(apt-cache $opts pkgnames linux-image-$version | grep -E "^linux-image-$version[.-][0-9.-]*(\+[a-z0-9.]+)?-cloud-amd64-unsigned\$" | sort -V | tail -1)
if [ -z "$pkg" ]; then echo "fetch.sh: no linux-image-$version cloud kernel in bookworm or bookworm-backports" >&2; exit 1; fi
dir=$cache/$version
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
# shellcheck disable=SC2086
(cd "$dir.tmp" && apt-get $opts -qq download "$pkg" >&2)
dpkg-deb -x "$dir.tmp"/*.deb "$dir.tmp/root"
img=$(ls "$dir.tmp"/root/boot/vmlinuz-* | head -1)
rm -rf "$dir"
mkdir -p "$dir/modules"
cp "$img" "$dir/vmlinuz"
for m in $modules; do
  ko=$(find "$dir.tmp/root/lib/modules" -name "$m.ko" -o -name "$m.ko.xz" | head -1)
  case $ko in
    *.xz) xz -dc "$ko" > "$dir/modules/$m.ko" ;;
    ?*) cp "$ko" "$dir/modules/$m.ko" ;;
    *) continue ;;
  esac
  echo "$m" >> "$dir/modules/order"
done
rm -rf "$dir.tmp"
echo "$dir/vmlinuz"
