#pragma once
// check(): the one test of a CUDA runtime call's status, for the host pipeline (device_sum_*.cc, g++)
// and the kernel launchers (kernels.cuh, nvcc) alike: a failure throws gpu::GpuError naming the call.

#include <string>

#include <cuda_runtime_api.h>

#include "paulistrings/gpu/errors.h"

namespace paulistrings::gpu {

inline void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the device stays usable
  throw GpuError(std::string("CUDA error in ").append(what).append(": ").append(cudaGetErrorString(status)));
}

}  // namespace paulistrings::gpu
