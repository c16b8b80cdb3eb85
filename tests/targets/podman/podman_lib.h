/* The interface of libcont.so, the podman tests' library. */
#ifndef ATRACE_PODMAN_LIB_H
#define ATRACE_PODMAN_LIB_H

int cont_work(int x); /* traced: the tests count its calls */

#endif
