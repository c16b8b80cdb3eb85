# Sanitized builds, each in a build directory of its own (.ci/run):
#   -DATRACE_SANITIZE=ON  every target with AddressSanitizer and
#                         UndefinedBehaviorSanitizer; the first report aborts
#                         the program (build-asan: the unit tests, and atrace
#                         recording the demo)
#   -DATRACE_FUZZ=ON      with clang: the libFuzzer target over the trace
#                         reader too (tests/fuzz/), the code it reaches built
#                         with libFuzzer's coverage (build/fuzz, from
#                         tests/fuzz/run.sh)
option(ATRACE_SANITIZE "Build with -fsanitize=address,undefined" OFF)
option(ATRACE_FUZZ "Build the libFuzzer target (clang; implies ATRACE_SANITIZE)" OFF)
if(ATRACE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ATRACE_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  set(ATRACE_SANITIZE ON)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
endif()
if(ATRACE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
