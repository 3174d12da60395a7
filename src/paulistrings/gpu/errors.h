#pragma once
// The GPU engine's errors. A header of its own so that the kernels (kernels.cuh, compiled by nvcc as
// C++17 without the library's headers) throw the same GpuError type the user catches.

#include <stdexcept>

namespace paulistrings::gpu {

/// No CUDA build, no device, or a device ordinal that does not exist.
class GpuUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
/// The device has too little free memory for the next step (the sum is left as it was).
class GpuOutOfMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
/// Any other CUDA failure: a failed CUDA call or kernel launch.
class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace paulistrings::gpu
