// DeviceSum<W, C>::Impl's merges for partitioned runs (device_sum_impl.h): received rows added by key
// (a key index, then add in place or append) or appended as they are, from host buffers, from other
// sums' device exports (same device or a peer) or straight from an NCCL receive.

#include "paulistrings/gpu/device_sum_impl.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace paulistrings::gpu {

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::reserve_merge(std::size_t total, std::size_t largest) {
  if (total == 0) return;
  reserve(stored + total, true);
  reserve_table(stored + total, 1);
  if (largest > 0) {
    if (import_keys.bytes < largest * sizeof(Key)) allocate(import_keys, largest * sizeof(Key), "import keys");
    if (import_coef.bytes < largest * sizeof(C)) allocate(import_coef, largest * sizeof(C), "import coefficients");
  }
}

template <int W, Coefficient C>
std::pair<std::size_t, std::size_t> DeviceSum<W, C>::Impl::total_and_largest(std::span<const std::uint64_t> counts) {
  std::size_t total = 0, largest = 0;
  for (std::uint64_t n : counts) {
    total += n;
    largest = std::max<std::size_t>(largest, n);
  }
  return {total, largest};
}

template <int W, Coefficient C>
template <class Source>
void DeviceSum<W, C>::Impl::merge_batches(std::size_t batches, std::size_t total, std::size_t largest,
                                          Source&& source) {
  profile.mark(stream, "exchange (host)");
  if (total == 0) return;
  reserve_merge(total, largest);
  profile.mark(stream, "merge room");
  zero_counters();
  unsigned long long* cone = histogram() + kConeWord;
  check(cudaMemsetAsync(cone, 0, W * sizeof(unsigned long long), stream), "memset");
  kernels::LayerArgs<W> a = args(Truncation());
  Launch::key_index(a, stream);
  profile.mark(stream, "merge index");
  // Batches one after another on the stream: a batch copied into the import buffers is not
  // overwritten before the merge that reads it has run.
  for (std::size_t k = 0; k < batches; ++k) {
    const auto [n, row_keys, row_coef] = source(k);
    Launch::merge_rows(a, static_cast<const Key*>(row_keys), row_coef, n, cone, stream);
  }
  check(cudaMemsetAsync(owner.ptr, 0, table_capacity * sizeof(std::uint32_t), stream), "clear key index");
  check(cudaMemcpyAsync(host_scratch + kConeWord, cone, W * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                        stream),
        "read light cone");
  settle_counters();
  profile.mark(stream, "merge rows");
  for (int w = 0; w < W; ++w) support[w] |= host_scratch[kConeWord + w];
  tested.forget();  // received terms have not met the policy
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::reserve_append(std::size_t total) {
  if (total == 0) return;
  compact_if_worthwhile(true);
  if (stored + total > kMaxStoredTerms) {
    throw GpuOutOfMemory("the received rows would make " + std::to_string(stored + total) +
                         " terms on one device, over the limit of " + std::to_string(kMaxStoredTerms));
  }
  reserve(stored + total, true);
}

template <int W, Coefficient C>
template <class Place>
void DeviceSum<W, C>::Impl::append_batches(std::span<const std::uint64_t> counts, Place&& place) {
  profile.mark(stream, "exchange (host)");
  const auto [total, largest] = total_and_largest(counts);
  reserve_append(total);
  std::size_t at = stored;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    place(k, static_cast<void*>(key_ptr() + at), static_cast<void*>(static_cast<C*>(coef.ptr) + at));
    at += static_cast<std::size_t>(counts[k]);
  }
  if (total == 0) return;
  zero_counters();
  unsigned long long* cone = histogram() + kConeWord;
  check(cudaMemsetAsync(cone, 0, W * sizeof(unsigned long long), stream), "memset");
  Launch::appended_rows(args(Truncation()), stored, total, cone, stream);
  check(cudaMemcpyAsync(host_scratch + kConeWord, cone, W * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                        stream),
        "read light cone");
  settle_counters();  // synchronizes: the rows are in place, the sources free again
  stored += total;
  profile.mark(stream, "append rows");
  for (int w = 0; w < W; ++w) support[w] |= host_scratch[kConeWord + w];
}

