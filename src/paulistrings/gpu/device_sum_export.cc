// DeviceSum<W, C>::Impl's exports for partitioned runs (device_sum_impl.h): the terms of other
// partitions moved out, alone, fused with a remote layer (rotations whose generator crosses, general
// tables routed by delta), or by orbit representative (route_orbits' first step); and their download
// or device addresses.

#include "paulistrings/gpu/device_sum_impl.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace paulistrings::gpu {

template <int W, Coefficient C>
auto DeviceSum<W, C>::Impl::export_on_device(std::span<const PauliString<W>> rows, std::uint32_t self,
                                             std::span<const std::uint32_t> offsets,
                                             const PreparedChannel<W>* orbits) -> ExportLayout {
  activate();
  if (rows.size() > 16 || offsets.size() > static_cast<std::size_t>(kernels::kMaxExportSlots)) {
    throw std::invalid_argument("export_partition_rows: at most 16 partition rows and 16 partner offsets");
  }
  const std::size_t slots = offsets.size();
  ExportLayout layout{std::vector<std::size_t>(slots, 0), std::vector<std::size_t>(slots, 0)};
  if (slots == 0) return layout;
  kernels::PartitionSplit<W> split;
  split.bits = static_cast<int>(rows.size());
  split.self = self;
  split.slots = static_cast<int>(slots);
  for (std::size_t k = 0; k < slots; ++k) split.offsets[k] = offsets[k];
  if (orbits != nullptr) {
    const kernels::LocalTable t = local_table(*orbits);
    split.by_pattern = true;
    split.support_size = t.support_size;
    split.qubit[0] = t.qubit[0];
    split.qubit[1] = t.qubit[1];
    for (int s = 0; s < 16; ++s) {
      const std::uint32_t offset = t.join[s] ? row_parities(rows, orbits->pattern_mask(s ^ t.rep[s])) : 0;
      std::int8_t slot = offset == 0 ? std::int8_t{-1} : static_cast<std::int8_t>(slots);
      for (std::size_t k = 0; k < slots; ++k) {
        if (offsets[k] == offset) slot = static_cast<std::int8_t>(k);
      }
      split.pattern_slot[s] = slot;
    }
  }
  if (!rows.empty()) {
    if (split_rows.bytes < rows.size() * sizeof(Key)) allocate(split_rows, 16 * sizeof(Key), "partition rows");
    check(cudaMemcpyAsync(split_rows.ptr, rows.data(), rows.size() * sizeof(Key), cudaMemcpyHostToDevice, stream),
          "upload partition rows");
  }
  split.rows = static_cast<const Key*>(split_rows.ptr);
  split.cursor = histogram();
  check(cudaMemsetAsync(split.cursor, 0, (slots + 1) * sizeof(unsigned long long), stream), "memset");
  Launch::export_count(args(Truncation()), split, stream);
  check(cudaMemcpyAsync(host_scratch, split.cursor, (slots + 1) * sizeof(unsigned long long),
                        cudaMemcpyDeviceToHost, stream),
        "read export counts");
  check(cudaStreamSynchronize(stream), "export count");
  profile.mark(stream, "export count");
  if (host_scratch[slots] != 0) {
    throw std::logic_error("partition export: " + std::to_string(host_scratch[slots]) +
                           " terms belong to partitions that are not among this layer's partners");
  }
  std::size_t total = 0;
  for (std::size_t k = 0; k < slots; ++k) {
    layout.count[k] = host_scratch[k];
    layout.first[k] = total;
    host_scratch[k] = total;  // the write pass's cursors
    total += layout.count[k];
  }
  if (total == 0) return layout;
  reserve_export(total);
  check(cudaMemcpyAsync(split.cursor, host_scratch, slots * sizeof(unsigned long long), cudaMemcpyHostToDevice,
                        stream),
        "set export cursors");
  zero_counters();
  Launch::export_write(args(Truncation()), split, static_cast<Key*>(export_keys.ptr), export_coef.ptr, stream);
  settle_counters();  // synchronizes: the rows are in place for whoever reads them next
  profile.mark(stream, "export write");
  compact_if_worthwhile(false);
  profile.mark(stream, "export compact");
  return layout;
}

template <int W, Coefficient C>
bool DeviceSum<W, C>::Impl::fuses_rotation_with_export(const PreparedChannel<W>& table,
                                                       std::span<const PauliString<W>> rows,
                                                       std::span<const std::uint32_t> offsets) {
  if (table.form != PreparedChannel<W>::Form::rotation || offsets.size() != 1 || rows.size() > 16) return false;
  const std::uint32_t part = row_parities(rows, table.generator);
  return part != 0 && part == offsets[0];
}

