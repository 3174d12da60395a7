#pragma once
// Kernels of partitioned runs: the export of rows other partitions own, the key index and merge of
// received rows, the appended rows, and the per-term test of a remote layer's merged coefficients.
// Part of kernels.cuh, which includes it after kernels_device.cuh; not a header of its own.

namespace paulistrings::gpu::kernels {
namespace {

// ---- partitioned runs: export of other partitions' terms, merge of received rows ----

template <int W>
__device__ __forceinline__ std::uint32_t part_of(const Key<W>& k, const Key<W>* rows, int bits) {
  std::uint32_t p = 0;
  for (int j = 0; j < bits; ++j) {
    std::uint64_t acc = 0;
#pragma unroll
    for (int w = 0; w < W; ++w) acc ^= (rows[j].x[w] & k.x[w]) ^ (rows[j].z[w] & k.z[w]);
    p |= static_cast<std::uint32_t>(__popcll(acc) & 1) << j;
  }
  return p;
}

/// Export slot of term i (-1: stays; `split.slots`: a stray of no listed offset).
template <int W, bool Cx>
__device__ __forceinline__ int slot_of(const LayerArgs<W>& a, const PartitionSplit<W>& split, std::size_t i) {
  if (is_zero<Cx>(load_coef<Cx>(a.coef, i))) return -1;
  if (split.by_pattern) return split.pattern_slot[pattern_at(a.keys, i, split.support_size, split.qubit[0], split.qubit[1])];
  const std::uint32_t offset = part_of(a.keys[i], split.rows, split.bits) ^ split.self;
  if (offset == 0) return -1;
  for (int k = 0; k < split.slots; ++k) {
    if (split.offsets[k] == offset) return k;
  }
  return split.slots;
}

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) export_count_kernel(LayerArgs<W> a, PartitionSplit<W> split) {
  __shared__ unsigned int count[kMaxExportSlots + 1];
  if (threadIdx.x <= kMaxExportSlots) count[threadIdx.x] = 0;
  __syncthreads();
  for (std::size_t i = thread_index(); i < a.size; i += thread_stride()) {
    const int slot = slot_of<W, Cx>(a, split, i);
    if (slot >= 0) atomicAdd(&count[slot], 1u);
  }
  __syncthreads();
  if (threadIdx.x <= static_cast<unsigned>(split.slots) && count[threadIdx.x]) {
    atomicAdd(&split.cursor[threadIdx.x], static_cast<unsigned long long>(count[threadIdx.x]));
  }
}

// Every thread of a block walks the same number of tiles (the block synchronizes per tile).
template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) export_write_kernel(LayerArgs<W> a, PartitionSplit<W> split,
                                                                Key<W>* out_keys, void* out_coef) {
  __shared__ unsigned int count[kMaxExportSlots + 1];
  __shared__ unsigned long long base[kMaxExportSlots + 1];
  Tally tally;
  for (std::size_t tile = static_cast<std::size_t>(blockIdx.x) * blockDim.x; tile < a.size;
       tile += thread_stride()) {
    if (threadIdx.x <= kMaxExportSlots) count[threadIdx.x] = 0;
    __syncthreads();
    const std::size_t i = tile + threadIdx.x;
    const int slot = i < a.size ? slot_of<W, Cx>(a, split, i) : -1;
    const unsigned at = slot >= 0 && slot < split.slots ? atomicAdd(&count[slot], 1u) : 0u;
    __syncthreads();
    if (threadIdx.x < static_cast<unsigned>(split.slots) && count[threadIdx.x]) {
      base[threadIdx.x] = atomicAdd(&split.cursor[threadIdx.x], static_cast<unsigned long long>(count[threadIdx.x]));
    }
    __syncthreads();
    if (slot >= 0 && slot < split.slots) {
      const std::size_t to = base[slot] + at;
      out_keys[to] = a.keys[i];
      store_coef<Cx>(out_coef, to, load_coef<Cx>(a.coef, i));
      store_coef<Cx>(a.coef, i, C2{0.0, 0.0});
      ++tally.hole_change;
    }
    __syncthreads();
  }
  tally.flush(a.counters);
}

