# One ctest entry per GoogleTest suite instead of one per case (gtest_discover_tests). Each entry is a
# process; ~1,800 cases meant ~1,800 starts of a large binary (0.3–0.8 s each under AddressSanitizer on
# the CI machine: more than the cases themselves, docs/PERFORMANCE.md, "CI time"). The cases are listed
# after the binary is linked (as gtest_discover_tests does) by cmake/GTestGroupsAddTests.cmake, which
# writes the add_test() calls; gtest still reports every case, and scripts/test.sh counts cases.
#
# paulistrings_add_gtest_groups(TARGET
#   [PROPERTIES prop value ...]    set on every entry (TIMEOUT, ENVIRONMENT, ...)
#   [PARTS suite=N ...]            run that suite as N entries (cases dealt round-robin), so that its
#                                  cases spread over ctest's parallel jobs
#   [CASE_LIMITS suite=N ...]      run only the suite's first N cases (the sanitizer run's seeded sweeps)
#   [COSTS suite=seconds ...])     ctest COST (start the longest entries first on a clean clone, which
#                                  has no timing data yet); others get their case count / 100
function(paulistrings_add_gtest_groups target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "PROPERTIES;PARTS;CASE_LIMITS;COSTS")
  set(base "${CMAKE_CURRENT_BINARY_DIR}/${target}_groups")
  # The settings go through a file: lists with ';' and generator expressions survive it intact.
  string(CONCAT settings
    "set(EXECUTABLE [==[$<TARGET_FILE:${target}>]==])\n"
    "set(WORKING_DIRECTORY [==[${CMAKE_CURRENT_BINARY_DIR}]==])\n"
    "set(PROPERTIES [==[${arg_PROPERTIES}]==])\n"
    "set(PARTS [==[${arg_PARTS}]==])\n"
    "set(CASE_LIMITS [==[${arg_CASE_LIMITS}]==])\n"
    "set(COSTS [==[${arg_COSTS}]==])\n"
    "set(OUTPUT [==[${base}_tests.cmake]==])\n")
  file(GENERATE OUTPUT "${base}_settings.cmake" CONTENT "${settings}")
  add_custom_command(TARGET ${target} POST_BUILD
    BYPRODUCTS "${base}_tests.cmake"
    COMMAND "${CMAKE_COMMAND}" -D "SETTINGS=${base}_settings.cmake"
            -P "${PROJECT_SOURCE_DIR}/cmake/GTestGroupsAddTests.cmake"
    VERBATIM)
  # Relinked (and so listed again) when the listing script changes, as for any other input.
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${PROJECT_SOURCE_DIR}/cmake/GTestGroupsAddTests.cmake")
  file(WRITE "${base}_include.cmake"
    "if(EXISTS \"${base}_tests.cmake\")\n"
    "  include(\"${base}_tests.cmake\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${base}_include.cmake")
endfunction()