template <int W, Coefficient C>
std::optional<kernels::JoinExport<W>> DeviceSum<W, C>::Impl::join_export(
    const PreparedChannel<W>& table, std::span<const PauliString<W>> rows, std::span<const std::uint32_t> offsets) {
  if (table.form == PreparedChannel<W>::Form::rotation || table.table_class != TableClass::general ||
      rows.size() > 16 || offsets.empty() || offsets.size() > static_cast<std::size_t>(kernels::kMaxExportSlots)) {
    return std::nullopt;
  }
  kernels::JoinExport<W> e;
  e.slots = static_cast<int>(offsets.size());
  constexpr std::uint8_t kUnnamed = 0xff;
  for (int d = 0; d < 16; ++d) {
    const std::uint32_t offset = row_parities(rows, table.pattern_mask(d));
    std::uint8_t slot = offset == 0 ? static_cast<std::uint8_t>(e.slots) : kUnnamed;
    for (std::size_t k = 0; k < offsets.size(); ++k) {
      if (offsets[k] == offset) slot = static_cast<std::uint8_t>(k);
    }
    e.slot[d] = slot;
  }
  for (const std::uint8_t d : table.delta_patterns) {
    if (e.slot[d] == kUnnamed) return std::nullopt;
  }
  // Span elements that are no realized delta carry only exact zeros (the inputs share a partition).
  for (std::uint8_t& slot : e.slot) slot = std::min<std::uint8_t>(slot, static_cast<std::uint8_t>(e.slots));
  return e;
}

