#pragma once
// partition_detail::LocalEngine: what one partition of a partitioned run does to its own share of the
// sum, behind one interface, so the partition driver (partitioned_propagate.inl) runs the CPU engine
// (CpuLocalEngine) and the GPU engine (GpuLocalEngine, a gpu::DeviceSum on one device) alike.
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
#include "paulistrings/cpu/cpu_partition_engine.h"
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

template <int W, Coefficient C>
class LocalEngine {
 public:
  virtual ~LocalEngine() = default;
  /// 0 = CPU engine, 1 = GPU engine (ranks compare it: their buffers must have one layout).
  virtual std::uint64_t kind() const = 0;
  virtual std::size_t size() const = 0;
  virtual double apply_layer(const PreparedChannel<W>& table, const Truncation& truncation) = 0;
  virtual LayerPassResult finalize_layer(const Truncation& truncation) = 0;
  virtual double apply_term_truncation(const Truncation& truncation) = 0;
  /// Moves out every term whose partition differs from `self`: one buffer per entry of `offsets`,
  /// holding the terms of partition self ⊕ offsets[k]. The buffers belong to the engine and stay
  /// unchanged until its next export (partitions of one process read them in place).
  virtual std::vector<ExportedRows> export_rows(const PartitionRows& rows, std::uint32_t self,
                                                std::span<const std::uint32_t> offsets) = 0;
  /// Whether apply_and_export fuses this remote layer with its export on a bucketed engine (the CPU
  /// engine: then the partitions agree on the bucket count before it, not between the two steps; GPU
  /// engines answer false and fuse what they can inside apply_and_export).
  virtual bool fuses_with_export(const PreparedChannel<W>&, const PartitionRows&,
                                 std::span<const std::uint32_t>) const {
    return false;
  }
  /// A remote layer's first half: the channel without the per-term test, then export_rows. An engine
  /// may fuse the two (outputs of a remote delta go straight to the export, never into the store).
  virtual std::vector<ExportedRows> apply_and_export(const PreparedChannel<W>& table, const PartitionRows& rows,
                                                     std::uint32_t self, std::span<const std::uint32_t> offsets) {
    apply_layer(table, Truncation());
    return export_rows(rows, self, offsets);
  }
  /// The plan an engine can run for this remote layer (merge when it has no other).
  virtual RemotePlan remote_plan(const PreparedChannel<W>&, const PartitionRows&,
                                 std::span<const std::uint32_t>) const {
    return RemotePlan::merge;
  }
  /// route_orbits, first step: moves out the terms whose orbit belongs to partner self ⊕ offsets[k]
  /// (buffers as export_rows). The bucket count is agreed before it and kept until the final step.
  virtual std::vector<ExportedRows> export_orbit_members(const PreparedChannel<W>&, const PartitionRows&,
                                                         std::uint32_t, std::span<const std::uint32_t>) {
    throw std::logic_error("this engine does not route orbits");
  }
  /// append and route_orbits: the layer with the per-term test on every output, the outputs owned by
  /// partner self ⊕ offsets[k] exported; `discarded` gets the Σ|c|² the test dropped.
  virtual std::vector<ExportedRows> apply_and_export_final(const PreparedChannel<W>&, const PartitionRows&,
                                                           std::uint32_t, std::span<const std::uint32_t>,
                                                           const Truncation&, double&) {
    throw std::logic_error("this engine does not export final outputs");
  }
  /// Appends received rows whose keys this engine does not hold (append and route_orbits); `refine` as
  /// CpuEngine::append_bucketed.
  virtual void append_rows(std::span<const std::span<const std::byte>>, bool) {
    throw std::logic_error("this engine does not append rows");
  }
  /// Adds received buffers (equal keys sum).
  virtual void merge_rows(std::span<const std::span<const std::byte>> buffers) = 0;
  /// merge_rows then apply_term_truncation, fused where the engine can (the CPU engine tests each bucket
  /// right after its merge). Returns the Σ|c|² the test removed.
  virtual double merge_rows_and_test(std::span<const std::span<const std::byte>> buffers,
                                     const Truncation& truncation) {
    merge_rows(buffers);
    return apply_term_truncation(truncation);
  }
  /// The bucket count 2^bits of a bucketed engine (the CPU engine), 0 otherwise; refine_to grows it to
  /// at least 2^bits (the partitions agree on the largest, so exported rows arrive in the receiver's
  /// bucket layout).
  virtual int bucket_bits() const { return 0; }
  virtual void refine_to(int) {}
  /// GPU engines of one process exchange device addresses instead of bytes: the export stays on the
  /// device (valid until this engine's next export) and the merge reads the partners' exports.
  virtual bool exchanges_on_device() const { return false; }
  virtual std::vector<gpu::PeerRows> export_rows_on_device(const PartitionRows&, std::uint32_t,
                                                           std::span<const std::uint32_t>) {
    throw std::logic_error("this engine exchanges rows through host memory");
  }
  /// apply_and_export with the export left on the device.
  virtual std::vector<gpu::PeerRows> apply_and_export_on_device(const PreparedChannel<W>& table,
                                                                const PartitionRows& rows, std::uint32_t self,
                                                                std::span<const std::uint32_t> offsets) {
    apply_layer(table, Truncation());
    return export_rows_on_device(rows, self, offsets);
  }
  /// Received device rows merged (gpu::RowArrival::merge) or appended (append and route_orbits).
  virtual void merge_rows_on_device(std::span<const gpu::PeerRows>, gpu::RowArrival) {
    throw std::logic_error("this engine exchanges rows through host memory");
  }
  /// export_orbit_members and apply_and_export_final with the export left on the device.
  virtual std::vector<gpu::PeerRows> export_orbit_members_on_device(const PreparedChannel<W>&, const PartitionRows&,
                                                                    std::uint32_t, std::span<const std::uint32_t>) {
    throw std::logic_error("this engine exchanges rows through host memory");
  }
  virtual std::vector<gpu::PeerRows> apply_and_export_final_on_device(const PreparedChannel<W>&, const PartitionRows&,
                                                                      std::uint32_t, std::span<const std::uint32_t>,
                                                                      const Truncation&, double&) {
    throw std::logic_error("this engine exchanges rows through host memory");
  }
  /// Rows that arrive on the device (NCCL): room first (may throw, nothing changed), then the merge or
  /// append, where receive(k, keys, coefficients, stream) enqueues batch k's arrival.
  virtual void prepare_merge(std::span<const std::uint64_t>, gpu::RowArrival) {
    throw std::logic_error("this engine exchanges rows through host memory");
  }
  virtual void merge_received(std::span<const std::uint64_t>,
                              const std::function<void(std::size_t, void*, void*, void*)>&, gpu::RowArrival) {
    throw std::logic_error("this engine exchanges rows through host memory");
  }
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

template <int W, Coefficient C>
constexpr std::size_t kRowBytes = sizeof(PauliString<W>) + sizeof(C);

template <int W, Coefficient C>
void append_rows(std::vector<std::byte>& buffer, std::span<const PauliString<W>> keys,
                 std::span<const C> values) {
  const std::size_t start = buffer.size();
  buffer.resize(start + keys.size() * kRowBytes<W, C>);
  std::byte* out = buffer.data() + start;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::memcpy(out, &keys[i], sizeof(PauliString<W>));
    std::memcpy(out + sizeof(PauliString<W>), &values[i], sizeof(C));
    out += kRowBytes<W, C>;
  }
}

