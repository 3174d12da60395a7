// DeviceSum<W, C>'s public members (device_sum.h), each forwarded to its Impl (device_sum_impl.h, defined
// by job in device_sum_memory.cc, _layers.cc, _export.cc and _merge.cc), and propagate() over a
// resident sum.

#include "paulistrings/gpu/device_sum_impl.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "paulistrings/engine/driver.h"
#include "paulistrings/engine/validate.h"

namespace paulistrings::gpu {

template <int W, Coefficient C>
DeviceSum<W, C>::DeviceSum(const PauliSum<W, C>& host, int device, const GpuEngineOptions& options)
    : impl_(std::make_unique<Impl>(host, device, options)) {}
template <int W, Coefficient C>
DeviceSum<W, C>::~DeviceSum() = default;
template <int W, Coefficient C>
DeviceSum<W, C>::DeviceSum(DeviceSum&&) noexcept = default;
template <int W, Coefficient C>
DeviceSum<W, C>& DeviceSum<W, C>::operator=(DeviceSum&&) noexcept = default;

template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::size() const {
  return impl_->stored - impl_->holes;
}
template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::num_qubits() const {
  return impl_->num_qubits;
}
template <int W, Coefficient C>
int DeviceSum<W, C>::device() const {
  return impl_->device;
}
template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::device_bytes() const {
  return impl_->bytes_now;
}
template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::peak_device_bytes() const {
  return impl_->bytes_peak;
}
template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::block_layers() const {
  return impl_->block_layers;
}
template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::skipped_layers() const {
  return impl_->skipped;
}
template <int W, Coefficient C>
PauliSum<W, C> DeviceSum<W, C>::download(int threads) const {
  return impl_->download(threads);
}
template <int W, Coefficient C>
void DeviceSum<W, C>::download_to(PauliSum<W, C>& host, int threads) const {
  host = impl_->download(threads);
}
template <int W, Coefficient C>
double DeviceSum<W, C>::apply_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
  return impl_->apply_layer(table, truncation);
}
template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::apply_block(std::span<const PreparedChannel<W>> tables,
                                         const Truncation& truncation, std::span<BlockLayer> out) {
  return impl_->apply_block(tables, truncation, out);
}
template <int W, Coefficient C>
LayerPassResult DeviceSum<W, C>::finalize_layer(const Truncation& truncation) {
  return impl_->finalize_layer(truncation);
}
template <int W, Coefficient C>
void DeviceSum<W, C>::synchronize() const {
  impl_->activate();
  check(cudaStreamSynchronize(impl_->stream), "synchronize");
}

