// The functions the trampoline tests patch (test_fastpath_trampoline_fns.cpp).
#pragma once

#include <cstddef>

extern "C" {
// Hand-written entries (assembly): see the .cpp for their bytes.
int fpt_add(int a, int b);
int fpt_riplea(int a);
int fpt_jcc(int a);
int fpt_short(void);
extern const unsigned char fpt_short_end[];
int fpt_loop(int a, int n);
extern const unsigned char fpt_loop_end[];
int fpt_entered(void);
extern const unsigned char fpt_entered_end[];
int fpt_enters(void);
int fpt_call_first(void);
extern const unsigned char fpt_call_first_end[];
int fpt_jmp_first(void);
extern const unsigned char fpt_jmp_first_end[];
int fpt_helper41(void);
int fpt_rec(int n);
int fpt_lj_driver(void);
void fpt_lj_a(void* jb);
void fpt_lj_b(void* jb);
void fpt_lj_c(void* jb);

// Compiled (GCC -O2).
struct FptBig {
  long a, b, c;
};
struct FptPair {
  long a, b;
};
double fpt_mix(int a, double b, FptBig s, float f);
FptPair fpt_pair(long a, long b);
long double fpt_ld(long double x);
int fpt_format(char* out, size_t n, const char* fmt, ...);
int fpt_raise_in(int sig);                     // raise(sig); sig
int fpt_with_callback(int (*cb)(int), int x);  // cb(x) + 1
void fpt_exit_thread(void* value);             // pthread_exit(value)
int fpt_thread_outer(void* value);             // calls fpt_exit_thread
}

// test_fastpath_trampoline_workload.cpp: ordinary compiled functions.
extern "C" long fpw_run(void);
extern "C" int fpw_counter;
extern "C" int fpw_fib_calls;

int fpt_throw_a(int x, int* cleanups);
int fpt_throw_b(int x, int* cleanups);
int fpt_throw_c(int x);
int fpu_inner(int x);  // throws when x > 0
int fpu_mid(int x);    // catches fpu_inner's exception and rethrows it
int fpu_outer(int x);  // fpu_mid(x) + 1
int fpu_top(int x);    // fpu_outer(x) + 1, or -x when it throws
