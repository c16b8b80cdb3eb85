#!/bin/sh
# The root file system of the podman tests' container (test_podman.cpp), made
# from the host's own files, so that no image registry and no network is
# needed: target_podman and libcont.so under /opt/app (the host has no
# /opt/app/libcont.so: only the container's view of the file system finds
# it), the libraries ldd lists with the dynamic linker at the paths ldd
# names, and a minimal /etc.
#
#   make_rootfs.sh ROOTFS PROGRAM LIBRARY
#
# Made in ROOTFS.new, then renamed: a build stopped half-way leaves no
# half-made root behind.
set -eu
root=$1 prog=$2 lib=$3
new=$root.new
rm -rf "$new"
mkdir -p "$new/opt/app" "$new/etc" "$new/proc" "$new/sys" "$new/dev" "$new/tmp" "$new/run"
cp "$prog" "$new/opt/app/target_podman"
cp "$lib" "$new/opt/app/libcont.so"
# Every absolute path ldd prints for either file (libcont.so itself is
# "not found" on the host: its RUNPATH is the container's /opt/app),
# copied with its links followed to the same path inside.
for f in $( (ldd "$prog"; ldd "$lib") | grep -o '/[^ ]*' | sort -u); do
  mkdir -p "$new$(dirname "$f")"
  cp -L "$f" "$new$f"
done
echo 'root:x:0:0:root:/root:/bin/sh' >"$new/etc/passwd"
echo 'root:x:0:' >"$new/etc/group"
rm -rf "$root"
mv "$new" "$root"
