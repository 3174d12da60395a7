// The GPU engine's non-template host functions: the device's multiprocessor count, the CUB scans and
// radix sort, and the bucket offsets of the download.
// The kernels and Launch<W, Cx> are in kernels.cuh, compiled once per (width, coefficient type) through
// kernels_instance.cu. A failed CUDA call throws GpuError (cuda_check.h).

#include <algorithm>

#include <cub/device/device_radix_sort.cuh>
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

void sort_pairs(void* temp, std::size_t& temp_bytes, const std::uint32_t* keys_in, std::uint32_t* keys_out,
                const std::uint32_t* values_in, std::uint32_t* values_out, std::size_t n, int end_bit,
                cudaStream_t stream) {
  check(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out,
                                        static_cast<long long>(n), 0, end_bit, stream),
        "radix sort");
}

namespace {

/// Position k ≤ n opens the buckets in (sorted[k − 1], sorted[k]] (capped at `buckets`; −1 before the
/// first, `buckets` after the last): each start is written by exactly one position.
__global__ void bucket_starts_kernel(const std::uint32_t* sorted, std::size_t n, std::size_t buckets,
                                     unsigned long long* start) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k <= n; k += stride) {
    const long long prev = k == 0 ? -1 : static_cast<long long>(sorted[k - 1]);
    const long long last = static_cast<long long>(buckets);
    const long long cur =
        k == n || static_cast<long long>(sorted[k]) > last ? last : static_cast<long long>(sorted[k]);
    for (long long b = prev + 1; b <= cur; ++b) start[b] = k;
  }
}

}  // namespace

void bucket_starts(const std::uint32_t* sorted, std::size_t n, std::size_t buckets, unsigned long long* start,
                   cudaStream_t stream) {
  const std::size_t blocks =
      std::min<std::size_t>((n + 1 + 255) / 256, static_cast<std::size_t>(multiprocessors()) * 8);
  bucket_starts_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(sorted, n, buckets, start);
  check(cudaGetLastError(), "the launch of bucket_starts");
}

}  // namespace paulistrings::gpu::kernels