template <int W, Coefficient C>
auto DeviceSum<W, C>::Impl::apply_and_export(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                             std::uint32_t self,
                                             std::span<const std::uint32_t> offsets) -> ExportLayout {
  const bool rotation = fuses_rotation_with_export(table, rows, offsets);
  const std::optional<kernels::JoinExport<W>> join = rotation ? std::nullopt : join_export(table, rows, offsets);
  if (!rotation && !join) {
    apply_layer(table, Truncation());
    return export_on_device(rows, self, offsets);
  }
  activate();
  profile.start(stream);
  const std::size_t slots = offsets.size();
  ExportLayout layout{std::vector<std::size_t>(slots, 0), std::vector<std::size_t>(slots, 0)};
  const Truncation none;
  if (skips_layer(table, none)) {
    ++skipped;
    profile.mark(stream, "skipped layer");
    return layout;
  }
  zero_counters();
  discarded = 0.0;
  if (rotation) {
    remote_rotation_and_export(table, layout);
  } else {
    join_and_export(table, *join, layout, none);
  }
  tested.remember(none);
  add_support(table);
  compact_if_worthwhile(false);
  return layout;
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::remote_rotation_and_export(const PreparedChannel<W>& table, ExportLayout& layout) {
  const Truncation none;
  const kernels::RotationTable<W> t = rotation_table(table);
  unsigned long long* cursor = histogram();
  check(cudaMemsetAsync(cursor, 0, sizeof(unsigned long long), stream), "memset");
  const kernels::LayerArgs<W> a = args(none);
  Launch::remote_rotation_count(a, t, cursor, stream);
  check(cudaMemcpyAsync(host_scratch, cursor, sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream),
        "read export count");
  check(cudaStreamSynchronize(stream), "export count");
  profile.mark(stream, "remote rotation count");
  const std::size_t total = static_cast<std::size_t>(host_scratch[0]);
  reserve_export(total);
  check(cudaMemsetAsync(cursor, 0, sizeof(unsigned long long), stream), "memset");
  Launch::remote_rotation_write(a, t, cursor, static_cast<Key*>(export_keys.ptr), export_coef.ptr, stream);
  settle_counters();  // synchronizes: the rows are in place for whoever reads them next
  profile.mark(stream, "remote rotation write");
  layout.count[0] = total;
}

template <int W, Coefficient C>
bool DeviceSum<W, C>::Impl::routes_orbits(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                          std::span<const std::uint32_t> offsets) {
  if (!join_export(table, rows, offsets)) return false;
  for (const std::uint32_t a : offsets) {
    for (const std::uint32_t b : offsets) {
      if (a != b && std::find(offsets.begin(), offsets.end(), a ^ b) == offsets.end()) return false;
    }
  }
  return true;
}

template <int W, Coefficient C>
auto DeviceSum<W, C>::Impl::export_orbit_members(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                                 std::uint32_t self,
                                                 std::span<const std::uint32_t> offsets) -> ExportLayout {
  if (!routes_orbits(table, rows, offsets)) {
    throw std::logic_error("export_orbit_members: this layer's orbits cannot be routed");
  }
  return export_on_device(rows, self, offsets, &table);
}

template <int W, Coefficient C>
auto DeviceSum<W, C>::Impl::apply_and_export_final(const PreparedChannel<W>& table,
                                                   std::span<const PauliString<W>> rows, std::uint32_t self,
                                                   std::span<const std::uint32_t> offsets, const Truncation& truncation,
                                                   double& dropped) -> ExportLayout {
  dropped = 0.0;
  if (table.form == PreparedChannel<W>::Form::local && table.table_class == TableClass::permutation) {
    dropped = apply_layer(table, truncation);
    return export_on_device(rows, self, offsets);
  }
  std::optional<kernels::JoinExport<W>> join;
  if (routes_orbits(table, rows, offsets)) join = join_export(table, rows, offsets);
  if (!join) throw std::logic_error("apply_and_export_final: neither a permutation nor a routed general table");
  activate();
  profile.start(stream);
  const std::size_t slots = offsets.size();
  ExportLayout layout{std::vector<std::size_t>(slots, 0), std::vector<std::size_t>(slots, 0)};
  if (skips_layer(table, truncation)) {
    ++skipped;
    profile.mark(stream, "skipped layer");
    return layout;
  }
  zero_counters();
  discarded = 0.0;
  join->final_outputs = true;
  join_and_export(table, *join, layout, truncation);
  tested.remember(truncation);
  add_support(table);
  compact_if_worthwhile(false);
  dropped = discarded;
  return layout;
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::join_and_export(const PreparedChannel<W>& table, kernels::JoinExport<W> e,
                                            ExportLayout& layout, const Truncation& truncation) {
  const kernels::LocalTable t = local_table(table);
  const std::size_t slots = static_cast<std::size_t>(e.slots);
  reserve_table(stored, t.orbit_size);
  Launch::join_insert_local(args(truncation), t, stream);
  profile.mark(stream, "local insert");
  e.cursor = histogram();
  check(cudaMemsetAsync(e.cursor, 0, slots * sizeof(unsigned long long), stream), "memset");
  Launch::join_count_local_export(args(truncation), t, e, stream);
  check(cudaMemcpyAsync(host_scratch, e.cursor, slots * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream),
        "read export counts");
  const std::size_t fresh = static_cast<std::size_t>(read_counters().fresh);  // synchronizes
  std::size_t total = 0;
  for (std::size_t k = 0; k < slots; ++k) {
    layout.first[k] = total;
    layout.count[k] = static_cast<std::size_t>(host_scratch[k]);
    total += layout.count[k];
  }
  profile.mark(stream, "join count (export)");
  try {
    if (stored + fresh > kMaxStoredTerms) {
      throw GpuOutOfMemory("this layer would hold " + std::to_string(stored + fresh) +
                           " terms on one device, over the limit of " + std::to_string(kMaxStoredTerms));
    }
    reserve(stored + fresh, true);
    reserve_export(total);
  } catch (...) {
    clear_table();
    throw;
  }
  for (std::size_t k = 0; k < slots; ++k) host_scratch[k] = layout.first[k];
  check(cudaMemcpyAsync(e.cursor, host_scratch, slots * sizeof(unsigned long long), cudaMemcpyHostToDevice, stream),
        "set export cursors");
  e.out_keys = static_cast<Key*>(export_keys.ptr);
  e.out_coef = export_coef.ptr;
  const kernels::LayerArgs<W> a = args(truncation);  // after the room: the arrays may have moved
  Launch::join_write_local_export(a, t, e, stream);
  profile.mark(stream, "join write (export)");
  rescale_outside_join(a, t, truncation);
  settle_counters();  // synchronizes: the rows are in place for whoever reads them next
  profile.mark(stream, "settle");
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::reserve_export(std::size_t rows) {
  if (rows == 0) return;
  if (export_keys.bytes < rows * sizeof(Key)) allocate(export_keys, rows * sizeof(Key), "export keys");
  if (export_coef.bytes < rows * sizeof(C)) allocate(export_coef, rows * sizeof(C), "export coefficients");
}

template <int W, Coefficient C>
std::vector<std::vector<std::byte>> DeviceSum<W, C>::Impl::export_partition_rows(
    std::span<const PauliString<W>> rows, std::uint32_t self, std::span<const std::uint32_t> offsets) {
  return download_export(export_on_device(rows, self, offsets));
}

template <int W, Coefficient C>
std::vector<std::vector<std::byte>> DeviceSum<W, C>::Impl::download_export(const ExportLayout& layout) {
  const std::size_t slots = layout.count.size();
  std::vector<std::vector<std::byte>> out(slots);
  for (std::size_t k = 0; k < slots; ++k) {
    const std::size_t n = layout.count[k];
    out[k].resize(n * (sizeof(Key) + sizeof(C)));
    if (n == 0) continue;
    check(cudaMemcpyAsync(out[k].data(), static_cast<const Key*>(export_keys.ptr) + layout.first[k],
                          n * sizeof(Key), cudaMemcpyDeviceToHost, stream),
          "download export keys");
    check(cudaMemcpyAsync(out[k].data() + n * sizeof(Key), static_cast<const C*>(export_coef.ptr) + layout.first[k],
                          n * sizeof(C), cudaMemcpyDeviceToHost, stream),
          "download export coefficients");
  }
  check(cudaStreamSynchronize(stream), "export");
  return out;
}

template <int W, Coefficient C>
std::vector<PeerRows> DeviceSum<W, C>::Impl::export_partition_rows_on_device(
    std::span<const PauliString<W>> rows, std::uint32_t self, std::span<const std::uint32_t> offsets) {
  return peer_rows(export_on_device(rows, self, offsets));
}

template <int W, Coefficient C>
std::vector<PeerRows> DeviceSum<W, C>::Impl::peer_rows(const ExportLayout& layout) const {
  std::vector<PeerRows> out(layout.count.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    out[k].device = device;
    out[k].count = layout.count[k];
    out[k].keys = static_cast<const Key*>(export_keys.ptr) + layout.first[k];
    out[k].coefficients = static_cast<const C*>(export_coef.ptr) + layout.first[k];
  }
  return out;
}

#define PAULISTRINGS_INSTANTIATE_IMPL_EXPORT(W, C) \
  template DeviceSum<W, C>::Impl::ExportLayout DeviceSum<W, C>::Impl::export_on_device( \
      std::span<const PauliString<W>> rows, std::uint32_t self, std::span<const std::uint32_t> offsets, \
      const PreparedChannel<W>* orbits); \
  template bool DeviceSum<W, C>::Impl::fuses_rotation_with_export( \
      const PreparedChannel<W>& table, std::span<const PauliString<W>> rows, \
      std::span<const std::uint32_t> offsets); \
  template std::optional<kernels::JoinExport<W>> DeviceSum<W, C>::Impl::join_export( \
      const PreparedChannel<W>& table, std::span<const PauliString<W>> rows, \
      std::span<const std::uint32_t> offsets); \
  template DeviceSum<W, C>::Impl::ExportLayout DeviceSum<W, C>::Impl::apply_and_export( \
      const PreparedChannel<W>& table, std::span<const PauliString<W>> rows, std::uint32_t self, \
      std::span<const std::uint32_t> offsets); \
  template void DeviceSum<W, C>::Impl::remote_rotation_and_export( \
      const PreparedChannel<W>& table, ExportLayout& layout); \
  template bool DeviceSum<W, C>::Impl::routes_orbits(const PreparedChannel<W>& table, \
                                                     std::span<const PauliString<W>> rows, \
                                                     std::span<const std::uint32_t> offsets); \
  template DeviceSum<W, C>::Impl::ExportLayout DeviceSum<W, C>::Impl::export_orbit_members( \
      const PreparedChannel<W>& table, std::span<const PauliString<W>> rows, std::uint32_t self, \
      std::span<const std::uint32_t> offsets); \
  template DeviceSum<W, C>::Impl::ExportLayout DeviceSum<W, C>::Impl::apply_and_export_final( \
      const PreparedChannel<W>& table, std::span<const PauliString<W>> rows, std::uint32_t self, \
      std::span<const std::uint32_t> offsets, const Truncation& truncation, double& dropped); \
  template void DeviceSum<W, C>::Impl::join_and_export(const PreparedChannel<W>& table, kernels::JoinExport<W> e, \
                                                       ExportLayout& layout, const Truncation& truncation); \
  template void DeviceSum<W, C>::Impl::reserve_export(std::size_t rows); \
  template std::vector<std::vector<std::byte>> DeviceSum<W, C>::Impl::export_partition_rows( \
      std::span<const PauliString<W>> rows, std::uint32_t self, std::span<const std::uint32_t> offsets); \
  template std::vector<std::vector<std::byte>> DeviceSum<W, C>::Impl::download_export(const ExportLayout& layout); \
  template std::vector<PeerRows> DeviceSum<W, C>::Impl::export_partition_rows_on_device( \
      std::span<const PauliString<W>> rows, std::uint32_t self, std::span<const std::uint32_t> offsets); \
  template std::vector<PeerRows> DeviceSum<W, C>::Impl::peer_rows(const ExportLayout& layout) const;
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_INSTANTIATE_IMPL_EXPORT)
#undef PAULISTRINGS_INSTANTIATE_IMPL_EXPORT

}  // namespace paulistrings::gpu
