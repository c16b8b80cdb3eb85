# Man pages (atrace(1) and atrace-SUBCOMMAND(1), by help2man from each
# command's --help) and bash completion (from the same help), made after
# the atrace binary and installed by `cmake --install`.
find_program(HELP2MAN help2man)
if(NOT HELP2MAN)
  message(FATAL_ERROR "help2man (the man pages) is missing: install help2man (Debian), or run `make deps`")
endif()

set(ATRACE_SUBCOMMANDS record top report script convert info merge list)
set(ATRACE_MAN_PAGES)
foreach(sub "" ${ATRACE_SUBCOMMANDS})
  if(sub STREQUAL "")
    set(page ${PROJECT_BINARY_DIR}/man/atrace.1)
  else()
    set(page ${PROJECT_BINARY_DIR}/man/atrace-${sub}.1)
  endif()
  add_custom_command(OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
    COMMAND sh ${PROJECT_SOURCE_DIR}/cmake/man_page.sh $<TARGET_FILE:atrace> "${sub}"
            ${PROJECT_VERSION} ${page} ${CMAKE_INSTALL_FULL_DOCDIR}
    DEPENDS atrace ${PROJECT_SOURCE_DIR}/cmake/man_page.sh
    COMMENT "help2man: ${page}" VERBATIM)
  list(APPEND ATRACE_MAN_PAGES ${page})
endforeach()

set(ATRACE_COMPLETION ${PROJECT_BINARY_DIR}/completion/atrace)
add_custom_command(OUTPUT ${ATRACE_COMPLETION}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/completion
  COMMAND sh ${PROJECT_SOURCE_DIR}/cmake/bash_completion.sh $<TARGET_FILE:atrace>
          ${ATRACE_COMPLETION}
  DEPENDS atrace ${PROJECT_SOURCE_DIR}/cmake/bash_completion.sh
  COMMENT "bash completion: ${ATRACE_COMPLETION}" VERBATIM)

add_custom_target(atrace_man_completion ALL DEPENDS ${ATRACE_MAN_PAGES} ${ATRACE_COMPLETION})
install(FILES ${ATRACE_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# The docs the pages and the help point to.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md")
install(FILES ${ATRACE_COMPLETION}
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
