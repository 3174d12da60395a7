#pragma once
// Kernels of the layer passes (the top-n histograms and cut) and of compaction (live flags, holes
// filled from the end).
// Part of kernels.cuh, which includes it after kernels_device.cuh; not a header of its own.

namespace paulistrings::gpu::kernels {
namespace {

// ---- layer passes and compaction ----

template <bool Cx>
__global__ void __launch_bounds__(kThreads) exponent_histogram_kernel(const void* coef, std::size_t n,
                                                                       unsigned long long* histogram) {
  __shared__ unsigned int local[2048];
  for (int k = threadIdx.x; k < 2048; k += blockDim.x) local[k] = 0;
  __syncthreads();
  for (std::size_t i = thread_index(); i < n; i += thread_stride()) {
    const C2 c = load_coef<Cx>(coef, i);
    if (is_zero<Cx>(c)) continue;
    const std::uint64_t bits = static_cast<std::uint64_t>(__double_as_longlong(norm2<Cx>(c)));
    atomicAdd(&local[(bits >> 52) & 0x7ff], 1u);
  }
  __syncthreads();
  for (int k = threadIdx.x; k < 2048; k += blockDim.x) {
    if (local[k]) atomicAdd(&histogram[k], static_cast<unsigned long long>(local[k]));
  }
}

template <bool Cx>
__global__ void __launch_bounds__(kThreads) digit_histogram_kernel(const void* coef, std::size_t n,
                                                                    std::uint64_t prefix, std::uint64_t mask,
                                                                    int shift, unsigned long long* histogram) {
  __shared__ unsigned int local[256];
  local[threadIdx.x] = 0;
  __syncthreads();
  for (std::size_t i = thread_index(); i < n; i += thread_stride()) {
    const C2 c = load_coef<Cx>(coef, i);
    if (is_zero<Cx>(c)) continue;
    const double m = norm2<Cx>(c);
    if (m != m) continue;  // NaN is never kept and never counted
    const std::uint64_t bits = static_cast<std::uint64_t>(__double_as_longlong(m));
    if ((bits & mask) == prefix) atomicAdd(&local[(bits >> shift) & 0xff], 1u);
  }
  __syncthreads();
  if (local[threadIdx.x]) atomicAdd(&histogram[threadIdx.x], static_cast<unsigned long long>(local[threadIdx.x]));
}

template <bool Cx>
__global__ void __launch_bounds__(kThreads) cut_kernel(void* coef, std::size_t n, int mode, int bin, double value,
                                                        LayerCounters* counters) {
  Tally tally;
  for (std::size_t i = thread_index(); i < n; i += thread_stride()) {
    const C2 c = load_coef<Cx>(coef, i);
    if (is_zero<Cx>(c)) continue;
    const double m = norm2<Cx>(c);
    bool keep;
    switch (mode) {
      case 0:
        keep = static_cast<int>((static_cast<std::uint64_t>(__double_as_longlong(m)) >> 52) & 0x7ff) >= bin;
        break;
      case 1:
        keep = m >= value;
        break;
      case 2:
        keep = m > value;
        break;
      default:
        keep = false;
    }
    if (keep) continue;
    ++tally.dropped;
    tally.discarded += m;
    ++tally.hole_change;
    store_coef<Cx>(coef, i, C2{0.0, 0.0});
  }
  tally.flush(counters);
}

template <bool Cx>
__global__ void __launch_bounds__(kThreads) live_flags_kernel(const void* coef, std::size_t n, std::uint32_t* flags) {
  for (std::size_t i = thread_index(); i < n; i += thread_stride()) {
    flags[i] = is_zero<Cx>(load_coef<Cx>(coef, i)) ? 0u : 1u;
  }
}

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) compact_kernel(const Key<W>* keys, const void* coef, std::size_t n,
                                                            const std::uint32_t* positions, Key<W>* out_keys,
                                                            void* out_coef) {
  for (std::size_t i = thread_index(); i < n; i += thread_stride()) {
    const C2 c = load_coef<Cx>(coef, i);
    if (is_zero<Cx>(c)) continue;
    const std::size_t at = positions[i];
    out_keys[at] = keys[i];
    store_coef<Cx>(out_coef, at, c);
  }
}

/// The download's grouping, step 1: bucket[i] = the host's bucket hash of key i (rows[j]: row j of its
/// GF(2) matrix, j < bits, staged in shared memory), or 2^bits for a hole; index[i] = i.
template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads)
    bucket_of_kernel(const Key<W>* keys, const void* coef, std::size_t n, const Key<W>* rows, int bits,
                     std::uint32_t* bucket, std::uint32_t* index) {
  __shared__ Key<W> row[32];
  for (int j = threadIdx.x; j < bits; j += blockDim.x) row[j] = rows[j];
  __syncthreads();
  for (std::size_t i = thread_index(); i < n; i += thread_stride()) {
    index[i] = static_cast<std::uint32_t>(i);
    if (is_zero<Cx>(load_coef<Cx>(coef, i))) {
      bucket[i] = std::uint32_t{1} << bits;
      continue;
    }
    const Key<W> key = keys[i];
    std::uint32_t h = 0;
    for (int j = 0; j < bits; ++j) {
      int parity = 0;
#pragma unroll
      for (int w = 0; w < W; ++w) parity += __popcll((row[j].x[w] & key.x[w]) ^ (row[j].z[w] & key.z[w]));
      h |= static_cast<std::uint32_t>(parity & 1) << j;
    }
    bucket[i] = h;
  }
}

