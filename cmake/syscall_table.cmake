# Generates syscall_table.inc (`{nr, "name"},` lines) from the x86-64
# system call numbers of the installed kernel headers (linux-libc-dev), so
# the names follow the headers instead of a copy kept by hand.
#   cmake -DUNISTD=.../asm/unistd_64.h -DOUT=.../syscall_table.inc -P syscall_table.cmake
file(STRINGS "${UNISTD}" lines REGEX "^#define __NR_[a-z0-9_]+ [0-9]+$")
set(body "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^#define __NR_([a-z0-9_]+) ([0-9]+)$" "{\\2, \"\\1\"}," entry "${line}")
  string(APPEND body "${entry}\n")
endforeach()
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
