// The functions test_fastpath_trampoline.cpp patches: hand-written entries
// with known bytes (assembly, below), and compiled ones for the calling
// convention (arguments, return values, varargs) and for C++ exceptions.
#include "test_fastpath_trampoline_fns.h"

#include <pthread.h>

#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <stdexcept>

// clang-format off
asm(R"(
  .data
  .balign 4
fpt_data:
  .long 1000

  .text
  .balign 16
# int fpt_add(int a, int b): endbr64 + push %rbp: 5 bytes replaced.
  .globl fpt_add
  .type fpt_add, @function
fpt_add:
  endbr64
  push %rbp
  mov %rsp, %rbp
  lea (%rdi,%rsi), %eax
  pop %rbp
  ret
  .size fpt_add, . - fpt_add

# int fpt_riplea(int a): 1000 + a, through a RIP-relative lea (7 bytes).
  .balign 16
  .globl fpt_riplea
  .type fpt_riplea, @function
fpt_riplea:
  lea fpt_data(%rip), %rax
  mov (%rax), %eax
  add %edi, %eax
  ret
  .size fpt_riplea, . - fpt_riplea

# int fpt_jcc(int a): a > 0 ? a : -1; a short jle at +2, 6 bytes replaced.
  .balign 16
  .globl fpt_jcc
  .type fpt_jcc, @function
fpt_jcc:
  test %edi, %edi
  jle 1f
  mov %edi, %eax
  ret
1:
  mov $-1, %eax
  ret
  .size fpt_jcc, . - fpt_jcc

# int fpt_short(void): 3 bytes, shorter than the jump.
  .balign 16
  .globl fpt_short
  .type fpt_short, @function
fpt_short:
  xor %eax, %eax
  ret
  .size fpt_short, . - fpt_short
  .globl fpt_short_end
fpt_short_end:

# int fpt_loop(int a, int n): a * n (n > 0) by a loop whose head is at +2.
  .balign 16
  .globl fpt_loop
  .type fpt_loop, @function
fpt_loop:
  xor %eax, %eax
1:
  add %edi, %eax
  dec %esi
  jnz 1b
  ret
  .size fpt_loop, . - fpt_loop
  .globl fpt_loop_end
fpt_loop_end:

# int fpt_entered(void): 5, but fpt_enters jumps to its +1.
  .balign 16
  .globl fpt_entered
  .type fpt_entered, @function
fpt_entered:
  push %rbx
  mov $5, %eax
  pop %rbx
  ret
  .size fpt_entered, . - fpt_entered
  .globl fpt_entered_end
fpt_entered_end:
  .balign 16
  .globl fpt_enters
  .type fpt_enters, @function
fpt_enters:
  push %rbx
  jmp fpt_entered + 1
  .size fpt_enters, . - fpt_enters

# int fpt_call_first(void): 42, by a call at +0 (relocated as push + jump).
  .balign 16
  .globl fpt_call_first
  .type fpt_call_first, @function
fpt_call_first:
  call fpt_helper41
  add $1, %eax
  ret
  .size fpt_call_first, . - fpt_call_first
  .globl fpt_call_first_end
fpt_call_first_end:

# int fpt_jmp_first(void): 41, a tail jump at +0.
  .balign 16
  .globl fpt_jmp_first
  .type fpt_jmp_first, @function
fpt_jmp_first:
  {disp32} jmp fpt_helper41
  .size fpt_jmp_first, . - fpt_jmp_first
  .globl fpt_jmp_first_end
fpt_jmp_first_end:

# int fpt_helper41(void): 41 (mov $41,%eax is 5 bytes).
  .balign 16
  .globl fpt_helper41
  .type fpt_helper41, @function
fpt_helper41:
  mov $41, %eax
  ret
  .size fpt_helper41, . - fpt_helper41

# int fpt_rec(int n): n, by n + 1 nested calls (not a tail call).
  .balign 16
  .globl fpt_rec
  .type fpt_rec, @function
fpt_rec:
  push %rbx
  mov %edi, %ebx
  xor %eax, %eax
  test %ebx, %ebx
  jz 1f
  lea -1(%rbx), %edi
  call fpt_rec
  add $1, %eax
1:
  pop %rbx
  ret
  .size fpt_rec, . - fpt_rec

# int fpt_lj_driver(void): 7. setjmp, then fpt_lj_a -> fpt_lj_b -> fpt_lj_c,
# which longjmps back over the three.
  .balign 16
  .globl fpt_lj_driver
  .type fpt_lj_driver, @function
fpt_lj_driver:
  push %rbp
  mov %rsp, %rbp
  sub $208, %rsp
  mov %rsp, %rdi
  call _setjmp@PLT
  test %eax, %eax
  jnz 1f
  mov %rsp, %rdi
  call fpt_lj_a
1:
  mov $7, %eax
  leave
  ret
  .size fpt_lj_driver, . - fpt_lj_driver

  .balign 16
  .globl fpt_lj_a
  .type fpt_lj_a, @function
fpt_lj_a:
  push %rbp
  mov %rsp, %rbp
  call fpt_lj_b
  pop %rbp
  ret
  .size fpt_lj_a, . - fpt_lj_a

  .balign 16
  .globl fpt_lj_b
  .type fpt_lj_b, @function
fpt_lj_b:
  push %rbp
  mov %rsp, %rbp
  call fpt_lj_c
  pop %rbp
  ret
  .size fpt_lj_b, . - fpt_lj_b

  .balign 16
  .globl fpt_lj_c
  .type fpt_lj_c, @function
fpt_lj_c:
  push %rbp
  mov %rsp, %rbp
  mov $1, %esi
  call longjmp@PLT
  .size fpt_lj_c, . - fpt_lj_c
)");
// clang-format on