template <int W>
__global__ void __launch_bounds__(kThreads) key_index_kernel(LayerArgs<W> a) {
  const std::size_t mask = a.table.capacity - 1;
  for (std::size_t i = thread_index(); i < a.size; i += thread_stride()) {
    std::size_t h = static_cast<std::size_t>(key_hash(a.keys[i])) & mask;
    while (atomicCAS(&a.table.owner[h], 0u, static_cast<std::uint32_t>(i + 1)) != 0u) h = (h + 1) & mask;
  }
}

/// ORs this warp's cone words (x | z of the rows its threads read) into support[W]: one atomic a word
/// and warp. Every lane of the warp must call it.
template <int W>
__device__ __forceinline__ void flush_cone(std::uint64_t (&cone)[W], unsigned long long* support) {
#pragma unroll
  for (int w = 0; w < W; ++w) {
    for (int offset = 16; offset > 0; offset >>= 1) cone[w] |= __shfl_down_sync(0xffffffffu, cone[w], offset);
    if ((threadIdx.x & 31) == 0 && cone[w]) atomicOr(&support[w], static_cast<unsigned long long>(cone[w]));
  }
}

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) merge_rows_kernel(LayerArgs<W> a, const Key<W>* row_keys,
                                                              const void* row_coef, std::size_t rows,
                                                              unsigned long long* support) {
  const std::size_t mask = a.table.capacity - 1;
  Tally tally;
  std::uint64_t cone[W] = {};
  for (std::size_t r = thread_index(); r < rows; r += thread_stride()) {
    const Key<W> key = row_keys[r];
#pragma unroll
    for (int w = 0; w < W; ++w) cone[w] |= key.x[w] | key.z[w];
    const C2 c = load_coef<Cx>(row_coef, r);
    std::size_t h = static_cast<std::size_t>(key_hash(key)) & mask;
    std::size_t placed = ~std::size_t{0};  // this row's index once reserved
    while (true) {
      const std::uint32_t owner = *reinterpret_cast<volatile std::uint32_t*>(&a.table.owner[h]);
      if (owner == 0u) {
        // Absent: the row becomes a new term. Its key and value are written before the slot names it,
        // so a thread that reads the slot finds them (no other row of this batch has the same key).
        if (placed == ~std::size_t{0}) {
          placed = a.append_base + atomicAdd(&a.counters->appended, 1ull);
          a.keys[placed] = key;
          store_coef<Cx>(a.coef, placed, c);
          tally.hole_change += is_zero<Cx>(c) ? 1 : 0;
          __threadfence();
        }
        if (atomicCAS(&a.table.owner[h], 0u, static_cast<std::uint32_t>(placed + 1)) == 0u) break;
        continue;  // another new key took the slot: look at it again
      }
      const std::size_t i = owner - 1;
      if (keys_equal(a.keys[i], key)) {
        const C2 old = load_coef<Cx>(a.coef, i);
        const C2 sum = add(old, c);
        store_coef<Cx>(a.coef, i, sum);
        tally.hole_change += static_cast<long long>(is_zero<Cx>(sum)) - static_cast<long long>(is_zero<Cx>(old));
        break;
      }
      h = (h + 1) & mask;
    }
  }
  tally.flush(a.counters);
  flush_cone<W>(cone, support);
}

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) appended_rows_kernel(LayerArgs<W> a, std::size_t first, std::size_t rows,
                                                                 unsigned long long* support) {
  Tally tally;
  std::uint64_t cone[W] = {};
  for (std::size_t r = thread_index(); r < rows; r += thread_stride()) {
    const Key<W>& key = a.keys[first + r];
#pragma unroll
    for (int w = 0; w < W; ++w) cone[w] |= key.x[w] | key.z[w];
    tally.hole_change += is_zero<Cx>(load_coef<Cx>(a.coef, first + r)) ? 1 : 0;
  }
  tally.flush(a.counters);
  flush_cone<W>(cone, support);
}

template <int W, bool Cx>
__global__ void __launch_bounds__(kThreads) term_test_kernel(LayerArgs<W> a) {
  Tally tally;
  for (std::size_t i = thread_index(); i < a.size; i += thread_stride()) {
    const C2 c = load_coef<Cx>(a.coef, i);
    if (is_zero<Cx>(c)) continue;
    const int weight = a.program.uses_weight ? weight_of(a.keys[i]) : 0;
    settle<Cx>(tally, a.program, a.coef, i, true, c, weight);
  }
  tally.flush(a.counters);
}

}  // namespace
}  // namespace paulistrings::gpu::kernels
