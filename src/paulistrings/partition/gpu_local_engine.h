#pragma once
// GpuLocalEngine: a partition's share on one CUDA device (gpu::DeviceSum) behind LocalEngine, with the
// DeviceExchange capability: exports left on the device for partitions of one process, rows received into
// device buffers over NCCL, plain host rows (row_buffers.h) otherwise.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/partition/local_engine.h"
#include "paulistrings/partition/row_buffers.h"

namespace paulistrings::partition_detail {

template <int W, Coefficient C>
class GpuLocalEngine final : public ForwardingEngine<W, C, gpu::DeviceSum<W, C>>, public DeviceExchange<W, C> {
 public:
  GpuLocalEngine(const PauliSum<W, C>& share, int device, const GpuEngineOptions& options = {})
      : ForwardingEngine<W, C, gpu::DeviceSum<W, C>>(share, device, options) {}
  LocalEngineKind kind() const override { return LocalEngineKind::gpu; }
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
  double merge_rows_and_test(std::span<const std::span<const std::byte>> buffers,
                             const Truncation& truncation) override {
    engine_.merge_partition_rows(buffers);
    return engine_.apply_term_truncation(truncation);
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
