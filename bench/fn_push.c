/* See bench_fns.h for the entry instruction this file is built to have.
 * The volatile local makes GCC 12 set up a frame (push %rbp) under
 * -fno-omit-frame-pointer; for a leaf function that needs no stack it
 * omits the frame even with that flag. */
#include "bench_fns.h"

__attribute__((noinline)) long bench_fn_push(long x)
{
	volatile long t = x;
	return t * 2654435761L + 1;
}
