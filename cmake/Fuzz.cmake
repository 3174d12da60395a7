# libFuzzer targets (PAULISTRINGS_FUZZ; scripts/fuzz.sh): every src/paulistrings/<layer>/<reader>.fuzz.cc
# becomes build-dir/paulistrings-fuzz-<reader>, linked with libFuzzer's main. The compile flags (coverage,
# ASan, UBSan for every file) are set in CMakeLists.txt before the library is defined. The targets link
# the reader layers alone — core, channels, circuit, truncation, readout, io (what io/ may include,
# docs/design.md §3) — so a fuzz build compiles no engine under the sanitizers.
if(NOT PAULISTRINGS_FUZZ)
  return()
endif()
set(PAULISTRINGS_READER_SOURCES ${PAULISTRINGS_SOURCES})
list(FILTER PAULISTRINGS_READER_SOURCES INCLUDE REGEX "/src/paulistrings/(core|channels|circuit|truncation|readout|io)/")
add_library(paulistrings-readers STATIC ${PAULISTRINGS_READER_SOURCES}
            ${CMAKE_BINARY_DIR}/generated/paulistrings/circuit/heavy_hex_127_json.inc)
target_include_directories(paulistrings-readers PUBLIC ${CMAKE_SOURCE_DIR}/src PRIVATE ${CMAKE_BINARY_DIR}/generated)
target_link_libraries(paulistrings-readers PUBLIC OpenMP::OpenMP_CXX PRIVATE nlohmann_json::nlohmann_json)
file(GLOB_RECURSE PAULISTRINGS_FUZZ_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/paulistrings/*.fuzz.cc)
foreach(source ${PAULISTRINGS_FUZZ_SOURCES})
  get_filename_component(name ${source} NAME)
  string(REGEX REPLACE "\\.fuzz\\.cc$" "" name ${name})
  add_executable(paulistrings-fuzz-${name} ${source})
  target_link_libraries(paulistrings-fuzz-${name} PRIVATE paulistrings-readers)
  target_compile_definitions(paulistrings-fuzz-${name} PRIVATE PAULISTRINGS_LIBFUZZER=1)
  target_link_options(paulistrings-fuzz-${name} PRIVATE -fsanitize=fuzzer)
  list(APPEND PAULISTRINGS_FUZZ_TARGETS paulistrings-fuzz-${name})
endforeach()
add_custom_target(paulistrings-fuzz DEPENDS ${PAULISTRINGS_FUZZ_TARGETS})
message(STATUS "paulistrings: fuzz targets ${PAULISTRINGS_FUZZ_TARGETS}")
