# The GPU engine (src/paulistrings/gpu/). With CUDA (the toolkit's nvcc, found automatically at
# /usr/local/cuda or on PATH) the kernels are compiled ahead of time for sm_90 plus PTX (which the
# driver JIT-compiles for newer GPUs), CUB comes from the toolkit, and the library links the CUDA
# runtime statically. Without CUDA a stub reports "no GPU engine in this build" at run time, so every
# front end still builds and GPU tests skip with that message.
set(PAULISTRINGS_CUDA AUTO CACHE STRING "Build the CUDA engine: AUTO (if nvcc is found), ON or OFF")
set_property(CACHE PAULISTRINGS_CUDA PROPERTY STRINGS AUTO ON OFF)

set(PAULISTRINGS_HAS_CUDA OFF)
if(NOT PAULISTRINGS_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Hopper SASS + PTX for later GPUs, unless the user chose (enable_language would otherwise pick the
    # compiler's default, sm_75, and the H200 would JIT-compile that PTX).
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(PAULISTRINGS_HAS_CUDA ON)
  elseif(PAULISTRINGS_CUDA STREQUAL "ON")
    message(FATAL_ERROR "PAULISTRINGS_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()

if(PAULISTRINGS_HAS_CUDA)
  # The kernels are object libraries of their own: nvcc compiles them as C++17 (they include no project
  # header but kernels.h), while the library's C++20 requirement stays with the host code. One library
  # per instantiation of Launch<W, Cx> (kernels_instance.cu with the width and coefficient type defined)
  # and one for the non-template functions (kernels.cu): as one translation unit the kernels took ~7
  # minutes of a single core, the longest edge of every build; as eleven they compile in parallel.
  # -fmad=false: products and sums round exactly as the CPU engines' do.
  set(paulistrings_kernel_objects)
  function(paulistrings_add_kernels name source)
    add_library(${name} OBJECT ${source})
    target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src)
    set_target_properties(${name} PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
                          CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}" POSITION_INDEPENDENT_CODE ON)
    target_compile_options(${name} PRIVATE -fmad=false)
    target_compile_definitions(${name} PRIVATE ${ARGN})
  endfunction()
  paulistrings_add_kernels(paulistrings-cuda-kernels ${CMAKE_SOURCE_DIR}/src/paulistrings/gpu/kernels.cu)
  list(APPEND paulistrings_kernel_objects $<TARGET_OBJECTS:paulistrings-cuda-kernels>)
  foreach(width 1 2 4 8 16)
    foreach(kind real complex)
      set(complex false)
      if(kind STREQUAL "complex")
        set(complex true)
      endif()
      paulistrings_add_kernels(paulistrings-cuda-kernels-w${width}-${kind}
                               ${CMAKE_SOURCE_DIR}/src/paulistrings/gpu/kernels_instance.cu
                               PAULISTRINGS_KERNELS_WIDTH=${width} PAULISTRINGS_KERNELS_COMPLEX=${complex})
      list(APPEND paulistrings_kernel_objects $<TARGET_OBJECTS:paulistrings-cuda-kernels-w${width}-${kind}>)
    endforeach()
  endforeach()
  # The host side, one unit per job (gpu/device_sum_impl.h lists them).
  set(paulistrings_gpu_host_sources)
  foreach(name device_query device_sum device_sum_memory device_sum_layers device_sum_export device_sum_merge
               phase_profile)
    list(APPEND paulistrings_gpu_host_sources ${CMAKE_SOURCE_DIR}/src/paulistrings/gpu/${name}.cc)
  endforeach()
  target_sources(paulistrings PRIVATE ${paulistrings_kernel_objects} ${paulistrings_gpu_host_sources})
  target_link_libraries(paulistrings PUBLIC CUDA::cudart_static)
  target_compile_definitions(paulistrings PUBLIC PAULISTRINGS_HAS_CUDA=1)
  message(STATUS "paulistrings: CUDA engine ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  # NCCL (shipped beside the toolkit): GPU ranks of a distributed run swap rows device to device
  # (partition/nccl_exchange.h). Without it that opt-in path reports that it is missing.
  find_path(PAULISTRINGS_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(PAULISTRINGS_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  if(PAULISTRINGS_NCCL_INCLUDE AND PAULISTRINGS_NCCL_LIBRARY)
    target_sources(paulistrings PRIVATE ${CMAKE_SOURCE_DIR}/src/paulistrings/partition/nccl_exchange_nccl.cc)
    target_include_directories(paulistrings PRIVATE ${PAULISTRINGS_NCCL_INCLUDE})
    target_link_libraries(paulistrings PRIVATE ${PAULISTRINGS_NCCL_LIBRARY})
    target_compile_definitions(paulistrings PRIVATE PAULISTRINGS_HAS_NCCL=1)
    message(STATUS "paulistrings: NCCL ON (${PAULISTRINGS_NCCL_LIBRARY})")
  else()
    message(STATUS "paulistrings: NCCL not found (GPU ranks exchange through host memory only)")
  endif()
else()
  target_sources(paulistrings PRIVATE ${CMAKE_SOURCE_DIR}/src/paulistrings/gpu/no_cuda.cc)
  message(STATUS "paulistrings: CUDA engine OFF (GPU entry points report that at run time)")
endif()

if(PAULISTRINGS_HAS_CUDA AND PAULISTRINGS_BUILD_EXAMPLES)
  # The GPU benchmark (gpu/device_sum.perf.cc): cells against the CPU, kicked Ising, the growth run.
  add_executable(paulistrings-gpu-bench ${CMAKE_SOURCE_DIR}/src/paulistrings/gpu/device_sum.perf.cc)
  target_link_libraries(paulistrings-gpu-bench PRIVATE paulistrings)
endif()
