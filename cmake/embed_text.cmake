# Turns a text file (the HTML report's script or style, output/html/)
# into the pieces of a C++ string: one raw string literal a line, each at
# most 8000 bytes (some compilers cap one literal), to be included inside an
# array initializer:
#   constexpr const char* kScript[] = {
#   #include "generated/html/report_base.js.inc"
#   };
# Fails when the file holds the raw string's delimiter or a text that would
# end its HTML element early (FORBID, e.g. "</script").
#   cmake -DIN=file -DOUT=file.inc -DFORBID=text -P embed_text.cmake
file(READ "${IN}" text)
set(delim "atrace_embed")
string(FIND "${text}" ")${delim}\"" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "${IN} contains )${delim}\": it cannot be embedded")
endif()
if(FORBID)
  string(TOLOWER "${text}" lower)
  string(TOLOWER "${FORBID}" forbid)
  string(FIND "${lower}" "${forbid}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${IN} contains ${FORBID}: it would end its HTML element in the page")
  endif()
endif()
string(LENGTH "${text}" size)
set(body "// Generated from ${IN} by cmake/embed_text.cmake: do not edit.\n")
set(pos 0)
while(pos LESS size)
  string(SUBSTRING "${text}" ${pos} 8000 piece)
  string(APPEND body "R\"${delim}(${piece})${delim}\",\n")
  math(EXPR pos "${pos} + 8000")
endwhile()
if(size EQUAL 0)
  string(APPEND body "\"\",\n")
endif()
# Written even when unchanged: the build reruns this only when IN or this
# script changed, and an output older than its inputs would rerun it always.
file(WRITE "${OUT}" "${body}")
