#pragma once
// The GPU engine's kernels and the definitions of Launch<W, Cx>'s members (see kernels.h for the data
// layout and device_sum_layers.cc for the pipeline). Included only by kernels_instance.cu, which nvcc
// compiles once for each (width, coefficient type): ten translation units built in parallel instead of
// one, the longest edge of the build (docs/PERFORMANCE.md, "2026-12-02 — device build split; GPU general-table fusion A/B with repeats; key equality without memcmp", "Device build").
// The kernels live in five parts by family (kernels_device.cuh: the helpers they share; kernels_local.cuh,
// kernels_rotation.cuh, kernels_passes.cuh, kernels_partition.cuh), included below; everything but
// Launch's members is in an anonymous namespace, so each unit has its own copy.
//
// Compiled by nvcc for sm_90 (+ PTX) with -fmad=false, so every product and sum rounds exactly as the
// CPU engines' do (truncation decisions on a threshold then agree with the CPU reference).
//
// One layer kind per kernel family:
//  - rescale / permute: one thread per term, in place (a key-preserving layer rewrites only the
//    coefficient, a permutation rewrites the support bits of the key too; keys stay unique);
//  - join (general tables and rotations): a hash join on the orbit representative. insert puts
//    every term whose pattern can move into a slot keyed by its representative (terms that only
//    rescale are done in place there) and counts groups and members, which bound the new keys
//    (groups · orbit − members); write updates present members in place and appends the new keys
//    at a cursor (one atomic per warp). Orbits never share outputs, so no sort and no merge of
//    duplicate keys is needed. Only when the bound does not fit in memory does a count pass give the
//    exact number first.

#include <string>

#include "paulistrings/gpu/cuda_check.h"
#include "paulistrings/gpu/kernels.h"
#include "paulistrings/gpu/kernels_device.cuh"
#include "paulistrings/gpu/kernels_local.cuh"
#include "paulistrings/gpu/kernels_rotation.cuh"
#include "paulistrings/gpu/kernels_passes.cuh"
#include "paulistrings/gpu/kernels_partition.cuh"

namespace paulistrings::gpu::kernels {
namespace {

/// After a launch: a launch that failed (bad configuration, no device, an earlier sticky error) throws
/// GpuError, as a failed CUDA call does (cuda_check.h).
void check_launch(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) check(status, std::string("the launch of ").append(what).c_str());
}

}  // namespace