/// Step 3 (after the pairs are sorted by bucket): out[k] = term index[k], for k < n.
template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads)
    gather_kernel(const Key<W>* keys, const void* coef, const std::uint32_t* index, std::size_t n,
                  Key<W>* out_keys, void* out_coef) {
  for (std::size_t k = thread_index(); k < n; k += thread_stride()) {
    const std::size_t i = index[k];
    out_keys[k] = keys[i];
    store_coef<Cx>(out_coef, k, load_coef<Cx>(coef, i));
  }
}

/// In-place compaction, step 1: flags[i] = 1 for the holes among the first `live` terms and for the
/// live terms after them (there are as many of one as of the other).
template <bool Cx>
__global__ void __launch_bounds__(kThreads) misplaced_flags_kernel(const void* coef, std::size_t live, std::size_t n,
                                                                    std::uint32_t* flags) {
  for (std::size_t i = thread_index(); i < n; i += thread_stride()) {
    const bool zero = is_zero<Cx>(load_coef<Cx>(coef, i));
    flags[i] = (i < live ? zero : !zero) ? 1u : 0u;
  }
}

/// Step 2 (after an exclusive scan of the flags into ranks): holes[rank] = index of each hole below `live`.
template <bool Cx>
__global__ void __launch_bounds__(kThreads) hole_list_kernel(const void* coef, std::size_t live,
                                                              const std::uint32_t* ranks, std::uint32_t* holes) {
  for (std::size_t i = thread_index(); i < live; i += thread_stride()) {
    if (is_zero<Cx>(load_coef<Cx>(coef, i))) holes[ranks[i]] = static_cast<std::uint32_t>(i);
  }
}

/// Step 3: the k-th live term past `live` moves into the k-th hole below it (ranks[live] = holes below).
template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) fill_holes_kernel(Key<W>* keys, void* coef, std::size_t live,
                                                               std::size_t n, const std::uint32_t* ranks,
                                                               const std::uint32_t* holes) {
  const std::uint32_t below = ranks[live];
  for (std::size_t j = live + thread_index(); j < n; j += thread_stride()) {
    const C2 c = load_coef<Cx>(coef, j);
    if (is_zero<Cx>(c)) continue;
    const std::size_t to = holes[ranks[j] - below];
    keys[to] = keys[j];
    store_coef<Cx>(coef, to, c);
  }
}

}  // namespace
}  // namespace paulistrings::gpu::kernels
