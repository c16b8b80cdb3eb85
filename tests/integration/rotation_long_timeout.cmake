# Read by ctest after the discovered tests (TEST_INCLUDE_FILES): the
# rotation test records a target that runs for 60 s, then reads 13 files
# one by one (test_rotation_long.cpp).
set_tests_properties(integration.RotationLong.SixtySecondsRotatedEveryFiveReadAsOne
  PROPERTIES TIMEOUT 400)
