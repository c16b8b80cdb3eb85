# Run at build time (cmake -P): writes OUT, a header defining
# ATRACE_GIT_COMMIT ("" outside a git checkout), only when it changes, so
# `atrace --version` names the commit built without rebuilding on every build.
execute_process(COMMAND git -C "${SRC}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git -C "${SRC}" status --porcelain --untracked-files=no
                OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(commit AND dirty)
  set(commit "${commit}-dirty")
endif()
set(text "#define ATRACE_GIT_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
