// The GPU entry points of a build without CUDA: they report that no device is available, and every
// attempt to put a sum on a device throws GpuUnavailable with that reason.

#include "paulistrings/gpu/device_sum.h"

namespace paulistrings::gpu {

namespace {
constexpr const char* kReason =
    "this build of paulistrings has no GPU engine (CUDA was not found at configure time; "
    "configure with -DPAULISTRINGS_CUDA=ON on a machine with the CUDA toolkit)";
}

bool built_with_cuda() { return false; }
int device_count() { return 0; }
std::string unavailable_reason() { return kReason; }
std::string describe_device(int) { throw GpuUnavailable(kReason); }
PeerBandwidth measure_peer_bandwidth(int, int, std::size_t, int, bool) { throw GpuUnavailable(kReason); }

template <int W, Coefficient C>
struct DeviceSum<W, C>::Impl {};

template <int W, Coefficient C>
DeviceSum<W, C>::DeviceSum(const PauliSum<W, C>&, int, const GpuEngineOptions&) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
DeviceSum<W, C>::~DeviceSum() = default;
template <int W, Coefficient C>
DeviceSum<W, C>::DeviceSum(DeviceSum&&) noexcept = default;
template <int W, Coefficient C>
DeviceSum<W, C>& DeviceSum<W, C>::operator=(DeviceSum&&) noexcept = default;
// A DeviceSum cannot be constructed here, so the members below are never reached.
template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::size() const { throw GpuUnavailable(kReason); }
template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::num_qubits() const { throw GpuUnavailable(kReason); }
template <int W, Coefficient C>
int DeviceSum<W, C>::device() const { throw GpuUnavailable(kReason); }
template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::device_bytes() const { throw GpuUnavailable(kReason); }
template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::peak_device_bytes() const { throw GpuUnavailable(kReason); }
template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::skipped_layers() const { throw GpuUnavailable(kReason); }
template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::block_layers() const {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
PauliSum<W, C> DeviceSum<W, C>::download(int) const {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
void DeviceSum<W, C>::download_to(PauliSum<W, C>&, int) const {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
double DeviceSum<W, C>::apply_layer(const PreparedChannel<W>&, const Truncation&) { throw GpuUnavailable(kReason); }
template <int W, Coefficient C>
std::size_t DeviceSum<W, C>::apply_block(std::span<const PreparedChannel<W>>, const Truncation&,
                                         std::span<BlockLayer>) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
LayerPassResult DeviceSum<W, C>::finalize_layer(const Truncation&) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
void DeviceSum<W, C>::synchronize() const { throw GpuUnavailable(kReason); }
template <int W, Coefficient C>
std::vector<std::vector<std::byte>> DeviceSum<W, C>::export_partition_rows(std::span<const PauliString<W>>,
                                                                           std::uint32_t,
                                                                           std::span<const std::uint32_t>) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
bool DeviceSum<W, C>::fuses_with_export(const PreparedChannel<W>&, std::span<const PauliString<W>>,
                                        std::span<const std::uint32_t>) {
  return false;
}
template <int W, Coefficient C>
std::vector<std::vector<std::byte>> DeviceSum<W, C>::apply_and_export(const PreparedChannel<W>&,
                                                                      std::span<const PauliString<W>>, std::uint32_t,
                                                                      std::span<const std::uint32_t>) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
std::vector<PeerRows> DeviceSum<W, C>::apply_and_export_on_device(const PreparedChannel<W>&,
                                                                 std::span<const PauliString<W>>, std::uint32_t,
                                                                 std::span<const std::uint32_t>) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
bool DeviceSum<W, C>::routes_orbits(const PreparedChannel<W>&, std::span<const PauliString<W>>,
                                    std::span<const std::uint32_t>) {
  return false;
}
template <int W, Coefficient C>
std::vector<std::vector<std::byte>> DeviceSum<W, C>::export_orbit_members(const PreparedChannel<W>&,
                                                                          std::span<const PauliString<W>>,
                                                                          std::uint32_t, std::span<const std::uint32_t>) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
std::vector<PeerRows> DeviceSum<W, C>::export_orbit_members_on_device(const PreparedChannel<W>&,
                                                                     std::span<const PauliString<W>>, std::uint32_t,
                                                                     std::span<const std::uint32_t>) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
std::vector<std::vector<std::byte>> DeviceSum<W, C>::apply_and_export_final(const PreparedChannel<W>&,
                                                                            std::span<const PauliString<W>>,
                                                                            std::uint32_t,
                                                                            std::span<const std::uint32_t>,
                                                                            const Truncation&, double&) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
std::vector<PeerRows> DeviceSum<W, C>::apply_and_export_final_on_device(const PreparedChannel<W>&,
                                                                       std::span<const PauliString<W>>, std::uint32_t,
                                                                       std::span<const std::uint32_t>,
                                                                       const Truncation&, double&) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
void DeviceSum<W, C>::merge_partition_rows(std::span<const std::span<const std::byte>>, RowArrival) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
std::vector<PeerRows> DeviceSum<W, C>::export_partition_rows_on_device(std::span<const PauliString<W>>, std::uint32_t,
                                                                       std::span<const std::uint32_t>) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
void DeviceSum<W, C>::merge_partition_rows(std::span<const PeerRows>, RowArrival) { throw GpuUnavailable(kReason); }
template <int W, Coefficient C>
void DeviceSum<W, C>::prepare_partition_merge(std::span<const std::uint64_t>, RowArrival) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
void DeviceSum<W, C>::merge_partition_rows(std::span<const std::uint64_t>,
                                           const std::function<void(std::size_t, void*, void*, void*)>&, RowArrival) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
double DeviceSum<W, C>::apply_term_truncation(const Truncation&) { throw GpuUnavailable(kReason); }
template <int W, Coefficient C>
void DeviceSum<W, C>::exponent_histogram(std::span<std::uint64_t>) { throw GpuUnavailable(kReason); }
template <int W, Coefficient C>
void DeviceSum<W, C>::digit_histogram(std::uint64_t, std::uint64_t, int, std::span<std::uint64_t>) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
double DeviceSum<W, C>::drop_below_exponent(int) { throw GpuUnavailable(kReason); }
template <int W, Coefficient C>
double DeviceSum<W, C>::drop_below(double, bool) { throw GpuUnavailable(kReason); }

template <int W, Coefficient C>
PropagationStats propagate(DeviceSum<W, C>&, const Circuit&, const PropagateOptions&) {
  throw GpuUnavailable(kReason);
}
template <int W, Coefficient C>
PropagationStats propagate_on_device(PauliSum<W, C>&, const Circuit&, const PropagateOptions&) {
  throw GpuUnavailable(kReason);
}

#define PAULISTRINGS_INSTANTIATE_DEVICE_SUM(W, C)                                                            \
  template class DeviceSum<W, C>;                                                                            \
  template PropagationStats propagate<W, C>(DeviceSum<W, C>&, const Circuit&, const PropagateOptions&);      \
  template PropagationStats propagate_on_device<W, C>(PauliSum<W, C>&, const Circuit&, const PropagateOptions&);
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_INSTANTIATE_DEVICE_SUM)
#undef PAULISTRINGS_INSTANTIATE_DEVICE_SUM

}  // namespace paulistrings::gpu
