/* See bench_fns.h for the entry instruction this file is built to have. */
#include "bench_fns.h"

__attribute__((noinline)) long bench_fn_nop1x5(long x)
{
	return x * 2654435761L + 1;
}
