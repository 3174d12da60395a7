#pragma once
// partition_detail::LocalEngine: what one partition of a partitioned run does to its own share of the
// sum, behind one interface, so the partition driver (partitioned_propagate.inl) runs the CPU engine
// (CpuLocalEngine) and the GPU engine (GpuLocalEngine, a gpu::DeviceSum on one device) alike.
//
// Per layer the driver calls apply_layer (a local layer, or a remote one without the per-term test),
// export_rows / merge_rows around the exchange of a remote layer, apply_term_truncation after it, and
// for a truncation across partitions the histogram and cut calls (the counts are all-reduced between
// them). Buffers are opaque bytes to the driver: the CPU engine sends rows (key, coefficient), the GPU
// engine n keys then n coefficients; every rank of a run uses the same engine (part of the shape check).

#include <algorithm>
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
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/partition/partition_rows.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings::partition_detail {

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
  /// holding the terms of partition self ⊕ offsets[k].
  virtual std::vector<std::vector<std::byte>> export_rows(const PartitionRows& rows, std::uint32_t self,
                                                          std::span<const std::uint32_t> offsets) = 0;
  /// Adds received buffers (equal keys sum).
  virtual void merge_rows(std::span<const std::vector<std::byte>> buffers) = 0;
  /// GPU engines of one process exchange device addresses instead of bytes: the export stays on the
  /// device (valid until this engine's next export) and the merge reads the partners' exports.
  virtual bool exchanges_on_device() const { return false; }
  virtual std::vector<gpu::PeerRows> export_rows_on_device(const PartitionRows&, std::uint32_t,
                                                           std::span<const std::uint32_t>) {
    throw std::logic_error("this engine exchanges rows through host memory");
  }
  virtual void merge_rows_on_device(std::span<const gpu::PeerRows>) {
    throw std::logic_error("this engine exchanges rows through host memory");
  }
  /// Rows that arrive on the device (NCCL): room first (may throw, nothing changed), then the merge,
  /// where receive(k, keys, coefficients, stream) enqueues batch k's arrival.
  virtual void prepare_merge(std::span<const std::uint64_t>) {
    throw std::logic_error("this engine exchanges rows through host memory");
  }
  virtual void merge_received(std::span<const std::uint64_t>,
                              const std::function<void(std::size_t, void*, void*, void*)>&) {
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
class CpuLocalEngine final : public ForwardingEngine<W, C, CpuEngine<W, C>> {
 public:
  CpuLocalEngine(const PauliSum<W, C>& share, const CpuEngineOptions& options)
      : ForwardingEngine<W, C, CpuEngine<W, C>>(share, options) {}
  std::uint64_t kind() const override { return 0; }
  std::vector<std::vector<std::byte>> export_rows(const PartitionRows& rows, std::uint32_t self,
                                                  std::span<const std::uint32_t> offsets) override {
    std::vector<PauliString<W>> keys;
    std::vector<C> values;
    engine_.extract_if([&](const PauliString<W>& key) { return rows.part(key) != self; }, keys, values);
    // Rows grouped by partner offset, each group in extraction order.
    std::vector<std::uint32_t> slot_of_offset(rows.count(), 0);
    for (std::size_t i = 0; i < offsets.size(); ++i) slot_of_offset[offsets[i]] = static_cast<std::uint32_t>(i);
    std::vector<std::vector<PauliString<W>>> group_keys(offsets.size());
    std::vector<std::vector<C>> group_values(offsets.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::uint32_t slot = slot_of_offset[rows.part(keys[i]) ^ self];
      group_keys[slot].push_back(keys[i]);
      group_values[slot].push_back(values[i]);
    }
    std::vector<std::vector<std::byte>> out(offsets.size());
    for (std::size_t i = 0; i < offsets.size(); ++i) append_rows<W, C>(out[i], group_keys[i], group_values[i]);
    return out;
  }
  void merge_rows(std::span<const std::vector<std::byte>> buffers) override {
    std::vector<PauliString<W>> keys;
    std::vector<C> values;
    for (const auto& buffer : buffers) read_rows<W, C>(buffer, keys, values);
    engine_.merge_terms(keys, values);
  }
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
  using ForwardingEngine<W, C, CpuEngine<W, C>>::engine_;
  std::vector<std::uint64_t> candidates_;
};

template <int W, Coefficient C>
class GpuLocalEngine final : public ForwardingEngine<W, C, gpu::DeviceSum<W, C>> {
 public:
  GpuLocalEngine(const PauliSum<W, C>& share, int device)
      : ForwardingEngine<W, C, gpu::DeviceSum<W, C>>(share, device) {}
  std::uint64_t kind() const override { return 1; }
  std::vector<std::vector<std::byte>> export_rows(const PartitionRows& rows, std::uint32_t self,
                                                  std::span<const std::uint32_t> offsets) override {
    return engine_.export_partition_rows(rows_of(rows), self, offsets);
  }
  void merge_rows(std::span<const std::vector<std::byte>> buffers) override { engine_.merge_partition_rows(buffers); }
  bool exchanges_on_device() const override { return true; }
  std::vector<gpu::PeerRows> export_rows_on_device(const PartitionRows& rows, std::uint32_t self,
                                                   std::span<const std::uint32_t> offsets) override {
    return engine_.export_partition_rows_on_device(rows_of(rows), self, offsets);
  }
  void merge_rows_on_device(std::span<const gpu::PeerRows> sources) override {
    engine_.merge_partition_rows(sources);
  }
  void prepare_merge(std::span<const std::uint64_t> counts) override { engine_.prepare_partition_merge(counts); }
  void merge_received(std::span<const std::uint64_t> counts,
                      const std::function<void(std::size_t, void*, void*, void*)>& receive) override {
    engine_.merge_partition_rows(counts, receive);
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
  const std::vector<PauliString<W>>& rows_of(const PartitionRows& rows) {
    if (rows_.empty() && rows.bits() > 0) rows_ = rows.rows_as<W>();
    return rows_;
  }

  using ForwardingEngine<W, C, gpu::DeviceSum<W, C>>::engine_;
  std::vector<PauliString<W>> rows_;
};

}  // namespace paulistrings::partition_detail
