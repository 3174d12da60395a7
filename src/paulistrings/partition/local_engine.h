#pragma once
// partition_detail::LocalEngine: what one partition of a partitioned run does to its own share of the
// sum, behind one interface that every engine implements whole, so the partition driver
// (partitioned_propagate.inl) runs the CPU engine (cpu_local_engine.h) and the GPU engine
// (gpu_local_engine.h, a gpu::DeviceSum on one device) alike. What only some engines can do is a
// capability, an interface of its own that the engine's type inherits and the driver looks up once:
//  - BucketedLayout: rows laid out by bucket of a bucket count the partitions agree on (the CPU engine);
//  - DeviceExchange: rows exchanged in device memory — addresses between partitions of one process,
//    received straight into device buffers over NCCL (the GPU engine).
//
// Per layer the driver calls apply_layer (a local layer) or apply_and_export (a remote one: the channel
// without the per-term test, then the export, fused where the engine can), merge_rows after the
// exchange, apply_term_truncation after that (or, by remote_plan, export_orbit_members and append_rows
// first, then apply_and_export_final and append_rows), and for a truncation across partitions the histogram and
// cut calls (the counts are all-reduced between them). Buffers are opaque bytes to the driver: the CPU
// engine sends its rows laid out by bucket (BucketedView: the partitions agree on the bucket count, so
// the receiver merges bucket by bucket without hashing), the GPU engine n keys then n coefficients;
// every rank of a run uses the same engine (part of the shape check).

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/partition/partition_rows.h"
#include "paulistrings/partition/transport.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings::partition_detail {

/// One export buffer (the engine's format) and the number of rows it holds.
struct ExportedRows {
  std::span<const std::byte> bytes;
  std::uint64_t rows = 0;
};

/// How the rows of a remote layer meet on the receiver (LocalEngine::remote_plan; every rank computes the
/// same plan from the table and the rows).
enum class RemotePlan : std::uint8_t {
  /// Outputs exported without the per-term test; the receiver adds them to its terms (equal keys sum),
  /// then tests every term.
  merge,
  /// Outputs final where computed (a permutation: no two inputs reach one key), tested before they
  /// leave; the receiver appends them (no key index).
  append,
  /// A general table: every orbit's members first move to one partition (an exchange of inputs), so
  /// each output is computed once, whole; then as `append`. Chosen by the driver only for sums large
  /// enough to pay for the second exchange (PartitionOptions::route_orbits_from), else `merge`.
  route_orbits,
};

/// The engine a partition runs (ranks compare it: their buffers must have one layout).
enum class LocalEngineKind : std::uint8_t { cpu, gpu };

template <int W, Coefficient C>
class LocalEngine {
 public:
  virtual ~LocalEngine() = default;
  virtual LocalEngineKind kind() const = 0;
  virtual std::size_t size() const = 0;
  virtual double apply_layer(const PreparedChannel<W>& table, const Truncation& truncation) = 0;
  virtual LayerPassResult finalize_layer(const Truncation& truncation) = 0;
  virtual double apply_term_truncation(const Truncation& truncation) = 0;
  /// Moves out every term whose partition differs from `self`: one buffer per entry of `offsets`,
  /// holding the terms of partition self ⊕ offsets[k]. The buffers belong to the engine and stay
  /// unchanged until its next export (partitions of one process read them in place).
  virtual std::vector<ExportedRows> export_rows(const PartitionRows& rows, std::uint32_t self,
                                                std::span<const std::uint32_t> offsets) = 0;
  /// A remote layer's first half: the channel without the per-term test, then export_rows, fused where
  /// the engine can (outputs of a remote delta go straight to the export, never into the store).
  virtual std::vector<ExportedRows> apply_and_export(const PreparedChannel<W>& table, const PartitionRows& rows,
                                                     std::uint32_t self, std::span<const std::uint32_t> offsets) = 0;
  /// The plan this engine runs for this remote layer (RemotePlan; the driver may still choose merge).
  virtual RemotePlan remote_plan(const PreparedChannel<W>& table, const PartitionRows& rows,
                                 std::span<const std::uint32_t> offsets) const = 0;
  /// route_orbits, first step: moves out the terms whose orbit belongs to partner self ⊕ offsets[k]
  /// (buffers as export_rows). The bucket count is agreed before it and kept until the final step.
  virtual std::vector<ExportedRows> export_orbit_members(const PreparedChannel<W>& table, const PartitionRows& rows,
                                                         std::uint32_t self,
                                                         std::span<const std::uint32_t> offsets) = 0;
  /// append and route_orbits: the layer with the per-term test on every output, the outputs owned by
  /// partner self ⊕ offsets[k] exported; `discarded` gets the Σ|c|² the test dropped.
  virtual std::vector<ExportedRows> apply_and_export_final(const PreparedChannel<W>& table,
                                                           const PartitionRows& rows, std::uint32_t self,
                                                           std::span<const std::uint32_t> offsets,
                                                           const Truncation& truncation, double& discarded) = 0;
  /// Appends received rows whose keys this engine does not hold (append and route_orbits); `refine`: the
  /// bucket count may grow afterwards (BucketedLayout engines; false between the two steps of
  /// route_orbits, whose final export is laid out by the agreed count).
  virtual void append_rows(std::span<const std::span<const std::byte>> buffers, bool refine) = 0;
  /// Adds received buffers (equal keys sum).
  virtual void merge_rows(std::span<const std::span<const std::byte>> buffers) = 0;
  /// merge_rows then apply_term_truncation, fused where the engine can (the CPU engine tests each bucket
  /// right after its merge). Returns the Σ|c|² the test removed.
  virtual double merge_rows_and_test(std::span<const std::span<const std::byte>> buffers,
                                     const Truncation& truncation) = 0;
  /// counts (2048) = live terms by the exponent of |c|².
  virtual void exponent_histogram(std::span<std::uint64_t> counts) = 0;
  virtual double drop_below_exponent(int bin) = 0;
  /// counts (256) = live non-NaN terms whose |c|² bits match prefix on mask, by the digit at shift.
  /// A radix select calls it with growing masks (mask 0 first).
  virtual void digit_histogram(std::uint64_t prefix, std::uint64_t mask, int shift,
                               std::span<std::uint64_t> counts) = 0;
  /// Keeps |c|² ≥ value (keep_equal) or > value; NaN never kept.
  virtual double drop_below(double value, bool keep_equal) = 0;
  /// Writes the share back (canonical order).
  virtual void export_to(PauliSum<W, C>& share) = 0;
};

