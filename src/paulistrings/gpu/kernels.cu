// The GPU engine's non-template host functions: the device's multiprocessor count and the CUB scans.
// The kernels and Launch<W, Cx> are in kernels.cuh, compiled once per (width, coefficient type) through
// kernels_instance.cu. A failed CUDA call throws GpuError (cuda_check.h).

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "paulistrings/gpu/cuda_check.h"
#include "paulistrings/gpu/kernels.h"

namespace paulistrings::gpu::kernels {

int multiprocessors() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  int count = 0;
  check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return count > 0 ? count : 1;
}

void exclusive_sum(void* temp, std::size_t& temp_bytes, const std::uint32_t* in, std::uint32_t* out, std::size_t n,
                   cudaStream_t stream) {
  check(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, static_cast<long long>(n), stream), "exclusive scan");
}
void total_sum(void* temp, std::size_t& temp_bytes, const std::uint32_t* in, unsigned long long* out, std::size_t n,
               cudaStream_t stream) {
  check(cub::DeviceReduce::Reduce(temp, temp_bytes, in, out, static_cast<long long>(n),
                                  cuda::std::plus<unsigned long long>{}, 0ULL, stream),
        "total sum");
}

}  // namespace paulistrings::gpu::kernels