template <int W, Coefficient C>
void read_rows(std::span<const std::byte> buffer, std::vector<PauliString<W>>& keys, std::vector<C>& values) {
  if (buffer.size() % kRowBytes<W, C> != 0) {
    throw std::runtime_error(std::string("partition exchange: received ")
                                 .append(std::to_string(buffer.size()))
                                 .append(" bytes, not a whole number of rows"));
  }
  const std::size_t rows = buffer.size() / kRowBytes<W, C>;
  const std::byte* in = buffer.data();
  for (std::size_t i = 0; i < rows; ++i, in += kRowBytes<W, C>) {
    PauliString<W> key;
    C value;
    std::memcpy(&key, in, sizeof(PauliString<W>));
    std::memcpy(&value, in + sizeof(PauliString<W>), sizeof(C));
    keys.push_back(key);
    values.push_back(value);
  }
}

/// The CPU engine's exchange buffer: rows laid out by bucket of the sender's (agreed) bucket count —
/// a header {tag, bits, rows}, 2^bits + 1 bucket offsets (uint64), the keys, then the coefficients —
/// so the receiver merges bucket by bucket without hashing a row.
inline constexpr std::uint64_t kBucketedRowsTag = 0x7073'726f'7773'0001ULL;
inline constexpr std::size_t kBucketedHeaderWords = 3;

