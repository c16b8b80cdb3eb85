/* libtarget_usdt_lib.so: a library with USDT probes of its own (provider
 * "libp"), for MODULE:provider:name specs. */
#ifndef TARGET_USDT_LIB_H
#define TARGET_USDT_LIB_H
/* Fires libp:hit(k) for k = 0..n-1; returns the sum of k. */
long usdt_lib_work(long n);
#endif
