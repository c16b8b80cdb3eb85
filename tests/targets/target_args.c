/* Functions with known arguments and return values (issue 20): every
 * integer width and sign, negative values, pointers, strings (empty, long,
 * not UTF-8, NULL, unmapped), for `record --args/--retval`. Each call's
 * result is printed, so a traced run that changed what they compute shows
 * in the output (tests/integration/test_args.cpp). One round per count. */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "target_common.h"

long ar_clobber(long x); /* args_fns.S */

TRACED long ar_signed(int8_t a, int16_t b, int32_t c, int64_t d, int32_t e, int8_t f) {
  TARGET_BARRIER();
  return (int64_t)a + b + c + d + e + f; /* in 64 bits: no overflow */
}

TRACED unsigned long ar_unsigned(uint8_t a, uint16_t b, uint32_t c, uint64_t d) {
  TARGET_BARRIER();
  return a + b + c + d;
}

TRACED uintptr_t ar_pointer(const void *p) {
  TARGET_BARRIER();
  return (uintptr_t)p & 0xfff;
}

/* Reads s only when told it is readable: NULL and unmapped ones are passed
 * with ok = 0, so only atrace tries to read them. */
TRACED long ar_string(const char *s, int ok) {
  TARGET_BARRIER();
  return ok ? (long)strlen(s) : -1;
}

TRACED long ar_two_strings(long n, const char *a, const char *b) {
  TARGET_BARRIER();
  return n + (long)strlen(a) + (long)strlen(b);
}

TRACED int ar_negative(int x) {
  TARGET_BARRIER();
  return -x;
}

TRACED const char *ar_name(int i) {
  TARGET_BARRIER();
  return i ? "one" : "zero";
}

int main(int argc, char **argv) {
  long rounds = target_count_arg(argc, argv, 0, 1), sum = 0;
  char long_str[301];
  memset(long_str, 'L', 300);
  long_str[300] = 0;
  /* An address that is certainly not mapped: a page mapped then unmapped. */
  long page = sysconf(_SC_PAGESIZE);
  char *gone = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (gone == MAP_FAILED) return 1;
  munmap(gone, (size_t)page);
  static const char bytes[] = {(char)0xff, (char)0xfe, 'a', (char)0x80, 0};
  for (long r = 0; r < rounds; r++) {
    sum += ar_signed(-128, -32768, -2147483647 - 1, INT64_MIN / 2, -1, 127);
    sum += (long)ar_unsigned(255, 65535, 4294967295u, UINT64_MAX);
    sum += (long)ar_pointer((const void *)0x1234);
    sum += (long)ar_pointer(NULL);
    sum += ar_string("", 1);
    sum += ar_string("hello", 1);
    sum += ar_string(long_str, 1);
    sum += ar_string(bytes, 1);
    sum += ar_string(NULL, 0);
    sum += ar_string(gone, 0);
    sum += ar_two_strings(7, "a\"b", "tab\there");
    sum += ar_negative(5);
    sum += ar_negative(-7);
    sum += (long)strlen(ar_name(0)) + (long)strlen(ar_name(1));
    sum += ar_clobber(41);
  }
  printf("rounds=%ld sum=%ld\n", rounds, sum);
  return target_exit_code(argc, argv);
}
