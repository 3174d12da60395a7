#pragma once
// CpuLocalEngine: a partition's share on the CPU engine (CpuPartitionEngine) behind LocalEngine, with the
// BucketedLayout capability: exports laid out by bucket of the agreed bucket count (row_buffers.h), remote
// layers fused with their export.

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "paulistrings/cpu/cpu_partition_engine.h"
#include "paulistrings/partition/local_engine.h"
#include "paulistrings/partition/row_buffers.h"

namespace paulistrings::partition_detail {

template <int W, Coefficient C>
class CpuLocalEngine final : public ForwardingEngine<W, C, CpuPartitionEngine<W, C>>, public BucketedLayout<W> {
 public:
  CpuLocalEngine(const PauliSum<W, C>& share, const CpuEngineOptions& options)
      : ForwardingEngine<W, C, CpuPartitionEngine<W, C>>(share, options) {}
  LocalEngineKind kind() const override { return LocalEngineKind::cpu; }
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
      this->apply_layer(table, Truncation());
      return export_rows(rows, self, offsets);
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

}  // namespace paulistrings::partition_detail
