# Script mode (cmake -P) test of `mpirun -np K paulistrings ...` (the cli.mpi.* tests of Partition.cmake).
#
#   MODE=compare: runs a small kicked-Ising task in one process (the reference, which also writes the task
#     file), then `mpirun -np RANKS paulistrings run TASK.json`, and checks that the distributed run
#     exits 0, prints its results exactly once on stdout, says nothing on stderr, reports
#     "partitions": RANKS (with transport "mpi" when RANKS > 1) and gives every observable's value to
#     1e-12 relative and its final term count exactly.
#   MODE=checkpoint (RANKS 2 or 4): the same run with --checkpoint --every 200 writes one part per rank (and
#     replaces a stale part of another run); resuming from the parts under mpirun -np RANKS, in one process,
#     and (from 4 parts) under -np 2 gives the reference; a missing part is refused by every rank.
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

if(NOT MODE STREQUAL "compare" AND NOT MODE STREQUAL "checkpoint")
  message(FATAL_ERROR "CliMpiTest.cmake: MODE must be compare, checkpoint or refuse, got '${MODE}'")
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

# Runs `command` (a list), which must exit 0, print its results once on stdout and nothing from
# paulistrings on stderr, and give every observable of the reference: its value to 1e-12 relative and
# the integer `fields` exactly; `ranks` is the partition count it must report. The output goes to `out`.
function(run_and_compare label ranks fields out)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE code)
  message(STATUS "${label}: exit ${code}")
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${label} failed (exit ${code}):\n${err}\n${text}")
  endif()
  if(err MATCHES "paulistrings")
    message(FATAL_ERROR "${label}: expected no message on stderr, got:\n${err}")
  endif()
  count_matches("\"paulistrings\":" "${text}" printed)
  if(NOT printed EQUAL 1)
    message(FATAL_ERROR "${label}: expected the results printed once, found ${printed} copies:\n${text}")
  endif()
  string(JSON partitions GET "${text}" partitions)
  if(NOT partitions EQUAL ranks)
    message(FATAL_ERROR "${label}: expected \"partitions\": ${ranks}, got ${partitions}")
  endif()
  string(JSON observables LENGTH "${reference}" observables)
  if(observables EQUAL 0)
    message(FATAL_ERROR "the reference has no observable")
  endif()
  math(EXPR last "${observables} - 1")
  foreach(i RANGE ${last})
    string(JSON name MEMBER "${reference}" observables ${i})
    foreach(field ${fields})
      string(JSON a GET "${reference}" observables ${name} ${field})
      string(JSON b GET "${text}" observables ${name} ${field})
      if(NOT a EQUAL b)
        message(FATAL_ERROR "${label}: ${name} ${field}: ${b} != ${a} (one process)")
      endif()
    endforeach()
    string(JSON type TYPE "${reference}" observables ${name} value)
    if(type STREQUAL "ARRAY")  # [re, im]
      foreach(part 0 1)
        string(JSON a GET "${reference}" observables ${name} value ${part})
        string(JSON b GET "${text}" observables ${name} value ${part})
        expect_close(${a} ${b} "${label}: ${name} value[${part}]")
      endforeach()
    else()
      string(JSON a GET "${reference}" observables ${name} value)
      string(JSON b GET "${text}" observables ${name} value)
      expect_close(${a} ${b} "${label}: ${name} value")
    endif()
    if(ranks GREATER 1)
      string(JSON transport GET "${text}" observables ${name} partitions transport)
      string(JSON count GET "${text}" observables ${name} partitions count)
      if(NOT transport STREQUAL "mpi" OR NOT count EQUAL ranks)
        message(FATAL_ERROR "${label}: ${name}: expected partitions {count ${ranks}, transport mpi}, got {${count}, ${transport}}")
      endif()
    endif()
    message(STATUS "${label}: ${name}: ${a} (one process), ${b}")
  endforeach()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "compare")
  run_and_compare("mpirun -np ${RANKS} paulistrings run task.json" ${RANKS} "final_terms;peak_terms" out
                  ${mpirun} run ${task} --threads 1 -q)
  return()
endif()

