# `cmake --install BUILD [--prefix P]`: the atrace binary, and the probe
# header (include/atrace/probe.h) as an interface library with a CMake
# package config, so another project can write
#   find_package(atrace REQUIRED)
#   target_link_libraries(app PRIVATE atrace::probe)
# and use ATRACE_EVENT/BEGIN/END (docs/probe-header.md).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

add_library(atrace_probe INTERFACE)
add_library(atrace::probe ALIAS atrace_probe)
set_target_properties(atrace_probe PROPERTIES EXPORT_NAME probe)
target_include_directories(atrace_probe INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

install(TARGETS atrace RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES include/atrace/probe.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/atrace)
install(TARGETS atrace_probe EXPORT atraceTargets)
set(ATRACE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/atrace)
install(EXPORT atraceTargets NAMESPACE atrace:: DESTINATION ${ATRACE_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/atraceConfig.cmake.in
  ${PROJECT_BINARY_DIR}/atraceConfig.cmake INSTALL_DESTINATION ${ATRACE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/atraceConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/atraceConfig.cmake
  ${PROJECT_BINARY_DIR}/atraceConfigVersion.cmake DESTINATION ${ATRACE_CMAKE_DIR})