template <int W, Coefficient C>
std::size_t bucketed_bytes(int bits, std::uint64_t rows) {
  return 8 * (kBucketedHeaderWords + (std::size_t{1} << bits) + 1) + rows * kRowBytes<W, C>;
}

/// Writes the header and the offsets of a buffer for `counts` (rows per bucket, 2^bits entries, stride
/// `stride` apart) and returns where its keys and coefficients go.
template <int W, Coefficient C>
GroupDestination write_bucketed_header(std::byte* buffer, int bits, std::uint64_t rows, const std::uint64_t* counts,
                                       std::size_t stride) {
  const std::size_t buckets = std::size_t{1} << bits;
  const std::uint64_t header[kBucketedHeaderWords] = {kBucketedRowsTag, static_cast<std::uint64_t>(bits), rows};
  std::memcpy(buffer, header, sizeof(header));
  std::byte* offsets = buffer + sizeof(header);
  std::uint64_t running = 0;
  for (std::size_t b = 0; b <= buckets; ++b) {
    std::memcpy(offsets + 8 * b, &running, 8);
    if (b < buckets) running += counts[b * stride];
  }
  std::byte* keys = offsets + 8 * (buckets + 1);
  return {keys, keys + rows * sizeof(PauliString<W>)};
}

/// A received buffer read back: the offsets copied out, the rows left in place. Throws
/// std::runtime_error for a buffer that is not one (wrong tag, sizes that do not add up).
template <int W, Coefficient C>
class BucketedView {
 public:
  explicit BucketedView(std::span<const std::byte> buffer) {
    std::uint64_t header[kBucketedHeaderWords] = {};
    if (buffer.size() < sizeof(header)) fail(buffer.size());
    std::memcpy(header, buffer.data(), sizeof(header));
    if (header[0] != kBucketedRowsTag || header[1] > 40) fail(buffer.size());
    const int bits = static_cast<int>(header[1]);
    if (buffer.size() != bucketed_bytes<W, C>(bits, header[2])) fail(buffer.size());
    offsets_.resize((std::size_t{1} << bits) + 1);
    std::memcpy(offsets_.data(), buffer.data() + sizeof(header), 8 * offsets_.size());
    for (std::size_t b = 1; b < offsets_.size(); ++b) {
      if (offsets_[b] < offsets_[b - 1]) fail(buffer.size());
    }
    if (offsets_.front() != 0 || offsets_.back() != header[2]) fail(buffer.size());
    rows_.bits = bits;
    rows_.offsets = offsets_.data();
    rows_.keys = buffer.data() + sizeof(header) + 8 * offsets_.size();
    rows_.coefficients = rows_.keys + header[2] * sizeof(PauliString<W>);
  }
  const BucketedRows& rows() const { return rows_; }

