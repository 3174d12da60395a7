// DeviceSum<W, C>::Impl's device memory (device_sum_impl.h): the constructor and release, buffers and
// their growth, upload and download, the layer counters, and compaction of the holes.

#include "paulistrings/gpu/device_sum_impl.h"

#include "paulistrings/gpu/allocation_faults.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace paulistrings::gpu {

template <int W, Coefficient C>
DeviceSum<W, C>::Impl::Impl(const PauliSum<W, C>& host, int ordinal, const GpuEngineOptions& options)
    : device(ordinal),
      num_qubits(host.num_qubits()),
      host_threads(options.host_threads),
      blocks(options.blocks),
      profile(options.profile) {
  profile.begin();
  hash_seed = host.hash().seed();
  const int count = device_count();
  if (count == 0) throw GpuUnavailable(unavailable_reason());
  if (ordinal < 0 || ordinal >= count) {
    throw GpuUnavailable(std::string("CUDA device ")
                             .append(std::to_string(ordinal))
                             .append(" does not exist (this machine has ")
                             .append(std::to_string(count))
                             .append(")"));
  }
  activate();
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  profile.mark(stream, "device start");
  try {
    allocate(counters, sizeof(kernels::LayerCounters), "layer counters");
    allocate(scratch, (kConeWord + W) * sizeof(unsigned long long), "pass scratch");
    allocate_pinned(reinterpret_cast<void**>(&host_counters), sizeof(kernels::LayerCounters),
                    "layer counters");
    allocate_pinned(reinterpret_cast<void**>(&host_scratch), (kConeWord + W) * sizeof(unsigned long long),
                    "pass scratch");
    upload(host);
    profile.mark(stream, "upload");
  } catch (...) {
    release();
    throw;
  }
}

