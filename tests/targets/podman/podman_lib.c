/* libcont.so: the library of the podman tests' container (make_rootfs.sh puts it at
 * /opt/app/libcont.so in the container's root, where the host has no such
 * file), so a selector "libcont.so:*" can only be resolved in the
 * container's own view of the file system. */
#include "podman_lib.h"

#include "../target_common.h"

static volatile long cont_sink;

TRACED int cont_work(int x) {
  cont_sink = cont_sink + x;
  return x + 1;
}
