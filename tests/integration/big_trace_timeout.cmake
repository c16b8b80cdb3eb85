# Read by ctest after the discovered tests (TEST_INCLUDE_FILES, in order):
# the big trace's test writes and reads a trace of hundreds of megabytes
# several times (test_big_trace.cpp), minutes where the others take seconds.
set_tests_properties(integration.BigTrace.ReportedConvertedAndLoadedUnder512MiB
  PROPERTIES TIMEOUT 1800)