/// Capability of a bucketed engine (the CPU engine): exported rows are laid out by bucket, so the
/// partitions agree on the bucket count (the largest) before an export and the receiver merges bucket by
/// bucket.
template <int W>
class BucketedLayout {
 public:
  virtual ~BucketedLayout() = default;
  /// The bucket count is 2^bucket_bits(); refine_to grows it to at least 2^bits.
  virtual int bucket_bits() const = 0;
  virtual void refine_to(int bits) = 0;
  /// Whether apply_and_export fuses this remote layer with its export: then the partitions agree on the
  /// bucket count before the layer (the store does not grow between the layer and its export), not
  /// between two steps.
  virtual bool fuses_with_export(const PreparedChannel<W>& table, const PartitionRows& rows,
                                 std::span<const std::uint32_t> offsets) const = 0;
};

/// Capability of a device engine (the GPU engine): partitions of one process exchange device addresses
/// instead of bytes (an export stays on the device, valid until the engine's next export, and the merge
/// reads the partners' exports), and rows can arrive straight into device buffers (NCCL).
template <int W, Coefficient C>
class DeviceExchange {
 public:
  virtual ~DeviceExchange() = default;
  virtual std::vector<gpu::PeerRows> export_rows_on_device(const PartitionRows& rows, std::uint32_t self,
                                                           std::span<const std::uint32_t> offsets) = 0;
  /// apply_and_export, export_orbit_members and apply_and_export_final with the export left on the device.
  virtual std::vector<gpu::PeerRows> apply_and_export_on_device(const PreparedChannel<W>& table,
                                                                const PartitionRows& rows, std::uint32_t self,
                                                                std::span<const std::uint32_t> offsets) = 0;
  virtual std::vector<gpu::PeerRows> export_orbit_members_on_device(const PreparedChannel<W>& table,
                                                                    const PartitionRows& rows, std::uint32_t self,
                                                                    std::span<const std::uint32_t> offsets) = 0;
  virtual std::vector<gpu::PeerRows> apply_and_export_final_on_device(const PreparedChannel<W>& table,
                                                                      const PartitionRows& rows, std::uint32_t self,
                                                                      std::span<const std::uint32_t> offsets,
                                                                      const Truncation& truncation,
                                                                      double& discarded) = 0;
  /// Received device rows merged (gpu::RowArrival::merge) or appended (append and route_orbits).
  virtual void merge_rows_on_device(std::span<const gpu::PeerRows> sources, gpu::RowArrival arrival) = 0;
  /// Rows that arrive on the device (NCCL): room first (may throw, nothing changed), then the merge or
  /// append, where receive(k, keys, coefficients, stream) enqueues batch k's arrival.
  virtual void prepare_merge(std::span<const std::uint64_t> counts, gpu::RowArrival arrival) = 0;
  virtual void merge_received(std::span<const std::uint64_t> counts,
                              const std::function<void(std::size_t, void*, void*, void*)>& receive,
                              gpu::RowArrival arrival) = 0;
};

/// The calls both engines answer under the same names.
template <int W, Coefficient C, class Engine>
class ForwardingEngine : public LocalEngine<W, C> {
 public:
  template <class... Args>
  explicit ForwardingEngine(Args&&... args) : engine_(std::forward<Args>(args)...) {}
  std::size_t size() const override { return engine_.size(); }
  double apply_layer(const PreparedChannel<W>& table, const Truncation& truncation) override {
    return engine_.apply_layer(table, truncation);
  }
  LayerPassResult finalize_layer(const Truncation& truncation) override { return engine_.finalize_layer(truncation); }
  double apply_term_truncation(const Truncation& truncation) override {
    return engine_.apply_term_truncation(truncation);
  }

 protected:
  Engine engine_;
};

}  // namespace paulistrings::partition_detail
