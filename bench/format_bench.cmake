# Trace file format benchmarks (issue 3), included from bench/CMakeLists.txt:
#   format_codec_bench  Google Benchmark of TraceWriter/TraceReader (events/s)
#   format_synth        writes a synthetic trace of N events (size, memory of
#                       `atrace report` on 10^7..10^8 events)
# bench/format_size.sh builds bench/format_workload.c itself (twice: NOP5
# entries for atrace, -pg for uftrace) and uses format_synth.
# Need the project's atrace_formats library: skipped when bench/ is built alone.
if(TARGET atrace_formats)
  add_executable(format_synth format_synth.cpp)
  target_compile_options(format_synth PRIVATE -O2 ${ATRACE_WARNINGS})
  target_include_directories(format_synth PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(format_synth PRIVATE atrace_formats)
  if(benchmark_FOUND)
    add_executable(format_codec_bench format_codec_bench.cpp)
    target_compile_options(format_codec_bench PRIVATE -O2 ${ATRACE_WARNINGS})
    target_include_directories(format_codec_bench PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(format_codec_bench PRIVATE atrace_formats benchmark::benchmark)
  else()
    message(STATUS "bench: Google Benchmark not found, format_codec_bench not built")
  endif()
endif()
