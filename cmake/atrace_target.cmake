# atrace_library(NAME SOURCES...): a static library of the project with the
# project's include root and warnings.
function(atrace_library name)
  add_library(${name} STATIC ${ARGN})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_compile_options(${name} PRIVATE ${ATRACE_WARNINGS})
endfunction()
