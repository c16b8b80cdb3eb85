/* The interface of libtarget_shared.so. */
#ifndef ATRACE_TARGET_SHARED_H
#define ATRACE_TARGET_SHARED_H

int shared_fn(int x);       /* traced; counts its calls */
long shared_fn_calls(void); /* not traced: reports the count */

#endif
