# Script mode (cmake -P) test of `mpirun -np K paulistrings ...` (the cli.mpi.* tests of Partition.cmake).
#
#   MODE=compare: runs a small kicked-Ising task in one process (the reference, which also writes the task
#     file), then `mpirun -np RANKS paulistrings run TASK.json`, and checks that the distributed run
#     exits 0, prints its results exactly once on stdout, says nothing on stderr, reports
#     "partitions": RANKS (with transport "mpi" when RANKS > 1) and gives every observable's value to
#     1e-12 relative and its final term count exactly.
#   MODE=refuse: runs `mpirun -np RANKS paulistrings CLI_ARGS` and checks exit code EXPECT_CODE (default 2),
#     nothing on stdout, and the message EXPECT_ERROR (a regex) from every rank.
#
# Variables: PAULISTRINGS_CLI, MPIEXEC, MPIEXEC_NUMPROC_FLAG, MPIRUN_FLAGS and CLI_ARGS ('|'-separated
# lists: add_test would split ';'), RANKS, WORK_DIR, MODE, EXPECT_ERROR.

foreach(variable PAULISTRINGS_CLI MPIEXEC MPIEXEC_NUMPROC_FLAG RANKS WORK_DIR MODE)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "CliMpiTest.cmake: ${variable} is not set")
  endif()
endforeach()
string(REPLACE "|" ";" mpirun_flags "${MPIRUN_FLAGS}")
string(REPLACE "|" ";" cli_args "${CLI_ARGS}")
set(mpirun ${MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} ${RANKS} ${mpirun_flags} ${PAULISTRINGS_CLI})
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# The number of times `regex` matches `text`, into `out`.
function(count_matches regex text out)
  string(REGEX MATCHALL "${regex}" matches "${text}")
  list(LENGTH matches count)
  set(${out} ${count} PARENT_SCOPE)
endfunction()

# Fails unless the decimal numbers a and b agree to 1e-12 relative (CMake has no floating point: awk).
function(expect_close a b what)
  execute_process(COMMAND awk -v a=${a} -v b=${b}
                          "BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; exit !(d <= 1e-12 * m) }"
                  RESULT_VARIABLE close)
  if(NOT close EQUAL 0)
    message(FATAL_ERROR "${what}: ${b} (mpirun -np ${RANKS}) differs from ${a} (one process) by more than 1e-12 relative")
  endif()
endfunction()

if(MODE STREQUAL "refuse")
  execute_process(COMMAND ${mpirun} ${cli_args} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
  string(JOIN " " shown ${cli_args})
  message(STATUS "mpirun -np ${RANKS} paulistrings ${shown}: exit ${code}\n${err}")
  if(NOT DEFINED EXPECT_CODE)
    set(EXPECT_CODE 2)
  endif()
  if(NOT code EQUAL EXPECT_CODE)
    message(FATAL_ERROR "expected exit code ${EXPECT_CODE}, got ${code}")
  endif()
  if(NOT out STREQUAL "")
    message(FATAL_ERROR "expected nothing on stdout, got:\n${out}")
  endif()
  count_matches("paulistrings: [^\n]*${EXPECT_ERROR}" "${err}" messages)
  if(NOT messages EQUAL RANKS)
    message(FATAL_ERROR "expected the message '${EXPECT_ERROR}' from each of the ${RANKS} ranks, found it ${messages} times")
  endif()
  return()
endif()

if(NOT MODE STREQUAL "compare")
  message(FATAL_ERROR "CliMpiTest.cmake: MODE must be compare or refuse, got '${MODE}'")
endif()

# 127 qubits, 3 steps, the mean magnetization (127 terms), about 5000 terms at the end: every rank
# exchanges rows in most layers, in well under a second.
set(task ${WORK_DIR}/task.json)
execute_process(COMMAND ${PAULISTRINGS_CLI} kicked-ising --steps 3 --theta-h 0.6 --observable mz --threads 1 -q
                        --write-task ${task}
                OUTPUT_VARIABLE reference ERROR_VARIABLE err RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "reference run failed (exit ${code}):\n${err}")
endif()

execute_process(COMMAND ${mpirun} run ${task} --threads 1 -q OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE code)
message(STATUS "mpirun -np ${RANKS} paulistrings run task.json: exit ${code}")
if(NOT code EQUAL 0)
  message(FATAL_ERROR "mpirun -np ${RANKS} failed (exit ${code}):\n${err}\n${out}")
endif()
if(err MATCHES "paulistrings")
  message(FATAL_ERROR "expected no message on stderr, got:\n${err}")
endif()
count_matches("\"paulistrings\":" "${out}" printed)
if(NOT printed EQUAL 1)
  message(FATAL_ERROR "expected the results printed once, found ${printed} copies:\n${out}")
endif()

string(JSON partitions GET "${out}" partitions)
if(NOT partitions EQUAL RANKS)
  message(FATAL_ERROR "expected \"partitions\": ${RANKS}, got ${partitions}")
endif()
string(JSON observables LENGTH "${reference}" observables)
if(observables EQUAL 0)
  message(FATAL_ERROR "the reference has no observable")
endif()
math(EXPR last "${observables} - 1")
foreach(i RANGE ${last})
  string(JSON name MEMBER "${reference}" observables ${i})
  foreach(field final_terms peak_terms)
    string(JSON a GET "${reference}" observables ${name} ${field})
    string(JSON b GET "${out}" observables ${name} ${field})
    if(NOT a EQUAL b)
      message(FATAL_ERROR "${name} ${field}: ${b} (mpirun -np ${RANKS}) != ${a} (one process)")
    endif()
  endforeach()
  string(JSON type TYPE "${reference}" observables ${name} value)
  if(type STREQUAL "ARRAY")  # [re, im]
    foreach(part 0 1)
      string(JSON a GET "${reference}" observables ${name} value ${part})
      string(JSON b GET "${out}" observables ${name} value ${part})
      expect_close(${a} ${b} "${name} value[${part}]")
    endforeach()
  else()
    string(JSON a GET "${reference}" observables ${name} value)
    string(JSON b GET "${out}" observables ${name} value)
    expect_close(${a} ${b} "${name} value")
  endif()
  if(RANKS GREATER 1)
    string(JSON transport GET "${out}" observables ${name} partitions transport)
    string(JSON count GET "${out}" observables ${name} partitions count)
    if(NOT transport STREQUAL "mpi" OR NOT count EQUAL RANKS)
      message(FATAL_ERROR "${name}: expected partitions {count ${RANKS}, transport mpi}, got {${count}, ${transport}}")
    endif()
  endif()
  message(STATUS "${name}: ${a} (one process), ${b} (mpirun -np ${RANKS})")
endforeach()
