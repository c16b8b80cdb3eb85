// The kernel fact --fast-path=hot would build on (docs/fast-path.md, "Hot
// functions"): a uprobe on code in a memfd mapped MAP_PRIVATE|PROT_EXEC
// fires, and runs the instruction the FILE holds, not the process's copy.
//
// Three pages of a memfd: same() at +0x100 (`mov $42,%eax; ret` in the
// file and in memory); diverged() at +0x1200 (`mov $7,%eax; ret` in the
// file, its immediate then changed to 42 in the private mapping through
// /proc/self/mem, the way atrace writes code into a process today: a
// copy-on-write page); `mov $1,%eax; ret` twice, probed_page() at +0x300
// (same()'s page, which only the kernel's breakpoint makes private) and
// other_page() at +0x2300 (a page nothing writes privately). The test puts
// uprobes on same() and diverged() through /proc/PID/fd/N, writes 5 into
// the last two immediates through the memfd (the file), creates argv[1],
// and reads the sums of 1,000 calls of each probed function and what the
// two others return.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  int fd = memfd_create("atrace-hot-exp", 0);
  unsigned char code[3 * 4096];
  memset(code, 0xcc, sizeof code);
  const unsigned char same[] = {0xb8, 42, 0, 0, 0, 0xc3};
  const unsigned char diverged[] = {0xb8, 7, 0, 0, 0, 0xc3};
  memcpy(code + 0x100, same, sizeof same);
  memcpy(code + 0x1200, diverged, sizeof diverged);
  const unsigned char one[] = {0xb8, 1, 0, 0, 0, 0xc3};
  memcpy(code + 0x300, one, sizeof one);
  memcpy(code + 0x2300, one, sizeof one);
  if (fd < 0 || write(fd, code, sizeof code) != (ssize_t)sizeof code) return 3;
  unsigned char* p = mmap(NULL, sizeof code, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return 4;
  int mem = open("/proc/self/mem", O_RDWR);
  const unsigned char imm = 42;
  if (mem < 0 || pwrite(mem, &imm, 1, (off_t)(uintptr_t)(p + 0x1201)) != 1) return 5;
  struct stat st;
  while (stat(argv[1], &st) != 0) usleep(10000);
  int (*f_same)(void) = (int (*)(void))(p + 0x100);
  int (*f_diverged)(void) = (int (*)(void))(p + 0x1200);
  long s1 = 0, s2 = 0;
  for (int i = 0; i < 1000; i++) s1 += f_same();
  for (int i = 0; i < 1000; i++) s2 += f_diverged();
  int (*probed_page)(void) = (int (*)(void))(p + 0x300);
  int (*other_page)(void) = (int (*)(void))(p + 0x2300);
  printf("same %ld diverged %ld probed_page %d other_page %d\n", s1, s2, probed_page(),
         other_page());
  return 0;
}