 private:
  [[noreturn]] static void fail(std::size_t bytes) {
    throw std::runtime_error(std::string("partition exchange: a received buffer of ")
                                 .append(std::to_string(bytes))
                                 .append(" bytes is not a bucketed row buffer of this run's width"));
  }
  std::vector<std::uint64_t> offsets_;
  BucketedRows rows_;
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

template <int W, Coefficient C>
class CpuLocalEngine final : public ForwardingEngine<W, C, CpuPartitionEngine<W, C>> {
 public:
  CpuLocalEngine(const PauliSum<W, C>& share, const CpuEngineOptions& options)
      : ForwardingEngine<W, C, CpuPartitionEngine<W, C>>(share, options) {}
  std::uint64_t kind() const override { return 0; }
  std::vector<ExportedRows> export_rows(const PartitionRows& rows, std::uint32_t self,
                                        std::span<const std::uint32_t> offsets) override {
    // Group k = the terms of partner self ⊕ offsets[k]; offset 0 stays; an offset the layer does not
    // name (cannot happen for outputs of its deltas) is an error.
    const auto groups = static_cast<std::uint32_t>(offsets.size());
    const std::vector<std::uint32_t> group_of_offset = groups_by_offset(rows, offsets);
    std::atomic<bool> unnamed{false};
    std::vector<ExportedRows> out;
    engine_.extract_grouped(
        groups,
        [&](const PauliString<W>& key) {
          const std::uint32_t group = group_of_offset[rows.part(key) ^ self];
          if (group <= groups) return group;
          unnamed.store(true, std::memory_order_relaxed);
          return groups;
        },
        [&](std::span<const std::uint64_t> counts) { return place(groups, counts, out); });
    if (unnamed.load()) throw std::logic_error("partition export: a term belongs to a partition no delta names");
    return out;
  }
  /// Every remote layer but the sort-merge formulation's general tables: a rotation whose generator
  /// crosses (CpuEngine::rotate_out), any other table by routing each output by its delta
  /// (CpuEngine::apply_out). The store does not grow between the layer and its export, so the bucket
  /// count is agreed before the layer.
  bool fuses_with_export(const PreparedChannel<W>& table, const PartitionRows&,
                         std::span<const std::uint32_t> offsets) const override {
    return !offsets.empty() && engine_.applies_out(table);
  }
  std::vector<ExportedRows> apply_and_export(const PreparedChannel<W>& table, const PartitionRows& rows,
                                             std::uint32_t self, std::span<const std::uint32_t> offsets) override {
    if (!fuses_with_export(table, rows, offsets)) {
      return LocalEngine<W, C>::apply_and_export(table, rows, self, offsets);
    }
    const auto groups = static_cast<std::uint32_t>(offsets.size());
    std::vector<ExportedRows> out;
    engine_.apply_out(
        table, [&](const PauliString<W>& delta) { return rows.part(delta); }, groups_by_offset(rows, offsets),
        groups, [&](std::span<const std::uint64_t> counts) { return place(groups, counts, out); });
    return out;
  }
  /// append for permutation tables, route_orbits for general tables on the orbit path whose offsets
  /// (with 0) are closed under ⊕ (then every element of the delta span has a named partner).
  RemotePlan remote_plan(const PreparedChannel<W>& table, const PartitionRows& rows,
                         std::span<const std::uint32_t> offsets) const override {
    if (!fuses_with_export(table, rows, offsets) || !engine_.finalizes_out(table)) return RemotePlan::merge;
    if (!engine_.routes_orbits(table)) return RemotePlan::append;
    for (const std::uint32_t a : offsets) {
      for (const std::uint32_t b : offsets) {
        if (a != b && std::find(offsets.begin(), offsets.end(), a ^ b) == offsets.end()) return RemotePlan::merge;
      }
    }
    return RemotePlan::route_orbits;
  }
  std::vector<ExportedRows> export_orbit_members(const PreparedChannel<W>& table, const PartitionRows& rows,
                                                 std::uint32_t, std::span<const std::uint32_t> offsets) override {
    const auto groups = static_cast<std::uint32_t>(offsets.size());
    std::vector<ExportedRows> out;
    engine_.export_orbit_members(
        table, [&](const PauliString<W>& delta) { return rows.part(delta); }, groups_by_offset(rows, offsets),
        groups, [&](std::span<const std::uint64_t> counts) { return place(groups, counts, out); });
    return out;
  }
  std::vector<ExportedRows> apply_and_export_final(const PreparedChannel<W>& table, const PartitionRows& rows,
                                                   std::uint32_t, std::span<const std::uint32_t> offsets,
                                                   const Truncation& truncation, double& discarded) override {
    const auto groups = static_cast<std::uint32_t>(offsets.size());
    std::vector<ExportedRows> out;
    discarded = engine_.apply_out_final(
        table, [&](const PauliString<W>& delta) { return rows.part(delta); }, groups_by_offset(rows, offsets),
        groups, truncation, [&](std::span<const std::uint64_t> counts) { return place(groups, counts, out); });
    return out;
  }
  void append_rows(std::span<const std::span<const std::byte>> buffers, bool refine) override {
    std::vector<BucketedView<W, C>> views;
    engine_.append_bucketed(runs_of(buffers, views), refine);
  }
  void merge_rows(std::span<const std::span<const std::byte>> buffers) override {
    std::vector<BucketedView<W, C>> views;
    engine_.merge_bucketed(runs_of(buffers, views));
  }
  double merge_rows_and_test(std::span<const std::span<const std::byte>> buffers,
                             const Truncation& truncation) override {
    std::vector<BucketedView<W, C>> views;
    return engine_.merge_bucketed_and_test(runs_of(buffers, views), truncation);
  }
  int bucket_bits() const override { return engine_.bucket_bits(); }
  void refine_to(int bits) override { engine_.refine_to(bits); }
  void exponent_histogram(std::span<std::uint64_t> counts) override {
    std::fill(counts.begin(), counts.end(), 0);
    engine_.for_each_term([&](const PauliString<W>&, const C& c) { ++counts[exponent_bin(magnitude_squared(c))]; });
  }
  double drop_below_exponent(int bin) override {
    return engine_.remove_if(
        [bin](const PauliString<W>&, const C& c) { return exponent_bin(magnitude_squared(c)) < bin; });
  }
  void digit_histogram(std::uint64_t prefix, std::uint64_t mask, int shift,
                       std::span<std::uint64_t> counts) override {
    // The candidates of the select are kept between rounds and narrowed, not re-read from the sum.
    if (mask == 0) {
      candidates_.clear();
      candidates_.reserve(engine_.size());
      engine_.for_each_term([&](const PauliString<W>&, const C& c) {
        const double m = magnitude_squared(c);
        if (!std::isnan(m)) candidates_.push_back(std::bit_cast<std::uint64_t>(m));
      });
    } else {
      std::erase_if(candidates_, [&](std::uint64_t v) { return (v & mask) != prefix; });
    }
    std::fill(counts.begin(), counts.end(), 0);
    for (std::uint64_t v : candidates_) ++counts[(v >> shift) & 0xff];
  }
  double drop_below(double value, bool keep_equal) override {
    candidates_ = {};
    return engine_.remove_if([value, keep_equal](const PauliString<W>&, const C& c) {
      const double m = magnitude_squared(c);
      return !(keep_equal ? m >= value : m > value);  // NaN fails both: never kept
    });
  }
  void export_to(PauliSum<W, C>& share) override { engine_.export_to(share); }