template <int W, bool Cx>
void Launch<W, Cx>::rescale(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream) {
  if (args.size == 0) return;
  rescale_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args, table);
  check_launch("rescale");
}
template <int W, bool Cx>
void Launch<W, Cx>::permute(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream) {
  if (args.size == 0) return;
  permute_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args, table);
  check_launch("permute");
}
template <int W, bool Cx>
void Launch<W, Cx>::join_insert_local(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream) {
  if (args.size == 0) return;
  join_insert_local_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args, table);
  check_launch("join_insert_local");
}
template <int W, bool Cx, bool Write, bool Route>
void launch_join_local(const LayerArgs<W>& args, const LocalTable& table, const JoinExport<W>& e,
                       cudaStream_t stream) {
  // One launch bound for every group count the insert can have made (the kernel reads the count).
  const unsigned grid = grid_for(args.size);
  switch (table.orbit_size) {
    case 1:
      join_local_kernel<W, Cx, Write, 1, Route><<<grid, kThreads, 0, stream>>>(args, table, e);
      break;
    case 2:
      join_local_kernel<W, Cx, Write, 2, Route><<<grid, kThreads, 0, stream>>>(args, table, e);
      break;
    case 4:
      join_local_kernel<W, Cx, Write, 4, Route><<<grid, kThreads, 0, stream>>>(args, table, e);
      break;
    case 8:
      join_local_kernel<W, Cx, Write, 8, Route><<<grid, kThreads, 0, stream>>>(args, table, e);
      break;
    default:
      join_local_kernel<W, Cx, Write, 16, Route><<<grid, kThreads, 0, stream>>>(args, table, e);
  }
  check_launch(Write ? (Route ? "join_write_local (export)" : "join_write_local")
                     : (Route ? "join_count_local (export)" : "join_count_local"));
}
template <int W, bool Cx>
void Launch<W, Cx>::join_count_local(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream) {
  if (args.size == 0) return;
  launch_join_local<W, Cx, false, false>(args, table, JoinExport<W>{}, stream);
}
template <int W, bool Cx>
void Launch<W, Cx>::join_write_local(const LayerArgs<W>& args, const LocalTable& table, cudaStream_t stream) {
  if (args.size == 0) return;
  launch_join_local<W, Cx, true, false>(args, table, JoinExport<W>{}, stream);
}
template <int W, bool Cx>
void Launch<W, Cx>::join_count_local_export(const LayerArgs<W>& args, const LocalTable& table,
                                            const JoinExport<W>& e, cudaStream_t stream) {
  if (args.size == 0) return;
  launch_join_local<W, Cx, false, true>(args, table, e, stream);
}
template <int W, bool Cx>
void Launch<W, Cx>::join_write_local_export(const LayerArgs<W>& args, const LocalTable& table,
                                            const JoinExport<W>& e, cudaStream_t stream) {
  if (args.size == 0) return;
  launch_join_local<W, Cx, true, true>(args, table, e, stream);
}
template <int W, bool Cx>
void Launch<W, Cx>::join_insert_rotation(const LayerArgs<W>& args, const RotationTable<W>& table,
                                         cudaStream_t stream) {
  if (args.size == 0) return;
  join_insert_rotation_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args, table);
  check_launch("join_insert_rotation");
}
template <int W, bool Cx>
void Launch<W, Cx>::join_count_rotation(const LayerArgs<W>& args, const RotationTable<W>& table,
                                        cudaStream_t stream) {
  if (args.size == 0) return;
  join_rotation_kernel<W, Cx, false><<<grid_for(args.size), kThreads, 0, stream>>>(args, table);
  check_launch("join_count_rotation");
}
template <int W, bool Cx>
void Launch<W, Cx>::join_write_rotation(const LayerArgs<W>& args, const RotationTable<W>& table,
                                        cudaStream_t stream) {
  if (args.size == 0) return;
  join_rotation_kernel<W, Cx, true><<<grid_for(args.size), kThreads, 0, stream>>>(args, table);
  check_launch("join_write_rotation");
}
template <int W, bool Cx>
void Launch<W, Cx>::join_insert_block(const LayerArgs<W>& args, const RotationBlock<W>& block,
                                      cudaStream_t stream) {
  if (args.size == 0) return;
  join_insert_block_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args, block);
  check_launch("join_insert_block");
}
template <int W, bool Cx>
void Launch<W, Cx>::join_write_block(const LayerArgs<W>& args, const RotationBlock<W>& block,
                                     cudaStream_t stream) {
  if (args.size == 0) return;
  const unsigned grid = grid_for(args.size);
  switch (block.rotations) {
    case 2:
      join_block_kernel<W, Cx, 2><<<grid, kThreads, 0, stream>>>(args, block);
      break;
    case 3:
      join_block_kernel<W, Cx, 3><<<grid, kThreads, 0, stream>>>(args, block);
      break;
    default:
      join_block_kernel<W, Cx, 4><<<grid, kThreads, 0, stream>>>(args, block);
  }
  check_launch("join_write_block");
}
template <int W, bool Cx>
void Launch<W, Cx>::export_count(const LayerArgs<W>& args, const PartitionSplit<W>& split,
                                 cudaStream_t stream) {
  if (args.size == 0) return;
  export_count_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args, split);
  check_launch("export_count");
}
template <int W, bool Cx>
void Launch<W, Cx>::export_write(const LayerArgs<W>& args, const PartitionSplit<W>& split, Key<W>* out_keys,
                                 void* out_coef, cudaStream_t stream) {
  if (args.size == 0) return;
  export_write_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args, split, out_keys, out_coef);
  check_launch("export_write");
}
template <int W, bool Cx>
void Launch<W, Cx>::key_index(const LayerArgs<W>& args, cudaStream_t stream) {
  if (args.size == 0) return;
  key_index_kernel<W><<<grid_for(args.size), kThreads, 0, stream>>>(args);
  check_launch("key_index");
}
template <int W, bool Cx>
void Launch<W, Cx>::appended_rows(const LayerArgs<W>& args, std::size_t first, std::size_t rows,
                                  unsigned long long* support, cudaStream_t stream) {
  if (rows == 0) return;
  appended_rows_kernel<W, Cx><<<grid_for(rows), kThreads, 0, stream>>>(args, first, rows, support);
  check_launch("appended_rows");
}

