#pragma once
// gpu::DeviceSum<W, C>: a Pauli sum resident on one CUDA device, and the GPU engine that propagates
// it layer by layer without leaving the device (docs/design.md §7.3 GPU; the design decisions and
// their measurements: docs/gpu-engine.md).
//
// Layout: unique keys (the bytes of PauliString<W>) and coefficients in two device arrays, in no
// particular order; a zero coefficient is a hole (compacted away when they pile up). Per layer:
//  - key-preserving tables rescale coefficients in place; permutations (Cliffords) rewrite the support
//    bits of each key in place — one pass, no sort, no merge;
//  - rotations and general ≤2-qubit tables run a hash join on the orbit representative (docs/design.md
//    §4.3 orbit grouping): terms of one orbit meet in one slot, present members are updated in place
//    and new output keys are appended at a cursor. There are no buckets: the join table is sized per
//    layer from the term count, so no bucket count has to grow or be agreed.
// The host takes part once per layer for the sizes: the number of appended terms (to grow the arrays)
// and the layer's counters (terms dropped, Σ|c|² discarded) — one 8-byte and one 32-byte read-back.
// Per-term truncation (coeff, weight, and/or) is fused into the layer kernels; topn (radix select on the
// bits of |c|², tie rule of the CPU engines) and approx_topn (exponent histogram) run on the device;
// collapse_sample runs on the host (download, pass, upload).
//
// Limits: 2^32 − 2 stored terms per device (term indices are 32-bit); a layer that needs more device
// memory than is free throws GpuOutOfMemory (naming what it allocated, the bytes, the device's free
// memory and the sum's terms) before it changes the sum, which then still holds the previous layer's
// result, and the device stays usable. Every device allocation goes through one allocator, into which
// tests inject failures (allocation_faults.h). Built without CUDA, or on a machine without a device,
// every constructor throws GpuUnavailable with the reason.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/engine/layer_engine.h"
#include "paulistrings/engine/options.h"
#include "paulistrings/engine/stats.h"
#include "paulistrings/gpu/errors.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings::gpu {

/// True when the library was built with the CUDA engine.
bool built_with_cuda();
/// Number of usable CUDA devices (0 without CUDA, without a driver or without a device).
int device_count();
/// Why device_count() is 0 (empty when it is not).
std::string unavailable_reason();
/// "NVIDIA H200 (sm_90, 139.8 GiB, 132 SMs)"; throws GpuUnavailable for a bad ordinal.
std::string describe_device(int device);

/// Measured copy bandwidth from device `from` to device `to` (bytes per second): `bytes` copied
/// `repeats` times with cudaMemcpyPeerAsync (peer access enabled when the pair supports it, else the
/// driver stages), timed with events after one warm-up copy; `bidirectional` runs both directions at
/// once and reports their sum. The reference the partition exchange is compared with (benchmarks).
struct PeerBandwidth {
  bool peer_access = false;  ///< the pair has direct peer access
  double bytes_per_second = 0.0;
};
PeerBandwidth measure_peer_bandwidth(int from, int to, std::size_t bytes, int repeats = 10,
                                     bool bidirectional = false);

/// Rows one device sum exported for another, left in device memory: `count` keys and `count`
/// coefficients at two device addresses of device `device` (export_partition_rows_on_device).
struct PeerRows {
  int device = -1;
  std::uint64_t count = 0;
  const void* keys = nullptr;
  const void* coefficients = nullptr;
};

/// How received rows meet a sum (DeviceSum::merge_partition_rows).
enum class RowArrival : std::uint8_t {
  /// Equal keys add; the rows are not final (the receiver runs the per-term test after).
  merge,
  /// Keys the sum does not hold, with final coefficients: appended as they are (no key index, no sum,
  /// no test). The sender guarantees both (apply_and_export_final, export_orbit_members).
  append,
};

template <int W, Coefficient C>
class DeviceSum {
 public:
  /// Uploads `host` to device `device`; `options` are the engine's switches (GpuEngineOptions).
  explicit DeviceSum(const PauliSum<W, C>& host, int device = 0, const GpuEngineOptions& options = {});
  ~DeviceSum();
  DeviceSum(DeviceSum&&) noexcept;
  DeviceSum& operator=(DeviceSum&&) noexcept;
  DeviceSum(const DeviceSum&) = delete;
  DeviceSum& operator=(const DeviceSum&) = delete;

  std::size_t size() const;  ///< terms (holes not counted)
  std::size_t num_qubits() const;
  int device() const;
  /// Device bytes held now, and the most held at once since the upload.
  std::size_t device_bytes() const;
  std::size_t peak_device_bytes() const;
  /// Layers skipped because no term lay in their light cone.
  std::size_t skipped_layers() const;
  /// Layers applied inside blocks (apply_block).
  std::size_t block_layers() const;

