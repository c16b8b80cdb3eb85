/* The interface of libtarget_shared.so. */
#ifndef ATRACE_TARGET_SHARED_H
#define ATRACE_TARGET_SHARED_H

int shared_fn(int x);          /* traced; counts its calls */
long calls_of_shared_fn(void); /* the count; named so "shared_*" does not match it */

#endif