 private:
  /// The received buffers read back (the views keep their offsets).
  static std::vector<BucketedRows> runs_of(std::span<const std::span<const std::byte>> buffers,
                                           std::vector<BucketedView<W, C>>& views) {
    views.reserve(buffers.size());
    std::vector<BucketedRows> runs;
    for (std::span<const std::byte> buffer : buffers) runs.push_back(views.emplace_back(buffer).rows());
    return runs;
  }
  /// Export group of each partition offset: k for offsets[k], offsets.size() for 0 (stays), above that
  /// for an offset the layer does not name.
  static std::vector<std::uint32_t> groups_by_offset(const PartitionRows& rows, std::span<const std::uint32_t> offsets) {
    const auto groups = static_cast<std::uint32_t>(offsets.size());
    std::vector<std::uint32_t> group_of_offset(rows.count(), groups + 1);
    group_of_offset[0] = groups;
    for (std::uint32_t k = 0; k < groups; ++k) group_of_offset[offsets[k]] = k;
    return group_of_offset;
  }
  /// The buffers of an export with counts[k · B + b] rows of group k in bucket b: header and offsets
  /// written, `out` set, the places of the rows returned.
  std::vector<GroupDestination> place(std::uint32_t groups, std::span<const std::uint64_t> counts,
                                      std::vector<ExportedRows>& out) {
    const int bits = engine_.bucket_bits();
    const std::size_t buckets = std::size_t{1} << bits;
    buffers_.resize(groups);
    out.assign(groups, {});
    std::vector<GroupDestination> destinations(groups);
    for (std::uint32_t k = 0; k < groups; ++k) {
      std::uint64_t n = 0;
      for (std::size_t b = 0; b < buckets; ++b) n += counts[k * buckets + b];
      std::byte* buffer = buffers_[k].resize(bucketed_bytes<W, C>(bits, n));
      destinations[k] = write_bucketed_header<W, C>(buffer, bits, n, counts.data() + k * buckets, 1);
      out[k] = {buffers_[k].bytes(), n};
    }
    return destinations;
  }