  /// A host copy of the sum (canonical order), ordered on up to `threads` host threads (0: OpenMP's
  /// default).
  PauliSum<W, C> download(int threads = 0) const;
  void download_to(PauliSum<W, C>& host, int threads = 0) const;

  /// The layer-engine interface of propagate(): one channel applied with the per-term truncation
  /// fused in (returns the Σ|c|² it dropped), then the layer passes.
  double apply_layer(const PreparedChannel<W>& table, const Truncation& truncation);
  LayerPassResult finalize_layer(const Truncation& truncation);
  /// Blocks (BlockEngine, engine/layer_engine.h): takes 2 to 4 consecutive Pauli rotations from the
  /// front of `tables` whose generators are linearly independent, as one join with the semantics of one
  /// apply_layer each (docs/gpu-engine.md, "Blocks of rotations"), when GpuEngineOptions::blocks is on
  /// and every term has passed `truncation`'s per-term test; fills out[i] for each layer taken and
  /// returns how many (0: none, nothing changed).
  std::size_t apply_block(std::span<const PreparedChannel<W>> tables, const Truncation& truncation,
                          std::span<BlockLayer> out);
  /// Waits for the device (the layer calls already do; for timing).
  void synchronize() const;

  // ---- the pieces a partitioned run composes (partition/local_engine.h) ----
  /// Moves every live term whose partition part(key) = R·key (R: `rows`, at most 16) differs from
  /// `self` out of the sum. Returns one buffer per entry of `offsets` (at most 16, distinct, nonzero):
  /// the terms of partition self ⊕ offsets[k], as n keys (PauliString<W> bytes) followed by n
  /// coefficients. A term of a partition that no offset names is a std::logic_error (the sum is left
  /// as it was).
  std::vector<std::vector<std::byte>> export_partition_rows(std::span<const PauliString<W>> rows, std::uint32_t self,
                                                            std::span<const std::uint32_t> offsets);
  /// A remote layer's first half: apply_layer(table, Truncation()) then export_partition_rows(rows, self,
  /// offsets) (or its _on_device form), in one step where they fuse (fuses_with_export) — a rotation
  /// whose generator belongs to the one partner (no orbit meets in this partition: the anticommuting
  /// terms are rescaled in place and their partners written straight into the export, with no join, no
  /// appended terms and no holes), or a general local table (the join routes each new key by its delta:
  /// the leavers go straight into the export, never appended, and no export pass reads the stored
  /// terms). Every live term must belong to `self` (the partition driver's invariant).
  static bool fuses_with_export(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                std::span<const std::uint32_t> offsets);
  std::vector<std::vector<std::byte>> apply_and_export(const PreparedChannel<W>& table,
                                                       std::span<const PauliString<W>> rows, std::uint32_t self,
                                                       std::span<const std::uint32_t> offsets);
  std::vector<PeerRows> apply_and_export_on_device(const PreparedChannel<W>& table,
                                                   std::span<const PauliString<W>> rows, std::uint32_t self,
                                                   std::span<const std::uint32_t> offsets);
  /// Remote layers whose outputs are final where they are computed, so the receiver appends them
  /// (RowArrival::append) and no partner adds to them (partition/local_engine.h, RemotePlan):
  ///  - a permutation table: apply_and_export_final is apply_layer with the per-term test, then the
  ///    export (no two inputs share an image, so a received key meets no key of the receiver's);
  ///  - a general local table whose orbits can be routed (routes_orbits: it fuses with its export and
  ///    every offset in its delta span is named — offsets with 0 closed under ⊕): export_orbit_members
  ///    first moves every live term whose orbit representative (the member whose pattern the join
  ///    keys it by) belongs to partition self ⊕ offsets[k] into buffer k, the partners append them, and
  ///    then every orbit is whole in one partition: apply_and_export_final runs the join with the
  ///    per-term test on every output, the leavers (routed by their delta from the representative)
  ///    tested before they go. Each output is computed once, as by one engine: the single engine's bits.
  /// `discarded` gets the Σ|c|² the test dropped. A table that is neither is a std::logic_error.
  static bool routes_orbits(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                            std::span<const std::uint32_t> offsets);
  std::vector<std::vector<std::byte>> export_orbit_members(const PreparedChannel<W>& table,
                                                           std::span<const PauliString<W>> rows, std::uint32_t self,
                                                           std::span<const std::uint32_t> offsets);
  std::vector<PeerRows> export_orbit_members_on_device(const PreparedChannel<W>& table,
                                                       std::span<const PauliString<W>> rows, std::uint32_t self,
                                                       std::span<const std::uint32_t> offsets);
  std::vector<std::vector<std::byte>> apply_and_export_final(const PreparedChannel<W>& table,
                                                             std::span<const PauliString<W>> rows,
                                                             std::uint32_t self,
                                                             std::span<const std::uint32_t> offsets,
                                                             const Truncation& truncation, double& discarded);
  std::vector<PeerRows> apply_and_export_final_on_device(const PreparedChannel<W>& table,
                                                         std::span<const PauliString<W>> rows, std::uint32_t self,
                                                         std::span<const std::uint32_t> offsets,
                                                         const Truncation& truncation, double& discarded);
  /// Adds terms in export_partition_rows' layout, buffer by buffer (keys distinct within a buffer):
  /// RowArrival::merge — a key already present gets the coefficient added, a new key is appended, no
  /// truncation; RowArrival::append — every row appended (see RowArrival).
  void merge_partition_rows(std::span<const std::span<const std::byte>> buffers,
                            RowArrival arrival = RowArrival::merge);
  /// The same two steps without the host, for sums of one process: the export stays in this sum's
  /// device buffers (valid until its next export), and the merge reads other sums' exports directly
  /// (same device, or a peer with peer access, which the merge enables) or copies them across first.
  std::vector<PeerRows> export_partition_rows_on_device(std::span<const PauliString<W>> rows, std::uint32_t self,
                                                        std::span<const std::uint32_t> offsets);
  void merge_partition_rows(std::span<const PeerRows> sources, RowArrival arrival = RowArrival::merge);
  /// Rows that arrive on the device from elsewhere (NCCL): prepare_partition_merge reserves room for
  /// batches of counts[k] rows (GpuOutOfMemory leaves the sum as it was), then merge_partition_rows
  /// calls receive(k, keys, coefficients, stream) to enqueue batch k's arrival into device buffers on
  /// the sum's CUDA stream (a cudaStream_t) and merges it after. receive runs for every k, also when
  /// counts[k] = 0 (then keys and coefficients may be null): an exchange may send without receiving.
  void prepare_partition_merge(std::span<const std::uint64_t> counts, RowArrival arrival = RowArrival::merge);
  void merge_partition_rows(std::span<const std::uint64_t> counts,
                            const std::function<void(std::size_t, void*, void*, void*)>& receive,
                            RowArrival arrival = RowArrival::merge);
  /// The per-term test of `truncation` over every term; returns the Σ|c|² it dropped.
  double apply_term_truncation(const Truncation& truncation);
  /// counts[b] = live terms whose |c|² has the 11-bit exponent b (counts.size() == 2048).
  void exponent_histogram(std::span<std::uint64_t> counts);
  /// counts[d] = live, non-NaN terms whose |c|² bits match `prefix` on `mask`, by the 8-bit digit at
  /// `shift` (counts.size() == 256).
  void digit_histogram(std::uint64_t prefix, std::uint64_t mask, int shift, std::span<std::uint64_t> counts);
  /// Drops the live terms whose |c|² exponent is below `bin`; returns the Σ|c|² dropped.
  double drop_below_exponent(int bin);
  /// Keeps the live terms with |c|² ≥ value (keep_equal) or > value, drops the rest (NaN always);
  /// returns the Σ|c|² dropped.
  double drop_below(double value, bool keep_equal);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

static_assert(LayerEngine<DeviceSum<2, double>, 2>);

/// Propagates a resident sum through `circuit` (options.device is ignored: the sum's device is used).
/// GpuOutOfMemory names the layer that could not run; the sum holds the state before it.
template <int W, Coefficient C>
PropagationStats propagate(DeviceSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options = {});

/// A host sum propagated on device options.device (≥ 0): upload, propagate, download into `sum`.
/// Without CUDA it throws GpuUnavailable; GpuOutOfMemory leaves `sum` as it was given.
template <int W, Coefficient C>
PropagationStats propagate_on_device(PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options);

#define PAULISTRINGS_DECLARE_DEVICE_SUM(W, C)                                                     \
  extern template class DeviceSum<W, C>;                                                          \
  extern template PropagationStats propagate<W, C>(DeviceSum<W, C>&, const Circuit&, const PropagateOptions&); \
  extern template PropagationStats propagate_on_device<W, C>(PauliSum<W, C>&, const Circuit&, const PropagateOptions&);
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_DECLARE_DEVICE_SUM)
#undef PAULISTRINGS_DECLARE_DEVICE_SUM

}  // namespace paulistrings::gpu