template <int W, Coefficient C>
DeviceSum<W, C>::Impl::~Impl() {
  profile.report(device);
  release();
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::release() {
  // No status is checked here: release runs in the destructor (and on a failed construction), which
  // must not throw; a device that failed has reported it at an earlier checked call.
  cudaSetDevice(device);
  if (stream) cudaStreamSynchronize(stream);
  for (Buffer* b : {&keys, &coef, &owner, &members, &groups, &counts, &offsets, &scan_temp, &counters, &scratch,
                    &split_rows, &export_keys, &export_coef, &import_keys, &import_coef})
    free(*b);
  if (host_counters) cudaFreeHost(host_counters);
  if (host_scratch) cudaFreeHost(host_scratch);
  host_counters = nullptr;
  host_scratch = nullptr;
  if (stream) cudaStreamDestroy(stream);
  stream = nullptr;
}

template <int W, Coefficient C>
GpuOutOfMemory DeviceSum<W, C>::Impl::out_of_memory(std::size_t bytes, const char* what,
                                                    const char* where) const {
  std::size_t free_bytes = 0, total_bytes = 0;  // 0 in the message when the query fails
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) cudaGetLastError();
  return GpuOutOfMemory(std::string("GPU ")
                            .append(std::to_string(device))
                            .append(": out of ")
                            .append(where)
                            .append(" allocating ")
                            .append(gib(bytes))
                            .append(" for ")
                            .append(what)
                            .append(" (")
                            .append(gib(free_bytes))
                            .append(" free of ")
                            .append(gib(total_bytes))
                            .append("; the sum holds ")
                            .append(std::to_string(stored - holes))
                            .append(" terms in ")
                            .append(gib(bytes_now))
                            .append(" of device memory)"));
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::allocate(Buffer& buffer, std::size_t bytes, const char* what) {
  void* ptr = nullptr;
  const cudaError_t status = AllocationFaults::next() ? cudaErrorMemoryAllocation
                                                      : cudaMalloc(&ptr, std::max<std::size_t>(bytes, 8));
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: the device stays usable
    throw out_of_memory(bytes, what, "memory");
  }
  check(status, "cudaMalloc");
  free(buffer);
  buffer.ptr = ptr;
  buffer.bytes = bytes;
  bytes_now += bytes;
  bytes_peak = std::max(bytes_peak, bytes_now);
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::allocate_pinned(void** ptr, std::size_t bytes, const char* what) {
  const cudaError_t status =
      AllocationFaults::next() ? cudaErrorMemoryAllocation : cudaMallocHost(ptr, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw out_of_memory(bytes, what, "pinned host memory");
  }
  check(status, "cudaMallocHost");
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::free(Buffer& buffer) {
  if (!buffer.ptr) return;
  cudaFree(buffer.ptr);  // unchecked: release() frees from the destructor
  bytes_now -= buffer.bytes;
  buffer = {};
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::upload(const PauliSum<W, C>& host) {
  const std::size_t n = host.size();
  if (n > kMaxStoredTerms) {
    throw GpuOutOfMemory("a device sum holds at most " + std::to_string(kMaxStoredTerms) + " terms, the input has " +
                         std::to_string(n));
  }
  reserve(std::max<std::size_t>(n, 1024), false);
  check(cudaMemcpyAsync(keys.ptr, host.keys().data(), n * sizeof(Key), cudaMemcpyHostToDevice, stream),
        "upload keys");
  check(cudaMemcpyAsync(coef.ptr, host.coefficients().data(), n * sizeof(C), cudaMemcpyHostToDevice, stream),
        "upload coefficients");
  check(cudaStreamSynchronize(stream), "upload");
  stored = n;
  holes = 0;
  support.fill(0);
  for (const PauliString<W>& key : host.keys()) {
    for (int w = 0; w < W; ++w) support[w] |= key.x[w] | key.z[w];
  }
  tested.forget();
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::reserve(std::size_t terms, bool keep) {
  if (terms <= capacity && keys.ptr) return;
  if (terms > kMaxStoredTerms) {
    throw GpuOutOfMemory("a device sum holds at most " + std::to_string(kMaxStoredTerms) +
                         " stored terms; this layer needs " + std::to_string(terms));
  }
  std::size_t grown = std::min(kMaxStoredTerms, std::max(terms, capacity + capacity / 2));
  // One array at a time, so the peak is the sum plus one array, not two sums. Each array is replaced
  // only once its larger copy holds the same terms: a failure leaves both arrays holding the sum (the
  // keys possibly already in a larger array, capacity the smaller of the two).
  auto regrow = [&](Buffer& buffer, std::size_t width, const char* what) {
    if (buffer.ptr && buffer.bytes >= terms * width) return;  // grown already by a failed earlier call
    Buffer fresh;
    try {
      allocate(fresh, grown * width, what);
    } catch (const GpuOutOfMemory&) {
      if (grown == terms) throw;
      grown = terms;  // retry without headroom
      allocate(fresh, grown * width, what);
    }
    try {
      if (keep && stored) {
        check(cudaMemcpyAsync(fresh.ptr, buffer.ptr, stored * width, cudaMemcpyDeviceToDevice, stream),
              "grow copy");
      }
      check(cudaStreamSynchronize(stream), "grow");
    } catch (...) {
      free(fresh);
      throw;
    }
    std::swap(buffer, fresh);
    free(fresh);  // the old block
  };
  try {
    regrow(keys, sizeof(Key), "term keys");
    regrow(coef, sizeof(C), "coefficients");
  } catch (...) {
    capacity = std::min(keys.bytes / sizeof(Key), coef.bytes / sizeof(C));
    throw;
  }
  capacity = std::min(keys.bytes / sizeof(Key), coef.bytes / sizeof(C));
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::reserve_table(std::size_t terms, int orbit) {
  const std::size_t want = std::bit_ceil(std::max<std::size_t>(terms + terms / 2, 1024));
  const std::size_t orbit_size = static_cast<std::size_t>(orbit);
  // The table only grows, except when a layer would need new members for a table sized by an earlier,
  // larger sum (orbit entries per slot: a dense two-qubit layer after a cut): then it is sized for
  // this layer, so the members follow the sum and not its history.
  const bool members_grow = table_capacity * orbit_size > members_capacity;
  if (want > table_capacity || (members_grow && want < table_capacity)) {
    // Both arrays are allocated before either is replaced: a failure leaves the table as it was.
    Buffer new_owner, new_groups;
    try {
      allocate(new_owner, want * sizeof(std::uint32_t), "join table");
      allocate(new_groups, want * sizeof(std::uint32_t), "join group list");
    } catch (...) {
      free(new_owner);
      throw;
    }
    check(cudaMemsetAsync(new_owner.ptr, 0, want * sizeof(std::uint32_t), stream), "memset");
    free(owner);
    free(groups);
    owner = new_owner;
    groups = new_groups;
    table_capacity = want;
  }
  // Members are empty between layers at any size: a larger block from before stays in use.
  const std::size_t member_entries = table_capacity * orbit_size;
  if (member_entries > members_capacity) {
    allocate(members, member_entries * sizeof(std::uint32_t), "join members");
    check(cudaMemsetAsync(members.ptr, 0, member_entries * sizeof(std::uint32_t), stream), "memset");
    members_capacity = member_entries;
  }
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::reserve_scan(std::size_t n) {
  if (n > scan_capacity) {
    allocate(counts, n * sizeof(std::uint32_t), "scan counts");
    allocate(offsets, n * sizeof(std::uint32_t), "scan offsets");
    scan_capacity = n;
  }
  std::size_t scan_bytes = 0, sum_bytes = 0;
  kernels::exclusive_sum(nullptr, scan_bytes, nullptr, nullptr, n, stream);
  kernels::total_sum(nullptr, sum_bytes, nullptr, nullptr, n, stream);
  const std::size_t need = std::max(scan_bytes, sum_bytes);
  if (need > scan_temp.bytes) allocate(scan_temp, need, "scan scratch");
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::clear_table() {
  check(cudaMemsetAsync(owner.ptr, 0, table_capacity * sizeof(std::uint32_t), stream), "clear join table");
  check(cudaMemsetAsync(members.ptr, 0, members_capacity * sizeof(std::uint32_t), stream), "clear join members");
  check(cudaStreamSynchronize(stream), "clear join table");
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::zero_counters() {
  check(cudaMemsetAsync(counters.ptr, 0, sizeof(kernels::LayerCounters), stream), "memset counters");
}

template <int W, Coefficient C>
kernels::LayerCounters DeviceSum<W, C>::Impl::read_counters() {
  check(cudaMemcpyAsync(host_counters, counters.ptr, sizeof(kernels::LayerCounters), cudaMemcpyDeviceToHost, stream),
        "read counters");
  check(cudaStreamSynchronize(stream), "layer");
  return *host_counters;
}

template <int W, Coefficient C>
kernels::LayerCounters DeviceSum<W, C>::Impl::settle_counters() {
  const kernels::LayerCounters c = read_counters();
  holes = static_cast<std::size_t>(static_cast<long long>(holes) + c.hole_change);
  stored += static_cast<std::size_t>(c.appended);
  discarded += c.discarded;
  return c;
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::compact_if_worthwhile(bool force) {
  if (holes == 0 || (!force && holes * 8 < stored)) return;
  const std::size_t live = stored - holes;
  try {
    reserve_scan(stored);
    // Arrays over four times what the live terms need are gathered into smaller ones to give memory
    // back; when those cannot be allocated, the holes are filled in place all the same.
    if (!keep_capacity && capacity > 4 * std::max<std::size_t>(live, 1024) && compact_into_smaller_arrays())
      return;
    compact_in_place();
  } catch (const GpuOutOfMemory&) {
    if (force) throw;  // holes are harmless; compaction is only worth it when memory allows
  }
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::compact_in_place() {
  const std::size_t live = stored - holes;
  auto* flags = static_cast<std::uint32_t*>(counts.ptr);
  auto* ranks = static_cast<std::uint32_t*>(offsets.ptr);
  Launch::misplaced_flags(coef.ptr, live, stored, flags, stream);
  std::size_t bytes = scan_temp.bytes;
  kernels::exclusive_sum(scan_temp.ptr, bytes, flags, ranks, stored, stream);
  Launch::fill_holes(key_ptr(), coef.ptr, live, stored, ranks, flags, stream);
  check(cudaStreamSynchronize(stream), "compact");
  stored = live;
  holes = 0;
}

template <int W, Coefficient C>
bool DeviceSum<W, C>::Impl::compact_into_smaller_arrays() {
  const std::size_t live = stored - holes;
  const std::size_t cap = std::max<std::size_t>(live + live / 4, 1024);
  Buffer new_keys, new_coef;
  try {
    allocate(new_keys, cap * sizeof(Key), "compacted keys");
    allocate(new_coef, cap * sizeof(C), "compacted coefficients");
  } catch (const GpuOutOfMemory&) {
    free(new_keys);
    return false;
  }
  try {
    Launch::live_flags(coef.ptr, stored, static_cast<std::uint32_t*>(counts.ptr), stream);
    std::size_t bytes = scan_temp.bytes;
    kernels::exclusive_sum(scan_temp.ptr, bytes, static_cast<std::uint32_t*>(counts.ptr),
                           static_cast<std::uint32_t*>(offsets.ptr), stored, stream);
    Launch::compact(key_ptr(), coef.ptr, stored, static_cast<std::uint32_t*>(offsets.ptr),
                    static_cast<Key*>(new_keys.ptr), new_coef.ptr, stream);
    check(cudaStreamSynchronize(stream), "compact");
  } catch (...) {
    free(new_keys);
    free(new_coef);
    throw;
  }
  free(keys);
  free(coef);
  keys = new_keys;
  coef = new_coef;
  capacity = cap;
  stored = live;
  holes = 0;
  return true;
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::fetch_histogram(std::size_t bins) {
  check(cudaMemcpyAsync(host_scratch, histogram(), bins * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                        stream),
        "read histogram");
  check(cudaStreamSynchronize(stream), "histogram");
}

template <int W, Coefficient C>
void DeviceSum<W, C>::Impl::read_histogram(std::span<std::uint64_t> counts) {
  fetch_histogram(counts.size());
  for (std::size_t k = 0; k < counts.size(); ++k) counts[k] = host_scratch[k];
}

template <int W, Coefficient C>
PauliSum<W, C> DeviceSum<W, C>::Impl::download(int threads) {
  activate();
  check(cudaStreamSynchronize(stream), "download");
  PauliSum<W, C> result(num_qubits, hash_seed);
  const int bits = std::max(PauliSum<W, C>::bits_to_fit(stored - holes, 1024, 128), result.bucket_bits());
  if (download_by_bucket(result, bits, threads)) return result;
  // Without room on the device for the grouping: the columns as they are, sorted into buckets in place on
  // the host (holes dropped there; keys on the device are distinct).
  typename PauliSum<W, C>::KeyColumn host_keys(stored);  // written in full by the copies
  typename PauliSum<W, C>::CoefficientColumn host_coef(stored);
  check(cudaMemcpy(host_keys.data(), keys.ptr, stored * sizeof(Key), cudaMemcpyDeviceToHost), "download keys");
  check(cudaMemcpy(host_coef.data(), coef.ptr, stored * sizeof(C), cudaMemcpyDeviceToHost), "download coefficients");
  profile.mark(stream, "download copy");
  result.assign_distinct_columns(std::move(host_keys), std::move(host_coef), bits, threads);
  profile.mark(stream, "download order");
  return result;
}

template <int W, Coefficient C>
bool DeviceSum<W, C>::Impl::download_by_bucket(PauliSum<W, C>& result, int bits, int threads) {
  static_assert(sizeof(std::size_t) == sizeof(unsigned long long));
  const std::size_t n = stored;
  if (n == 0 || bits > 31) return false;
  const std::size_t buckets = std::size_t{1} << bits;
  Buffer pairs, sorted, rows, temp, starts, out_keys, out_coef;
  const auto release_all = [&] {
    for (Buffer* b : {&pairs, &sorted, &rows, &temp, &starts, &out_keys, &out_coef}) free(*b);
  };
  const auto u32 = [](const Buffer& b, std::size_t at) { return static_cast<std::uint32_t*>(b.ptr) + at; };
  try {
    std::size_t temp_bytes = 0;
    kernels::sort_pairs(nullptr, temp_bytes, nullptr, nullptr, nullptr, nullptr, n, bits + 1, stream);
    allocate(pairs, 2 * n * sizeof(std::uint32_t), "download grouping");
    allocate(sorted, 2 * n * sizeof(std::uint32_t), "download grouping");
    allocate(temp, std::max<std::size_t>(temp_bytes, 1), "download grouping");
    allocate(rows, std::max(bits, 1) * sizeof(Key), "download grouping");
    allocate(starts, (buckets + 1) * sizeof(unsigned long long), "download grouping");
    // The bucket of each term under the host sum's hash, the pairs (bucket, index) sorted by bucket with
    // the holes last, and where each bucket starts.
    std::vector<PauliString<W>> host_rows;
    for (int j = 0; j < bits; ++j) host_rows.push_back(BucketHash<W>::row(hash_seed, j));
    check(cudaMemcpyAsync(rows.ptr, host_rows.data(), host_rows.size() * sizeof(Key), cudaMemcpyHostToDevice,
                          stream),
          "download grouping rows");
    Launch::bucket_of(key_ptr(), coef.ptr, n, static_cast<const Key*>(rows.ptr), bits, u32(pairs, 0),
                      u32(pairs, n), stream);
    kernels::sort_pairs(temp.ptr, temp_bytes, u32(pairs, 0), u32(sorted, 0), u32(pairs, n), u32(sorted, n), n,
                        bits + 1, stream);
    kernels::bucket_starts(u32(sorted, 0), n, buckets, static_cast<unsigned long long*>(starts.ptr), stream);
    std::vector<std::size_t> start(buckets + 1);
    check(cudaMemcpyAsync(start.data(), starts.ptr, start.size() * sizeof(std::size_t),
                          cudaMemcpyDeviceToHost, stream),
          "download bucket offsets");
    check(cudaStreamSynchronize(stream), "download grouping");
    const std::size_t live = start[buckets];
    if (live == 0) {
      release_all();
      return false;
    }
    allocate(out_keys, live * sizeof(Key), "download grouping");
    allocate(out_coef, live * sizeof(C), "download grouping");
    Launch::gather(key_ptr(), coef.ptr, u32(sorted, n), live, static_cast<Key*>(out_keys.ptr), out_coef.ptr,
                   stream);
    profile.mark(stream, "download grouping");
    typename PauliSum<W, C>::KeyColumn host_keys(live);  // written in full by the copies
    typename PauliSum<W, C>::CoefficientColumn host_coef(live);
    check(cudaMemcpyAsync(host_keys.data(), out_keys.ptr, live * sizeof(Key), cudaMemcpyDeviceToHost, stream),
          "download keys");
    check(cudaMemcpyAsync(host_coef.data(), out_coef.ptr, live * sizeof(C), cudaMemcpyDeviceToHost, stream),
          "download coefficients");
    check(cudaStreamSynchronize(stream), "download");
    release_all();
    profile.mark(stream, "download copy");
    result.assign_bucketed_columns(std::move(host_keys), std::move(host_coef), std::move(start), bits,
                                   threads);
    profile.mark(stream, "download order");
    return true;
  } catch (const GpuOutOfMemory&) {
    release_all();
    return false;
  } catch (...) {
    release_all();
    throw;
  }
}

#define PAULISTRINGS_INSTANTIATE_IMPL_MEMORY(W, C)                                                       \
  template DeviceSum<W, C>::Impl::Impl(const PauliSum<W, C>& host, int ordinal,                          \
                                       const GpuEngineOptions& options);                                 \
  template DeviceSum<W, C>::Impl::~Impl();                                                               \
  template void DeviceSum<W, C>::Impl::release();                                                        \
  template GpuOutOfMemory DeviceSum<W, C>::Impl::out_of_memory(std::size_t bytes, const char* what,      \
                                                               const char* where) const;                 \
  template void DeviceSum<W, C>::Impl::allocate(Buffer& buffer, std::size_t bytes, const char* what);    \
  template void DeviceSum<W, C>::Impl::allocate_pinned(void** ptr, std::size_t bytes, const char* what); \
  template void DeviceSum<W, C>::Impl::free(Buffer& buffer);                                             \
  template void DeviceSum<W, C>::Impl::upload(const PauliSum<W, C>& host);                               \
  template void DeviceSum<W, C>::Impl::reserve(std::size_t terms, bool keep);                            \
  template void DeviceSum<W, C>::Impl::reserve_table(std::size_t terms, int orbit);                      \
  template void DeviceSum<W, C>::Impl::reserve_scan(std::size_t n);                                      \
  template void DeviceSum<W, C>::Impl::clear_table();                                                    \
  template void DeviceSum<W, C>::Impl::zero_counters();                                                  \
  template kernels::LayerCounters DeviceSum<W, C>::Impl::read_counters();                                \
  template kernels::LayerCounters DeviceSum<W, C>::Impl::settle_counters();                              \
  template void DeviceSum<W, C>::Impl::compact_if_worthwhile(bool force);                                \
  template void DeviceSum<W, C>::Impl::compact_in_place();                                               \
  template bool DeviceSum<W, C>::Impl::compact_into_smaller_arrays();                                    \
  template void DeviceSum<W, C>::Impl::fetch_histogram(std::size_t bins);                                \
  template void DeviceSum<W, C>::Impl::read_histogram(std::span<std::uint64_t> counts);                  \
  template PauliSum<W, C> DeviceSum<W, C>::Impl::download(int);                                          \
  template bool DeviceSum<W, C>::Impl::download_by_bucket(PauliSum<W, C>& result, int bits, int threads);
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_INSTANTIATE_IMPL_MEMORY)
#undef PAULISTRINGS_INSTANTIATE_IMPL_MEMORY

}  // namespace paulistrings::gpu
