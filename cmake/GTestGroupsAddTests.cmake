# Script mode (cmake -P), run after the test binary is linked (cmake/GTestGroups.cmake): lists its cases
# and writes one add_test() per GoogleTest suite (or per part of a suite) into OUTPUT.
# SETTINGS names the file that sets EXECUTABLE, WORKING_DIRECTORY, PROPERTIES, PARTS, CASE_LIMITS, COSTS
# and OUTPUT.

include("${SETTINGS}")

execute_process(COMMAND "${EXECUTABLE}" --gtest_list_tests WORKING_DIRECTORY "${WORKING_DIRECTORY}"
                OUTPUT_VARIABLE listing RESULT_VARIABLE result TIMEOUT 120)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} --gtest_list_tests failed (${result}):\n${listing}")
endif()

# `spec` holds suite=value items; the value for `suite` (or `default`) into `out`.
function(value_for spec suite default out)
  set(value "${default}")
  foreach(item IN LISTS spec)
    string(FIND "${item}" "=" at REVERSE)
    string(SUBSTRING "${item}" 0 ${at} name)
    math(EXPR at "${at} + 1")
    string(SUBSTRING "${item}" ${at} -1 number)
    if(name STREQUAL suite)
      set(value "${number}")
    endif()
  endforeach()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

set(script "")
set(entries 0)
set(cases 0)
# Writes the entries of the suite collected so far (suite, suite_cases).
macro(flush_suite)
  if(NOT suite STREQUAL "")
    list(LENGTH suite_cases count)
    value_for("${CASE_LIMITS}" "${suite}" "" limit)
    if(NOT limit STREQUAL "" AND limit LESS count)
      list(SUBLIST suite_cases 0 ${limit} suite_cases)
      list(JOIN suite_cases ":" filter)
      set(count ${limit})
    else()
      set(filter "${suite}.*")
    endif()
    value_for("${PARTS}" "${suite}" 1 parts)
    value_for("${COSTS}" "${suite}" "" cost)
    if(cost STREQUAL "")
      math(EXPR cost "${count} / 100")  # integer seconds are enough to order them
    endif()
    math(EXPR cases "${cases} + ${count}")
    math(EXPR last "${parts} - 1")
    foreach(part RANGE ${last})
      set(name "${suite}")
      set(shards "")
      if(parts GREATER 1)
        math(EXPR shown "${part} + 1")
        set(name "${suite}.part${shown}of${parts}")
        # GoogleTest's own sharding: case i of the filtered list runs in part i % parts.
        set(shards "GTEST_TOTAL_SHARDS=${parts}" "GTEST_SHARD_INDEX=${part}")
      endif()
      # PROPERTIES as name/value pairs, the shard variables added to ENVIRONMENT.
      set(properties "")
      set(environment "${shards}")
      set(key "")
      foreach(item IN LISTS PROPERTIES)
        if(key STREQUAL "")
          set(key "${item}")
        elseif(key STREQUAL "ENVIRONMENT")
          list(APPEND environment "${item}")
          set(key "")
        else()
          string(APPEND properties " ${key} [==[${item}]==]")
          set(key "")
        endif()
      endforeach()
      if(NOT environment STREQUAL "")
        string(APPEND properties " ENVIRONMENT \"${environment}\"")
      endif()
      string(APPEND script
        "add_test([==[${name}]==] [==[${EXECUTABLE}]==] [==[--gtest_filter=${filter}]==])\n"
        "set_tests_properties([==[${name}]==] PROPERTIES WORKING_DIRECTORY [==[${WORKING_DIRECTORY}]==] "
        "COST ${cost} LABELS gtest "
        # Every case skipped (the GPU suites without a GPU), nothing else after gtest's summary: skipped.
        # Anchored at the end, so a failure or a sanitizer report after the list is never taken for a skip.
        "SKIP_REGULAR_EXPRESSION [==[\\[  PASSED  \\] 0 tests\\.\n\\[  SKIPPED \\] [0-9]+ tests?, listed below:(\n\\[  SKIPPED \\] [^\n]+)+\n*$]==]"
        "${properties})\n")
      math(EXPR entries "${entries} + 1")
    endforeach()
  endif()
  set(suite "")
  set(suite_cases "")
endmacro()

string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(suite "")
set(suite_cases "")
foreach(line IN LISTS lines)
  if(line MATCHES "^Running main\\(\\)" OR line STREQUAL "")
    continue()
  endif()
  string(REGEX REPLACE " *#.*$" "" line "${line}")  # "  # GetParam() = ..." / "  # TypeParam = ..."
  if(line MATCHES "^  +(.+)$")
    list(APPEND suite_cases "${suite}.${CMAKE_MATCH_1}")
  elseif(line MATCHES "^([^ ].*)\\.$")
    flush_suite()
    set(suite "${CMAKE_MATCH_1}")
  else()
    message(FATAL_ERROR "unexpected line in ${EXECUTABLE} --gtest_list_tests: '${line}'")
  endif()
endforeach()
flush_suite()

file(WRITE "${OUTPUT}" "# ${entries} entries, ${cases} cases of ${EXECUTABLE}\n${script}")
