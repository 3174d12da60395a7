# Partitioned and MPI propagation (partition/). The in-process transport and the partitioned driver are
# ordinary library sources; what needs MPI lives in partition/*_mpi.cc (excluded from the library glob
# by the root CMakeLists.txt) and is added here when MPI is found.
find_package(MPI COMPONENTS CXX QUIET)
if(MPI_CXX_FOUND)
  set(PAULISTRINGS_MPI_DEFAULT ON)
else()
  set(PAULISTRINGS_MPI_DEFAULT OFF)
endif()
option(PAULISTRINGS_MPI "Build the MPI transport (partition/*_mpi.cc) and its tests" ${PAULISTRINGS_MPI_DEFAULT})

if(PAULISTRINGS_MPI)
  if(NOT MPI_CXX_FOUND)
    message(FATAL_ERROR "PAULISTRINGS_MPI is ON but find_package(MPI COMPONENTS CXX) found no MPI "
                        "(install libopenmpi-dev openmpi-bin, or configure with -DPAULISTRINGS_MPI=OFF)")
  endif()
  file(GLOB PAULISTRINGS_MPI_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/paulistrings/partition/*_mpi.cc)
  list(FILTER PAULISTRINGS_MPI_SOURCES EXCLUDE REGEX "mpi_tests_mpi\\.cc$")
  target_sources(paulistrings PRIVATE ${PAULISTRINGS_MPI_SOURCES})
  target_link_libraries(paulistrings PUBLIC MPI::MPI_CXX)
  target_compile_definitions(paulistrings PUBLIC PAULISTRINGS_HAS_MPI=1)
  message(STATUS "paulistrings: MPI transport ON (${MPI_CXX_LIBRARIES})")
else()
  message(STATUS "paulistrings: MPI transport OFF")
endif()

# ---- MPI tests: partition/mpi_tests_mpi.cc (its own main calls MPI_Init_thread), run under mpirun ----
if(PAULISTRINGS_MPI AND PAULISTRINGS_BUILD_TESTS)
  enable_testing()
  find_package(GTest REQUIRED)
  add_executable(paulistrings-mpi-tests ${CMAKE_SOURCE_DIR}/src/paulistrings/partition/mpi_tests_mpi.cc)
  # paulistrings-testing is defined later by the root CMakeLists.txt; target names resolve at generate time.
  target_link_libraries(paulistrings-mpi-tests PRIVATE paulistrings-testing paulistrings GTest::gtest MPI::MPI_CXX)
  set(PAULISTRINGS_MPIRUN_FLAGS --oversubscribe)
  execute_process(COMMAND id -u OUTPUT_VARIABLE PAULISTRINGS_UID OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(PAULISTRINGS_UID STREQUAL "0")
    list(APPEND PAULISTRINGS_MPIRUN_FLAGS --allow-run-as-root)
  endif()
  set(PAULISTRINGS_MPI_TEST_ENVIRONMENT
      "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMP_WAIT_POLICY=passive;OMP_NUM_THREADS=1")
  if(PAULISTRINGS_SANITIZE)
    # OpenMPI does not free its own allocations at exit (MPI_Finalize leaves them to the OS, some in
    # dlopen'ed plugins LeakSanitizer cannot name, so they cannot be suppressed one by one): leak
    # detection is off for the MPI processes only. Address and UB errors still abort them, and the
    # library's own leaks are checked by every other test.
    list(APPEND PAULISTRINGS_MPI_TEST_ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
  endif()
  foreach(ranks 1 2 4)
    add_test(NAME partition.mpi.np${ranks}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${PAULISTRINGS_MPIRUN_FLAGS}
                     $<TARGET_FILE:paulistrings-mpi-tests>)
    set_tests_properties(partition.mpi.np${ranks} PROPERTIES TIMEOUT 300
                         ENVIRONMENT "${PAULISTRINGS_MPI_TEST_ENVIRONMENT}" PROCESSORS ${ranks})
  endforeach()
  # A rank that dies mid-run (std::_Exit in layer 3): mpirun must end the job naming it (OpenMPI prints
  # "Process name: [[job,1],RANK]"), well within the timeout (no hang).
  add_test(NAME partition.mpi.rank_exit_np2
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${PAULISTRINGS_MPIRUN_FLAGS}
                   $<TARGET_FILE:paulistrings-mpi-tests> --exit-rank 1)
  set_tests_properties(partition.mpi.rank_exit_np2 PROPERTIES TIMEOUT 60
                       ENVIRONMENT "${PAULISTRINGS_MPI_TEST_ENVIRONMENT}"
                       PASS_REGULAR_EXPRESSION "Process name: \\[\\[[0-9]+,[0-9]+\\],1\\]")

  # ---- the command line under mpirun (cli/launch.h): cmake/CliMpiTest.cmake runs and checks it ----
  # paulistrings-cli is defined after this file by the root CMakeLists.txt (resolved at generate time).
  string(REPLACE ";" "|" PAULISTRINGS_MPIRUN_FLAGS_ARG "${PAULISTRINGS_MPIRUN_FLAGS}")
  set(PAULISTRINGS_CLI_MPI_TEST_ARGS
      -DPAULISTRINGS_CLI=$<TARGET_FILE:paulistrings-cli> -DMPIEXEC=${MPIEXEC_EXECUTABLE}
      -DMPIEXEC_NUMPROC_FLAG=${MPIEXEC_NUMPROC_FLAG} -DMPIRUN_FLAGS=${PAULISTRINGS_MPIRUN_FLAGS_ARG})
  # One cli.mpi.NAME test: CliMpiTest.cmake with RANKS ranks and the -D settings in ARGN.
  function(add_cli_mpi_test name ranks timeout)
    add_test(NAME cli.mpi.${name}
             COMMAND ${CMAKE_COMMAND} ${PAULISTRINGS_CLI_MPI_TEST_ARGS} -DRANKS=${ranks} ${ARGN}
                     -DWORK_DIR=${CMAKE_BINARY_DIR}/cli-mpi-test/${name} -P ${CMAKE_SOURCE_DIR}/cmake/CliMpiTest.cmake)
    set_tests_properties(cli.mpi.${name} PROPERTIES TIMEOUT ${timeout}
                         ENVIRONMENT "${PAULISTRINGS_MPI_TEST_ENVIRONMENT}" PROCESSORS ${ranks})
  endfunction()
  # The distributed run gives the one-process result, printed once (np1: an ordinary run under mpirun).
  foreach(ranks 1 2 4)
    add_cli_mpi_test(np${ranks} ${ranks} 300 -DMODE=compare)
  endforeach()
  # Checkpoints in parts (one per rank, no gather) and resuming from them with any rank count.
  foreach(ranks 2 4)
    add_cli_mpi_test(checkpoint_np${ranks} ${ranks} 300 -DMODE=checkpoint)
  endforeach()
  # What a launch cannot run: exit 2 (bad input; 1 for a missing GPU, a runtime condition) with the
  # message from every rank, never a hang.
  set(PAULISTRINGS_CLI_MPI_SMALL "kicked-ising|--steps|1|--theta-h|0.3|--threads|1|-q")
  foreach(refusal "np3_refused;3;;the ranks are the partitions of the run, so their number must be a power of two"
                  "partitions_refused;2;|--partitions|2;--partitions .or run.partitions in the task. cannot be combined"
                  "gpu_missing;2;|--device|4096;device 4096: ;1")
    list(GET refusal 0 name)
    list(GET refusal 1 ranks)
    list(GET refusal 2 extra)
    list(GET refusal 3 expected)
    set(code 2)
    list(LENGTH refusal fields)
    if(fields GREATER 4)
      list(GET refusal 4 code)
    endif()
    add_cli_mpi_test(${name} ${ranks} 60 -DMODE=refuse -DEXPECT_CODE=${code}
                     "-DCLI_ARGS=${PAULISTRINGS_CLI_MPI_SMALL}${extra}" "-DEXPECT_ERROR=${expected}")
  endforeach()
endif()

# ---- benchmark: partition/partition.perf.cc (a program, not a test; under mpirun when built with MPI) ----
if(PAULISTRINGS_BUILD_EXAMPLES)
  add_executable(paulistrings-partition-bench ${CMAKE_SOURCE_DIR}/src/paulistrings/partition/partition.perf.cc)
  target_link_libraries(paulistrings-partition-bench PRIVATE paulistrings)
endif()