# MODE=checkpoint: the ranks write a checkpoint in parts (every 200 layers of ~800, never gathering the
# sum), and the run resumes from it under mpirun with as many ranks, in one process (the parts added)
# and, from 4 parts, with 2 ranks (each reads two parts; the run routes the terms to their owners).
set(checkpoint ${WORK_DIR}/run.ckpt)
file(WRITE ${checkpoint}.part-0-of-8 "a stale part of another run, removed by the first checkpoint")
run_and_compare("mpirun -np ${RANKS} paulistrings run --checkpoint --every 200" ${RANKS} "final_terms;peak_terms" out
                ${mpirun} run ${task} --threads 1 -q --checkpoint ${checkpoint} --every 200)
if(EXISTS ${checkpoint} OR EXISTS ${checkpoint}.part-0-of-8)
  message(FATAL_ERROR "a distributed checkpoint must leave only its parts (the single file or a stale part is there)")
endif()
math(EXPR last_rank "${RANKS} - 1")
foreach(r RANGE ${last_rank})
  if(NOT EXISTS ${checkpoint}.part-${r}-of-${RANKS})
    message(FATAL_ERROR "part ${r} of ${RANKS} (${checkpoint}.part-${r}-of-${RANKS}) was not written")
  endif()
endforeach()
run_and_compare("mpirun -np ${RANKS} paulistrings run --resume (parts)" ${RANKS} "final_terms" out
                ${mpirun} run ${task} --threads 1 -q --resume ${checkpoint})
string(JSON resumed GET "${out}" resumed_from_layer)
if(NOT resumed EQUAL 800)
  message(FATAL_ERROR "expected \"resumed_from_layer\": 800, got ${resumed}")
endif()
run_and_compare("paulistrings run --resume (${RANKS} parts in one process)" 1 "final_terms" out
                ${PAULISTRINGS_CLI} run ${task} --threads 1 -q --resume ${checkpoint})
if(RANKS EQUAL 4)
  run_and_compare("mpirun -np 2 paulistrings run --resume (4 parts)" 2 "final_terms" out
                  ${MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 2 ${mpirun_flags} ${PAULISTRINGS_CLI}
                  run ${task} --threads 1 -q --resume ${checkpoint})
endif()
# Parts of two checkpoints (one run stopped at layer 600, another at 800): refused by every rank together
# under mpirun (each rank read consistent parts of its own), and by the one process that reads them all.
execute_process(COMMAND ${mpirun} run ${task} --threads 1 -q --checkpoint ${WORK_DIR}/other.ckpt --every 300
                OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "the run checkpointing every 300 layers failed (exit ${code}):\n${err}")
endif()
file(COPY_FILE ${WORK_DIR}/other.ckpt.part-1-of-${RANKS} ${checkpoint}.part-1-of-${RANKS})
execute_process(COMMAND ${mpirun} run ${task} --threads 1 -q --resume ${checkpoint}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
count_matches("paulistrings: [^\n]*its parts were written after different layers" "${err}" messages)
if(NOT code EQUAL 2 OR NOT messages EQUAL RANKS)
  message(FATAL_ERROR "resuming from mixed parts under mpirun: expected exit 2 and the message from each of the "
                      "${RANKS} ranks, got exit ${code}:\n${err}")
endif()
execute_process(COMMAND ${PAULISTRINGS_CLI} run ${task} --threads 1 -q --resume ${checkpoint}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
if(NOT code EQUAL 2 OR NOT err MATCHES "part 1 of ${RANKS} was written after another layer or for another task than part 0")
  message(FATAL_ERROR "resuming from mixed parts in one process: expected exit 2 naming part 1, got ${code}:\n${err}")
endif()
# A part missing: every rank refuses, naming it.
file(REMOVE ${checkpoint}.part-${last_rank}-of-${RANKS})
execute_process(COMMAND ${mpirun} run ${task} --threads 1 -q --resume ${checkpoint}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
if(NOT code EQUAL 2 OR NOT err MATCHES "part ${last_rank} of ${RANKS} .* is missing")
  message(FATAL_ERROR "resuming with a part missing: expected exit 2 naming the part, got ${code}:\n${err}")
endif()