template <int W, Coefficient C>
std::vector<std::uint64_t> DeviceSum<W, C>::Impl::rows_in(std::span<const std::span<const std::byte>> buffers) {
  constexpr std::size_t kRow = sizeof(Key) + sizeof(C);
  std::vector<std::uint64_t> counts;
  for (const auto& buffer : buffers) {
    if (buffer.size() % kRow != 0) {
      throw std::runtime_error("partition exchange: received " + std::to_string(buffer.size()) +
                               " bytes, not a whole number of rows");
    }
    counts.push_back(buffer.size() / kRow);
  }
  return counts;
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::merge_partition_rows(std::span<const std::span<const std::byte>> buffers,
                                                 RowArrival arrival) {
  activate();
  const std::vector<std::uint64_t> counts = rows_in(buffers);
  if (arrival == RowArrival::append) {
    append_batches(counts, [&](std::size_t k, void* keys, void* coefficients) {
      const std::size_t n = counts[k];
      if (n == 0) return;
      check(cudaMemcpyAsync(keys, buffers[k].data(), n * sizeof(Key), cudaMemcpyHostToDevice, stream),
            "upload received keys");
      check(cudaMemcpyAsync(coefficients, buffers[k].data() + n * sizeof(Key), n * sizeof(C),
                            cudaMemcpyHostToDevice, stream),
            "upload received coefficients");
    });
    return;
  }
  const auto [total, largest] = total_and_largest(counts);
  merge_batches(buffers.size(), total, largest, [&](std::size_t k) {
    const std::size_t n = counts[k];
    if (n == 0) return Batch{0, nullptr, nullptr};
    check(cudaMemcpyAsync(import_keys.ptr, buffers[k].data(), n * sizeof(Key), cudaMemcpyHostToDevice, stream),
          "upload received keys");
    check(cudaMemcpyAsync(import_coef.ptr, buffers[k].data() + n * sizeof(Key), n * sizeof(C),
                          cudaMemcpyHostToDevice, stream),
          "upload received coefficients");
    return Batch{n, import_keys.ptr, import_coef.ptr};
  });
}

template <int W, Coefficient C>
bool DeviceSum<W, C>::Impl::reads_directly(int other) {
  if (other == device) return true;
  if (peers.contains(other)) return true;
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, device, other) != cudaSuccess || !can) {
    cudaGetLastError();
    return false;
  }
  const cudaError_t status = cudaDeviceEnablePeerAccess(other, 0);
  if (status != cudaSuccess && status != cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();
    return false;
  }
  cudaGetLastError();
  peers.insert(other);
  return true;
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::merge_received(std::span<const std::uint64_t> counts,
                                           const std::function<void(std::size_t, void*, void*, void*)>& receive,
                                           RowArrival arrival) {
  activate();
  if (arrival == RowArrival::append) {  // received straight into place
    append_batches(counts, [&](std::size_t k, void* keys, void* coefficients) {
      receive(k, keys, coefficients, static_cast<void*>(stream));
    });
    return;
  }
  const auto [total, largest] = total_and_largest(counts);
  // receive(k) runs for every batch, empty ones included: it is a swap, and the partner may be waiting
  // for this sum's rows even when none come back (an NCCL send needs its receive, and vice versa).
  if (total == 0) {
    for (std::size_t k = 0; k < counts.size(); ++k) receive(k, nullptr, nullptr, static_cast<void*>(stream));
    return;
  }
  merge_batches(counts.size(), total, largest, [&](std::size_t k) {
    receive(k, import_keys.ptr, import_coef.ptr, static_cast<void*>(stream));
    return Batch{static_cast<std::size_t>(counts[k]), import_keys.ptr, import_coef.ptr};
  });
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::merge_partition_rows(std::span<const PeerRows> sources, RowArrival arrival) {
  activate();
  if (arrival == RowArrival::append) {  // copied straight into place
    std::vector<std::uint64_t> counts;
    for (const PeerRows& from : sources) counts.push_back(from.count);
    append_batches(counts, [&](std::size_t k, void* keys, void* coefficients) {
      const PeerRows& from = sources[k];
      if (from.count == 0) return;
      const auto copy = [&](void* to, const void* rows, std::size_t bytes, const char* what) {
        check(from.device == device ? cudaMemcpyAsync(to, rows, bytes, cudaMemcpyDeviceToDevice, stream)
                                    : cudaMemcpyPeerAsync(to, device, rows, from.device, bytes, stream),
              what);
      };
      copy(keys, from.keys, from.count * sizeof(Key), "copy of received keys");
      copy(coefficients, from.coefficients, from.count * sizeof(C), "copy of received coefficients");
    });
    return;
  }
  std::size_t total = 0, largest = 0;
  std::vector<bool> direct(sources.size());
  for (std::size_t k = 0; k < sources.size(); ++k) {
    total += sources[k].count;
    direct[k] = sources[k].count == 0 || reads_directly(sources[k].device);
    if (!direct[k]) largest = std::max<std::size_t>(largest, sources[k].count);
  }
  merge_batches(sources.size(), total, largest, [&](std::size_t k) {
    const PeerRows& from = sources[k];
    if (from.count == 0 || direct[k]) return Batch{from.count, from.keys, from.coefficients};
    check(cudaMemcpyPeerAsync(import_keys.ptr, device, from.keys, from.device, from.count * sizeof(Key), stream),
          "peer copy of received keys");
    check(cudaMemcpyPeerAsync(import_coef.ptr, device, from.coefficients, from.device, from.count * sizeof(C),
                              stream),
          "peer copy of received coefficients");
    return Batch{static_cast<std::size_t>(from.count), import_keys.ptr, import_coef.ptr};
  });
}

#define PAULISTRINGS_INSTANTIATE_IMPL_MERGE(W, C) \
  template void DeviceSum<W, C>::Impl::reserve_merge(std::size_t total, std::size_t largest); \
  template std::pair<std::size_t, std::size_t> DeviceSum<W, C>::Impl::total_and_largest( \
      std::span<const std::uint64_t> counts); \
  template void DeviceSum<W, C>::Impl::reserve_append(std::size_t total); \
  template std::vector<std::uint64_t> DeviceSum<W, C>::Impl::rows_in( \
      std::span<const std::span<const std::byte>> buffers); \
  template void DeviceSum<W, C>::Impl::merge_partition_rows( \
      std::span<const std::span<const std::byte>> buffers, RowArrival arrival); \
  template bool DeviceSum<W, C>::Impl::reads_directly(int other); \
  template void DeviceSum<W, C>::Impl::merge_received( \
      std::span<const std::uint64_t> counts, const std::function<void(std::size_t, void*, void*, void*)>& receive, \
      RowArrival arrival); \
  template void DeviceSum<W, C>::Impl::merge_partition_rows(std::span<const PeerRows> sources, RowArrival arrival);
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_INSTANTIATE_IMPL_MERGE)
#undef PAULISTRINGS_INSTANTIATE_IMPL_MERGE

}  // namespace paulistrings::gpu