template <int W, bool Cx>
void Launch<W, Cx>::merge_rows(const LayerArgs<W>& args, const Key<W>* row_keys, const void* row_coef,
                               std::size_t rows, unsigned long long* support, cudaStream_t stream) {
  if (rows == 0) return;
  merge_rows_kernel<W, Cx><<<grid_for(rows), kThreads, 0, stream>>>(args, row_keys, row_coef, rows, support);
  check_launch("merge_rows");
}
template <int W, bool Cx>
void Launch<W, Cx>::term_test(const LayerArgs<W>& args, cudaStream_t stream) {
  if (args.size == 0) return;
  term_test_kernel<W, Cx><<<grid_for(args.size), kThreads, 0, stream>>>(args);
  check_launch("term_test");
}
template <int W, bool Cx>
void Launch<W, Cx>::exponent_histogram(const void* coef, std::size_t size, unsigned long long* histogram,
                                       cudaStream_t stream) {
  check(cudaMemsetAsync(histogram, 0, 2048 * sizeof(unsigned long long), stream), "memset histogram");
  if (size == 0) return;
  exponent_histogram_kernel<Cx><<<grid_for(size), kThreads, 0, stream>>>(coef, size, histogram);
  check_launch("exponent_histogram");
}
template <int W, bool Cx>
void Launch<W, Cx>::digit_histogram(const void* coef, std::size_t size, std::uint64_t prefix,
                                    std::uint64_t prefix_mask, int shift, unsigned long long* histogram,
                                    cudaStream_t stream) {
  check(cudaMemsetAsync(histogram, 0, 256 * sizeof(unsigned long long), stream), "memset histogram");
  if (size == 0) return;
  digit_histogram_kernel<Cx><<<grid_for(size), kThreads, 0, stream>>>(coef, size, prefix, prefix_mask, shift,
                                                                     histogram);
  check_launch("digit_histogram");
}
template <int W, bool Cx>
void Launch<W, Cx>::cut(void* coef, std::size_t size, int mode, int bin, double value,
                        LayerCounters* counters, cudaStream_t stream) {
  if (size == 0) return;
  cut_kernel<Cx><<<grid_for(size), kThreads, 0, stream>>>(coef, size, mode, bin, value, counters);
  check_launch("cut");
}
template <int W, bool Cx>
void Launch<W, Cx>::live_flags(const void* coef, std::size_t size, std::uint32_t* flags, cudaStream_t stream) {
  if (size == 0) return;
  live_flags_kernel<Cx><<<grid_for(size), kThreads, 0, stream>>>(coef, size, flags);
  check_launch("live_flags");
}
template <int W, bool Cx>
void Launch<W, Cx>::compact(const Key<W>* keys, const void* coef, std::size_t size, const std::uint32_t* positions,
                            Key<W>* out_keys, void* out_coef, cudaStream_t stream) {
  if (size == 0) return;
  compact_kernel<W, Cx><<<grid_for(size), kThreads, 0, stream>>>(keys, coef, size, positions, out_keys, out_coef);
  check_launch("compact");
}
template <int W, bool Cx>
void Launch<W, Cx>::bucket_of(const Key<W>* keys, const void* coef, std::size_t size, const Key<W>* rows,
                              int bits, std::uint32_t* bucket, std::uint32_t* index, cudaStream_t stream) {
  if (size == 0) return;
  bucket_of_kernel<W, Cx>
      <<<grid_for(size), kThreads, 0, stream>>>(keys, coef, size, rows, bits, bucket, index);
  check_launch("bucket_of");
}
template <int W, bool Cx>
void Launch<W, Cx>::gather(const Key<W>* keys, const void* coef, const std::uint32_t* index, std::size_t size,
                           Key<W>* out_keys, void* out_coef, cudaStream_t stream) {
  if (size == 0) return;
  gather_kernel<W, Cx><<<grid_for(size), kThreads, 0, stream>>>(keys, coef, index, size, out_keys, out_coef);
  check_launch("gather");
}
template <int W, bool Cx>
void Launch<W, Cx>::misplaced_flags(const void* coef, std::size_t live, std::size_t size,
                                    std::uint32_t* flags, cudaStream_t stream) {
  if (size == 0) return;
  misplaced_flags_kernel<Cx><<<grid_for(size), kThreads, 0, stream>>>(coef, live, size, flags);
  check_launch("misplaced_flags");
}
template <int W, bool Cx>
void Launch<W, Cx>::fill_holes(Key<W>* keys, void* coef, std::size_t live, std::size_t size,
                               const std::uint32_t* ranks, std::uint32_t* holes, cudaStream_t stream) {
  if (live >= size) return;
  if (live > 0) hole_list_kernel<Cx><<<grid_for(live), kThreads, 0, stream>>>(coef, live, ranks, holes);
  fill_holes_kernel<W, Cx><<<grid_for(size - live), kThreads, 0, stream>>>(keys, coef, live, size, ranks, holes);
  check_launch("fill_holes");
}
template <int W, bool Cx>
void Launch<W, Cx>::remote_rotation_count(const LayerArgs<W>& args, const RotationTable<W>& table,
                                          unsigned long long* cursor, cudaStream_t stream) {
  if (args.size == 0) return;
  remote_rotation_kernel<W, Cx, false><<<grid_for(args.size), kThreads, 0, stream>>>(args, table, cursor, nullptr,
                                                                                      nullptr);
  check_launch("remote_rotation_count");
}
template <int W, bool Cx>
void Launch<W, Cx>::remote_rotation_write(const LayerArgs<W>& args, const RotationTable<W>& table,
                                          unsigned long long* cursor, Key<W>* out_keys, void* out_coef,
                                          cudaStream_t stream) {
  if (args.size == 0) return;
  remote_rotation_kernel<W, Cx, true><<<grid_for(args.size), kThreads, 0, stream>>>(args, table, cursor, out_keys,
                                                                                     out_coef);
  check_launch("remote_rotation_write");
}
}  // namespace paulistrings::gpu::kernels