  using ForwardingEngine<W, C, CpuPartitionEngine<W, C>>::engine_;
  std::vector<std::uint64_t> candidates_;
  std::vector<ByteBuffer> buffers_;  // one per partner of the last export
};

template <int W, Coefficient C>
class GpuLocalEngine final : public ForwardingEngine<W, C, gpu::DeviceSum<W, C>> {
 public:
  GpuLocalEngine(const PauliSum<W, C>& share, int device, const GpuEngineOptions& options = {})
      : ForwardingEngine<W, C, gpu::DeviceSum<W, C>>(share, device, options) {}
  std::uint64_t kind() const override { return 1; }
  std::vector<ExportedRows> export_rows(const PartitionRows& rows, std::uint32_t self,
                                        std::span<const std::uint32_t> offsets) override {
    exported_ = engine_.export_partition_rows(rows_of(rows), self, offsets);
    return exported_rows();
  }
  std::vector<ExportedRows> apply_and_export(const PreparedChannel<W>& table, const PartitionRows& rows,
                                             std::uint32_t self, std::span<const std::uint32_t> offsets) override {
    exported_ = engine_.apply_and_export(table, rows_of(rows), self, offsets);
    return exported_rows();
  }
  std::vector<gpu::PeerRows> apply_and_export_on_device(const PreparedChannel<W>& table, const PartitionRows& rows,
                                                        std::uint32_t self,
                                                        std::span<const std::uint32_t> offsets) override {
    return engine_.apply_and_export_on_device(table, rows_of(rows), self, offsets);
  }
  void merge_rows(std::span<const std::span<const std::byte>> buffers) override {
    engine_.merge_partition_rows(buffers);
  }
  /// append for permutation tables, route_orbits for general tables that fuse with their export and
  /// whose offsets (with 0) are closed under ⊕ (gpu::DeviceSum::routes_orbits); merge otherwise.
  RemotePlan remote_plan(const PreparedChannel<W>& table, const PartitionRows& rows,
                         std::span<const std::uint32_t> offsets) const override {
    if (table.form == PreparedChannel<W>::Form::local && table.table_class == TableClass::permutation) {
      return RemotePlan::append;
    }
    return gpu::DeviceSum<W, C>::routes_orbits(table, rows_of(rows), offsets) ? RemotePlan::route_orbits
                                                                              : RemotePlan::merge;
  }
  std::vector<ExportedRows> export_orbit_members(const PreparedChannel<W>& table, const PartitionRows& rows,
                                                 std::uint32_t self, std::span<const std::uint32_t> offsets) override {
    exported_ = engine_.export_orbit_members(table, rows_of(rows), self, offsets);
    return exported_rows();
  }
  std::vector<ExportedRows> apply_and_export_final(const PreparedChannel<W>& table, const PartitionRows& rows,
                                                   std::uint32_t self, std::span<const std::uint32_t> offsets,
                                                   const Truncation& truncation, double& discarded) override {
    exported_ = engine_.apply_and_export_final(table, rows_of(rows), self, offsets, truncation, discarded);
    return exported_rows();
  }
  void append_rows(std::span<const std::span<const std::byte>> buffers, bool) override {
    engine_.merge_partition_rows(buffers, gpu::RowArrival::append);
  }
  std::vector<gpu::PeerRows> export_orbit_members_on_device(const PreparedChannel<W>& table, const PartitionRows& rows,
                                                            std::uint32_t self,
                                                            std::span<const std::uint32_t> offsets) override {
    return engine_.export_orbit_members_on_device(table, rows_of(rows), self, offsets);
  }
  std::vector<gpu::PeerRows> apply_and_export_final_on_device(const PreparedChannel<W>& table,
                                                              const PartitionRows& rows, std::uint32_t self,
                                                              std::span<const std::uint32_t> offsets,
                                                              const Truncation& truncation,
                                                              double& discarded) override {
    return engine_.apply_and_export_final_on_device(table, rows_of(rows), self, offsets, truncation, discarded);
  }
  bool exchanges_on_device() const override { return true; }
  std::vector<gpu::PeerRows> export_rows_on_device(const PartitionRows& rows, std::uint32_t self,
                                                   std::span<const std::uint32_t> offsets) override {
    return engine_.export_partition_rows_on_device(rows_of(rows), self, offsets);
  }
  void merge_rows_on_device(std::span<const gpu::PeerRows> sources, gpu::RowArrival arrival) override {
    engine_.merge_partition_rows(sources, arrival);
  }
  void prepare_merge(std::span<const std::uint64_t> counts, gpu::RowArrival arrival) override {
    engine_.prepare_partition_merge(counts, arrival);
  }
  void merge_received(std::span<const std::uint64_t> counts,
                      const std::function<void(std::size_t, void*, void*, void*)>& receive,
                      gpu::RowArrival arrival) override {
    engine_.merge_partition_rows(counts, receive, arrival);
  }
  void exponent_histogram(std::span<std::uint64_t> counts) override { engine_.exponent_histogram(counts); }
  double drop_below_exponent(int bin) override { return engine_.drop_below_exponent(bin); }
  void digit_histogram(std::uint64_t prefix, std::uint64_t mask, int shift,
                       std::span<std::uint64_t> counts) override {
    engine_.digit_histogram(prefix, mask, shift, counts);
  }
  double drop_below(double value, bool keep_equal) override { return engine_.drop_below(value, keep_equal); }
  void export_to(PauliSum<W, C>& share) override { engine_.download_to(share); }

 private:
  const std::vector<PauliString<W>>& rows_of(const PartitionRows& rows) const {
    if (rows_.empty() && rows.bits() > 0) rows_ = rows.rows_as<W>();
    return rows_;
  }

  std::vector<ExportedRows> exported_rows() const {
    std::vector<ExportedRows> out;
    for (const auto& buffer : exported_) out.push_back({buffer, buffer.size() / kRowBytes<W, C>});
    return out;
  }

  using ForwardingEngine<W, C, gpu::DeviceSum<W, C>>::engine_;
  mutable std::vector<PauliString<W>> rows_;  // the partition rows at this width, made on first use
  std::vector<std::vector<std::byte>> exported_;  // the last host export, kept until the next
};

}  // namespace paulistrings::partition_detail