#define FPT_NOINLINE __attribute__((noinline, noipa))

extern "C" {

FPT_NOINLINE double fpt_mix(int a, double b, FptBig s, float f) {
  return a + b + static_cast<double>(s.a) + static_cast<double>(s.b) * 2 +
         static_cast<double>(s.c) * 3 + f;
}

FPT_NOINLINE FptPair fpt_pair(long a, long b) { return {a + b, a - b}; }

FPT_NOINLINE long double fpt_ld(long double x) { return x * 3; }

FPT_NOINLINE int fpt_format(char* out, size_t n, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int r = vsnprintf(out, n, fmt, ap);
  va_end(ap);
  return r;
}

FPT_NOINLINE int fpt_raise_in(int sig) {
  raise(sig);
  return sig;
}

FPT_NOINLINE int fpt_with_callback(int (*cb)(int), int x) { return cb(x) + 1; }

FPT_NOINLINE void fpt_exit_thread(void* value) { pthread_exit(value); }

FPT_NOINLINE int fpt_thread_outer(void* value) {
  fpt_exit_thread(value);
  return 1;
}

}  // extern "C"

namespace {
struct Cleanup {
  int* count;
  ~Cleanup() { ++*count; }
};
}  // namespace

FPT_NOINLINE int fpt_throw_c(int x) {
  if (x > 0) throw std::runtime_error("fpt_throw_c");
  return x;
}

FPT_NOINLINE int fpt_throw_b(int x, int* cleanups) {
  Cleanup c{cleanups};
  return fpt_throw_c(x) + 1;
}

FPT_NOINLINE int fpt_throw_a(int x, int* cleanups) {
  try {
    return fpt_throw_b(x, cleanups) + 1;
  } catch (const std::runtime_error&) {
    return -100;
  }
}

// A rethrow: fpu_mid catches fpu_inner's exception and rethrows it (`throw;`)
// through fpu_outer to fpu_top's catch; fpu_top returns -x.
FPT_NOINLINE int fpu_inner(int x) {
  if (x > 0) throw std::runtime_error("fpu_inner");
  return x;
}

FPT_NOINLINE int fpu_mid(int x) {
  try {
    return fpu_inner(x) + 1;
  } catch (const std::runtime_error&) {
    throw;
  }
}

FPT_NOINLINE int fpu_outer(int x) { return fpu_mid(x) + 1; }

FPT_NOINLINE int fpu_top(int x) {
  try {
    return fpu_outer(x) + 1;
  } catch (const std::runtime_error&) {
    return -x;
  }
}