template <int W, Coefficient C>
std::vector<std::vector<std::byte>> DeviceSum<W, C>::export_partition_rows(std::span<const PauliString<W>> rows,
                                                                           std::uint32_t self,
                                                                           std::span<const std::uint32_t> offsets) {
  return impl_->export_partition_rows(rows, self, offsets);
}
template <int W, Coefficient C>
bool DeviceSum<W, C>::fuses_with_export(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                        std::span<const std::uint32_t> offsets) {
  return Impl::fuses_rotation_with_export(table, rows, offsets) || Impl::join_export(table, rows, offsets).has_value();
}
template <int W, Coefficient C>
std::vector<std::vector<std::byte>> DeviceSum<W, C>::apply_and_export(const PreparedChannel<W>& table,
                                                                      std::span<const PauliString<W>> rows,
                                                                      std::uint32_t self,
                                                                      std::span<const std::uint32_t> offsets) {
  return impl_->download_export(impl_->apply_and_export(table, rows, self, offsets));
}
template <int W, Coefficient C>
std::vector<PeerRows> DeviceSum<W, C>::apply_and_export_on_device(const PreparedChannel<W>& table,
                                                                 std::span<const PauliString<W>> rows,
                                                                 std::uint32_t self,
                                                                 std::span<const std::uint32_t> offsets) {
  return impl_->peer_rows(impl_->apply_and_export(table, rows, self, offsets));
}
template <int W, Coefficient C>
bool DeviceSum<W, C>::routes_orbits(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                    std::span<const std::uint32_t> offsets) {
  return Impl::routes_orbits(table, rows, offsets);
}
template <int W, Coefficient C>
std::vector<std::vector<std::byte>> DeviceSum<W, C>::export_orbit_members(const PreparedChannel<W>& table,
                                                                          std::span<const PauliString<W>> rows,
                                                                          std::uint32_t self,
                                                                          std::span<const std::uint32_t> offsets) {
  return impl_->download_export(impl_->export_orbit_members(table, rows, self, offsets));
}
template <int W, Coefficient C>
std::vector<PeerRows> DeviceSum<W, C>::export_orbit_members_on_device(const PreparedChannel<W>& table,
                                                                     std::span<const PauliString<W>> rows,
                                                                     std::uint32_t self,
                                                                     std::span<const std::uint32_t> offsets) {
  return impl_->peer_rows(impl_->export_orbit_members(table, rows, self, offsets));
}
template <int W, Coefficient C>
std::vector<std::vector<std::byte>> DeviceSum<W, C>::apply_and_export_final(
    const PreparedChannel<W>& table, std::span<const PauliString<W>> rows, std::uint32_t self,
    std::span<const std::uint32_t> offsets, const Truncation& truncation, double& discarded) {
  return impl_->download_export(impl_->apply_and_export_final(table, rows, self, offsets, truncation, discarded));
}
template <int W, Coefficient C>
std::vector<PeerRows> DeviceSum<W, C>::apply_and_export_final_on_device(
    const PreparedChannel<W>& table, std::span<const PauliString<W>> rows, std::uint32_t self,
    std::span<const std::uint32_t> offsets, const Truncation& truncation, double& discarded) {
  return impl_->peer_rows(impl_->apply_and_export_final(table, rows, self, offsets, truncation, discarded));
}
template <int W, Coefficient C>
void DeviceSum<W, C>::merge_partition_rows(std::span<const std::span<const std::byte>> buffers, RowArrival arrival) {
  impl_->merge_partition_rows(buffers, arrival);
}
template <int W, Coefficient C>
std::vector<PeerRows> DeviceSum<W, C>::export_partition_rows_on_device(std::span<const PauliString<W>> rows,
                                                                       std::uint32_t self,
                                                                       std::span<const std::uint32_t> offsets) {
  return impl_->export_partition_rows_on_device(rows, self, offsets);
}
template <int W, Coefficient C>
void DeviceSum<W, C>::merge_partition_rows(std::span<const PeerRows> sources, RowArrival arrival) {
  impl_->merge_partition_rows(sources, arrival);
}
template <int W, Coefficient C>
void DeviceSum<W, C>::prepare_partition_merge(std::span<const std::uint64_t> counts, RowArrival arrival) {
  impl_->activate();
  const auto [total, largest] = Impl::total_and_largest(counts);
  if (arrival == RowArrival::append) {
    impl_->reserve_append(total);
  } else {
    impl_->reserve_merge(total, largest);
  }
}
template <int W, Coefficient C>
void DeviceSum<W, C>::merge_partition_rows(std::span<const std::uint64_t> counts,
                                           const std::function<void(std::size_t, void*, void*, void*)>& receive,
                                           RowArrival arrival) {
  impl_->merge_received(counts, receive, arrival);
}
template <int W, Coefficient C>
double DeviceSum<W, C>::apply_term_truncation(const Truncation& truncation) {
  return impl_->apply_term_truncation(truncation);
}
template <int W, Coefficient C>
void DeviceSum<W, C>::exponent_histogram(std::span<std::uint64_t> counts) {
  if (counts.size() != 2048) throw std::invalid_argument("exponent_histogram: 2048 counts");
  impl_->activate();
  Impl::Launch::exponent_histogram(impl_->coef.ptr, impl_->stored, impl_->histogram(), impl_->stream);
  impl_->read_histogram(counts);
}
template <int W, Coefficient C>
void DeviceSum<W, C>::digit_histogram(std::uint64_t prefix, std::uint64_t mask, int shift,
                                      std::span<std::uint64_t> counts) {
  if (counts.size() != 256) throw std::invalid_argument("digit_histogram: 256 counts");
  impl_->activate();
  Impl::Launch::digit_histogram(impl_->coef.ptr, impl_->stored, prefix, mask, shift, impl_->histogram(),
                                impl_->stream);
  impl_->read_histogram(counts);
}
template <int W, Coefficient C>
double DeviceSum<W, C>::drop_below_exponent(int bin) {
  return impl_->cut_now(0, bin, 0.0);
}
template <int W, Coefficient C>
double DeviceSum<W, C>::drop_below(double value, bool keep_equal) {
  return impl_->cut_now(keep_equal ? 1 : 2, 0, value);
}

template <int W, Coefficient C>
PropagationStats propagate(DeviceSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options) {
  validate_run(sum.num_qubits(), PauliSum<W, C>::kIsComplex, circuit, options);
  // The layers done so far, to say where the device ran out of memory.
  std::size_t done = options.start_layer;
  PropagateOptions counted = options;
  counted.on_layer = [&](const LayerRecord& record) {
    done = record.application_index + 1;
    if (options.on_layer) options.on_layer(record);
  };
  try {
    return run_layers<W>(sum, circuit, counted);
  } catch (const GpuOutOfMemory& e) {
    const std::size_t layers = circuit.size();
    if (done >= layers) throw;
    const std::size_t index = options.direction == Direction::forward ? done : layers - 1 - done;
    throw GpuOutOfMemory(std::string(e.what())
                             .append(" in layer ")
                             .append(std::to_string(done + 1))
                             .append(" of ")
                             .append(std::to_string(layers))
                             .append(" (")
                             .append(circuit[index].name())
                             .append(")"));
  }
}

template <int W, Coefficient C>
PropagationStats propagate_on_device(PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options) {
  GpuEngineOptions gpu = options.gpu;
  if (gpu.host_threads == 0) gpu.host_threads = options.threads;
  gpu.blocks = gpu.blocks && options.gate_blocks;
  DeviceSum<W, C> device_sum(sum, options.device, gpu);
  PropagationStats stats = propagate(device_sum, circuit, options);
  device_sum.download_to(sum, options.threads);
  return stats;
}

#define PAULISTRINGS_INSTANTIATE_DEVICE_SUM(W, C)                                                            \
  template class DeviceSum<W, C>;                                                                            \
  template PropagationStats propagate<W, C>(DeviceSum<W, C>&, const Circuit&, const PropagateOptions&);      \
  template PropagationStats propagate_on_device<W, C>(PauliSum<W, C>&, const Circuit&, const PropagateOptions&);
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_INSTANTIATE_DEVICE_SUM)
#undef PAULISTRINGS_INSTANTIATE_DEVICE_SUM

}  // namespace paulistrings::gpu
