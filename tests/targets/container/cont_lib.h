/* The interface of libcont.so. */
#ifndef ATRACE_CONT_LIB_H
#define ATRACE_CONT_LIB_H

int cont_work(int x); /* traced: the tests count its calls */

#endif
