/* See bench_fns.h for the entry instructions this file is built to have:
 * endbr64 (-fcf-protection=full), then push %rbp as in fn_push.c. */
#include "bench_fns.h"

__attribute__((noinline)) long bench_fn_endbrpush(long x)
{
	volatile long t = x;
	return t * 2654435761L + 1;
}
