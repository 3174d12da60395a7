// The GPU engine's host side: device memory, the per-layer pipeline and the layer passes (see
// device_sum.h for the design, kernels.cuh for the kernels). Compiled by the host compiler; only the
// CUDA runtime API is used here.

#include "paulistrings/gpu/device_sum.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "paulistrings/gpu/cuda_check.h"
#include "paulistrings/gpu/kernels.h"

namespace paulistrings::gpu {

namespace {

constexpr std::size_t kMaxStoredTerms = std::numeric_limits<std::uint32_t>::max() - 1;
/// A join may reserve room for its worst case without reading its counters back up to this size.
constexpr std::size_t kEagerReserveBytes = std::size_t{256} << 20;

std::string gib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

/// Where a layer's time goes, with GpuEngineOptions::profile: mark() synchronizes the stream and adds
/// the wall time since the previous mark to a phase, and the totals go to stderr when the sum is
/// destroyed. The synchronizations cost time of their own (each ~10 µs), so compare phases with each
/// other, not the total with an unprofiled run. Off: mark() is one branch.
class PhaseProfile {
 public:
  explicit PhaseProfile(bool on = false) : on_(on) {}
  bool on() const { return on_; }
  /// At the start of a layer: what happened since the previous layer ended (the driver, channel
  /// preparation, layer passes on the host) goes to "between layers".
  void start(cudaStream_t stream) {
    if (!on_) return;
    if (started_) {
      mark(stream, "between layers");
    } else {
      check(cudaStreamSynchronize(stream), "profile synchronization");
      last_ = Clock::now();
      started_ = true;
    }
  }
  void mark(cudaStream_t stream, const char* phase) {
    if (!on_) return;
    check(cudaStreamSynchronize(stream), "profile synchronization");
    const auto now = Clock::now();
    auto& entry = totals_[phase];
    entry.first += std::chrono::duration<double>(now - last_).count();
    entry.second += 1;
    last_ = now;
  }
  void report(int device) const {
    if (!on_ || totals_.empty()) return;
    double all = 0.0;
    for (const auto& [phase, entry] : totals_) all += entry.first;
    std::fprintf(stderr, "paulistrings GPU %d phases (s, calls, share):\n", device);
    for (const auto& [phase, entry] : totals_) {
      std::fprintf(stderr, "  %-16s %10.4f %9zu %6.1f%%\n", phase.c_str(), entry.first, entry.second,
                   all > 0.0 ? 100.0 * entry.first / all : 0.0);
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool on_ = false;
  bool started_ = false;
  Clock::time_point last_{};
  std::map<std::string, std::pair<double, std::size_t>> totals_;
};

/// One device allocation; the owner tracks the bytes held.
struct Buffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
};

}  // namespace

bool built_with_cuda() { return true; }

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

std::string unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable CUDA device: ").append(cudaGetErrorString(status));
  }
  if (count == 0) return "no CUDA device on this machine";
  return "";
}

std::string describe_device(int device) {
  const int count = device_count();
  if (device < 0 || device >= count) {
    std::string message("CUDA device ");
    message.append(std::to_string(device)).append(" does not exist (");
    message.append(count == 0 ? unavailable_reason() : std::to_string(count) + " device(s)").append(")");
    throw GpuUnavailable(message);
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  return std::string(prop.name)
      .append(" (sm_")
      .append(std::to_string(prop.major * 10 + prop.minor))
      .append(", ")
      .append(gib(prop.totalGlobalMem))
      .append(", ")
      .append(std::to_string(prop.multiProcessorCount))
      .append(" SMs)");
}

PeerBandwidth measure_peer_bandwidth(int from, int to, std::size_t bytes, int repeats, bool bidirectional) {
  describe_device(from);  // GpuUnavailable for a bad ordinal
  describe_device(to);
  if (bytes == 0 || repeats <= 0) throw std::invalid_argument("measure_peer_bandwidth: bytes and repeats must be > 0");
  PeerBandwidth result;
  int can = 0;
  if (from != to && cudaDeviceCanAccessPeer(&can, to, from) == cudaSuccess && can) result.peer_access = true;
  cudaGetLastError();
  const auto enable = [](int device, int peer) {
    check(cudaSetDevice(device), "cudaSetDevice");
    const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
    if (status != cudaSuccess && status != cudaErrorPeerAccessAlreadyEnabled) check(status, "cudaDeviceEnablePeerAccess");
    cudaGetLastError();
  };
  if (result.peer_access) {
    enable(to, from);
    enable(from, to);
  }
  void* a = nullptr;
  void* b = nullptr;
  void* a_back = nullptr;
  void* b_back = nullptr;
  cudaStream_t forward = nullptr, backward = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  struct Free {
    void** p;
    int device;
    ~Free() {
      if (*p) {
        cudaSetDevice(device);
        cudaFree(*p);
      }
    }
  } free_a{&a, from}, free_b{&b, to}, free_a_back{&a_back, from}, free_b_back{&b_back, to};
  cudaEvent_t backward_done = nullptr;
  // Streams and events are destroyed on every way out, a failed CUDA call (an exception) included.
  struct Release {
    cudaStream_t* streams[2];
    cudaEvent_t* events[3];
    ~Release() {
      for (cudaEvent_t* e : events)
        if (*e) cudaEventDestroy(*e);
      for (cudaStream_t* s : streams)
        if (*s) cudaStreamDestroy(*s);
    }
  } release{{&forward, &backward}, {&start, &stop, &backward_done}};
  check(cudaSetDevice(from), "cudaSetDevice");
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  if (bidirectional) check(cudaMalloc(&a_back, bytes), "cudaMalloc");
  check(cudaStreamCreateWithFlags(&forward, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaSetDevice(to), "cudaSetDevice");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  if (bidirectional) {
    check(cudaMalloc(&b_back, bytes), "cudaMalloc");
    check(cudaStreamCreateWithFlags(&backward, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  check(cudaSetDevice(from), "cudaSetDevice");
  const auto round = [&](int copies) {
    for (int k = 0; k < copies; ++k) {
      check(cudaMemcpyPeerAsync(b, to, a, from, bytes, forward), "cudaMemcpyPeerAsync");
      if (bidirectional) check(cudaMemcpyPeerAsync(a_back, from, b_back, to, bytes, backward), "cudaMemcpyPeerAsync");
    }
  };
  round(1);  // warm-up
  check(cudaStreamSynchronize(forward), "cudaStreamSynchronize");
  if (backward) check(cudaStreamSynchronize(backward), "cudaStreamSynchronize");
  if (backward) check(cudaEventCreate(&backward_done), "cudaEventCreate");
  check(cudaEventRecord(start, forward), "cudaEventRecord");
  if (backward) check(cudaStreamWaitEvent(backward, start, 0), "cudaStreamWaitEvent");
  round(repeats);
  if (backward) {
    check(cudaEventRecord(backward_done, backward), "cudaEventRecord");
    check(cudaStreamWaitEvent(forward, backward_done, 0), "cudaStreamWaitEvent");
  }
  check(cudaEventRecord(stop, forward), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0.0f;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  const double moved = static_cast<double>(bytes) * repeats * (bidirectional ? 2 : 1);
  result.bytes_per_second = moved / (static_cast<double>(ms) * 1e-3);
  return result;
}

template <int W, Coefficient C>
struct DeviceSum<W, C>::Impl {
  static constexpr bool kComplex = std::is_same_v<C, Complex>;
  using Key = kernels::Key<W>;
  using Launch = kernels::Launch<W, kComplex>;
  static_assert(sizeof(Key) == sizeof(PauliString<W>), "device keys share the layout of PauliString<W>");
  static_assert(sizeof(C) == (kComplex ? 16 : 8));

  int device = 0;
  std::size_t num_qubits = 0;
  std::uint64_t hash_seed = 0;
  cudaStream_t stream = nullptr;

  Buffer keys, coef;             // capacity terms each
  std::size_t capacity = 0;      // terms the arrays hold
  std::size_t stored = 0;        // terms stored, holes included
  std::size_t holes = 0;         // stored terms with a zero coefficient
  Buffer owner, members, groups, counts, offsets, scan_temp;
  std::size_t table_capacity = 0, members_capacity = 0, scan_capacity = 0;
  Buffer counters, scratch;      // LayerCounters; histograms, totals, support words
  kernels::LayerCounters* host_counters = nullptr;  // pinned
  unsigned long long* host_scratch = nullptr;       // pinned, 2048 + 8 + W words
  /// The pass scratch: a 2048-bin histogram, 8 words of totals, then W words of a merge's light cone.
  static constexpr std::size_t kConeWord = 2048 + 8;
  std::size_t bytes_now = 0, bytes_peak = 0;
  double discarded = 0.0;  // Σ|c|² dropped since the last reset (settle_counters adds)

  std::array<std::uint64_t, W> support{};
  Truncation tested;
  bool tested_valid = false;
  std::size_t skipped = 0;
  PhaseProfile profile;

  Impl(const PauliSum<W, C>& host, int ordinal, const GpuEngineOptions& options)
      : device(ordinal), num_qubits(host.num_qubits()), profile(options.profile) {
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
    try {
      allocate(counters, sizeof(kernels::LayerCounters), "layer counters");
      allocate(scratch, (kConeWord + W) * sizeof(unsigned long long), "pass scratch");
      check(cudaMallocHost(reinterpret_cast<void**>(&host_counters), sizeof(kernels::LayerCounters)),
            "cudaMallocHost");
      check(cudaMallocHost(reinterpret_cast<void**>(&host_scratch), (kConeWord + W) * sizeof(unsigned long long)),
            "cudaMallocHost");
      upload(host);
    } catch (...) {
      release();
      throw;
    }
  }
  ~Impl() {
    profile.report(device);
    release();
  }

  void release() {
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

  void activate() const { check(cudaSetDevice(device), "cudaSetDevice"); }

  void allocate(Buffer& buffer, std::size_t bytes, const char* what) {
    void* ptr = nullptr;
    const cudaError_t status = cudaMalloc(&ptr, std::max<std::size_t>(bytes, 8));
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      std::size_t free_bytes = 0, total_bytes = 0;  // 0 in the message when the query fails
      if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) cudaGetLastError();
      throw GpuOutOfMemory(std::string("GPU ")
                               .append(std::to_string(device))
                               .append(": out of memory allocating ")
                               .append(gib(bytes))
                               .append(" for ")
                               .append(what)
                               .append(" (")
                               .append(gib(free_bytes))
                               .append(" free of ")
                               .append(gib(total_bytes))
                               .append("; the sum holds ")
                               .append(std::to_string(stored - holes))
                               .append(" terms)"));
    }
    check(status, "cudaMalloc");
    free(buffer);
    buffer.ptr = ptr;
    buffer.bytes = bytes;
    bytes_now += bytes;
    bytes_peak = std::max(bytes_peak, bytes_now);
  }
  void free(Buffer& buffer) {
    if (!buffer.ptr) return;
    cudaFree(buffer.ptr);  // unchecked: release() frees from the destructor
    bytes_now -= buffer.bytes;
    buffer = {};
  }

  Key* key_ptr() const { return static_cast<Key*>(keys.ptr); }

  void upload(const PauliSum<W, C>& host) {
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
    tested_valid = false;
  }

  /// Grows the term arrays to hold `terms` (keeping the first `stored` when `keep`).
  void reserve(std::size_t terms, bool keep) {
    if (terms <= capacity && keys.ptr) return;
    if (terms > kMaxStoredTerms) {
      throw GpuOutOfMemory("a device sum holds at most " + std::to_string(kMaxStoredTerms) +
                           " stored terms; this layer needs " + std::to_string(terms));
    }
    std::size_t grown = std::min(kMaxStoredTerms, std::max(terms, capacity + capacity / 2));
    // One array at a time, so the peak is the sum plus one array, not two sums.
    auto regrow = [&](Buffer& buffer, std::size_t width, const char* what) {
      Buffer fresh;
      std::swap(fresh, buffer);  // `buffer` empty, the old block in `fresh`
      try {
        allocate(buffer, grown * width, what);
      } catch (const GpuOutOfMemory&) {
        if (grown == terms) {
          std::swap(fresh, buffer);
          throw;
        }
        grown = terms;  // retry without headroom
        allocate(buffer, grown * width, what);
      }
      if (keep && stored) {
        check(cudaMemcpyAsync(buffer.ptr, fresh.ptr, stored * width, cudaMemcpyDeviceToDevice, stream), "grow copy");
      }
      check(cudaStreamSynchronize(stream), "grow");
      free(fresh);
    };
    regrow(keys, sizeof(Key), "term keys");
    try {
      regrow(coef, sizeof(C), "coefficients");
    } catch (...) {
      // The keys already moved; capacity stays at the smaller of the two arrays.
      capacity = std::min(keys.bytes / sizeof(Key), coef.bytes / sizeof(C));
      throw;
    }
    capacity = std::min(keys.bytes / sizeof(Key), coef.bytes / sizeof(C));
  }

  /// Join table with room for `terms` entries (load ≤ 2/3) and orbits of `orbit` members.
  void reserve_table(std::size_t terms, int orbit) {
    const std::size_t want = std::bit_ceil(std::max<std::size_t>(terms + terms / 2, 1024));
    if (want > table_capacity) {
      allocate(owner, want * sizeof(std::uint32_t), "join table");
      check(cudaMemsetAsync(owner.ptr, 0, want * sizeof(std::uint32_t), stream), "memset");
      allocate(groups, want * sizeof(std::uint32_t), "join group list");
      table_capacity = want;
      members_capacity = 0;  // re-zeroed below at the new size
    }
    const std::size_t member_entries = table_capacity * static_cast<std::size_t>(orbit);
    if (member_entries > members_capacity) {
      allocate(members, member_entries * sizeof(std::uint32_t), "join members");
      check(cudaMemsetAsync(members.ptr, 0, member_entries * sizeof(std::uint32_t), stream), "memset");
      members_capacity = member_entries;
    }
  }
  void reserve_scan(std::size_t n) {
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
  /// Empties the join table after a layer that stopped between insert and write.
  void clear_table() {
    check(cudaMemsetAsync(owner.ptr, 0, table_capacity * sizeof(std::uint32_t), stream), "clear join table");
    check(cudaMemsetAsync(members.ptr, 0, members_capacity * sizeof(std::uint32_t), stream), "clear join members");
    check(cudaStreamSynchronize(stream), "clear join table");
  }

  kernels::LayerArgs<W> args(const Truncation& truncation) const {
    kernels::LayerArgs<W> a;
    a.keys = key_ptr();
    a.coef = coef.ptr;
    a.size = stored;
    a.program = program_of(truncation);
    a.counters = static_cast<kernels::LayerCounters*>(counters.ptr);
    a.table.owner = static_cast<std::uint32_t*>(owner.ptr);
    a.table.members = static_cast<std::uint32_t*>(members.ptr);
    a.table.groups = static_cast<std::uint32_t*>(groups.ptr);
    a.table.capacity = table_capacity;
    a.append_base = stored;
    return a;
  }

  static kernels::TermProgram program_of(const Truncation& truncation) {
    kernels::TermProgram program;
    if (!truncation.has_term_test()) return program;
    const auto steps = truncation.term_test_program();
    if (steps.size() > static_cast<std::size_t>(kernels::kMaxProgram)) {
      throw std::invalid_argument("the GPU engine evaluates truncation policies of at most " +
                                  std::to_string(kernels::kMaxProgram) + " nodes; this one has " +
                                  std::to_string(steps.size()));
    }
    program.length = static_cast<int>(steps.size());
    for (std::size_t k = 0; k < steps.size(); ++k) {
      using Op = Truncation::TermTestStep::Op;
      switch (steps[k].op) {
        case Op::coeff:
          program.op[k] = kernels::TermProgram::coeff;
          program.epsilon_squared[k] = steps[k].epsilon < 0.0 ? -1.0 : steps[k].epsilon * steps[k].epsilon;
          break;
        case Op::weight:
          program.op[k] = kernels::TermProgram::weight;
          program.max_weight[k] = static_cast<std::uint32_t>(std::min<std::size_t>(steps[k].max_weight, 1u << 30));
          program.uses_weight = true;
          break;
        case Op::all_of:
          program.op[k] = kernels::TermProgram::all_of;
          break;
        case Op::any_of:
          program.op[k] = kernels::TermProgram::any_of;
          break;
        default:
          program.op[k] = kernels::TermProgram::keep_all;
      }
    }
    return program;
  }

  bool tested_for(const Truncation& truncation) const {
    return !truncation.has_term_test() || (tested_valid && tested.identity() == truncation.identity());
  }

  // The light cone, as in the CPU engine: a layer whose support misses every term's support, and which
  // maps the identity on its support to itself alone, changes nothing.
  bool skips_layer(const PreparedChannel<W>& table, const Truncation& truncation) const {
    if (!tested_for(truncation)) return false;
    if (table.form == PreparedChannel<W>::Form::rotation) {
      for (int w = 0; w < W; ++w) {
        if ((table.generator.x[w] | table.generator.z[w]) & support[w]) return false;
      }
      return true;
    }
    if (table.fanout[0] != 1 || table.outputs[0][0].pattern != 0 || table.outputs[0][0].amplitude != Complex(1.0))
      return false;
    for (int i = 0; i < table.support_size; ++i) {
      const Qubit q = table.qubits[static_cast<std::size_t>(i)];
      if ((support[q / 64] >> (q % 64)) & 1) return false;
    }
    return true;
  }
  void add_support(const PreparedChannel<W>& table) {
    if (table.form == PreparedChannel<W>::Form::rotation) {
      for (int w = 0; w < W; ++w) support[w] |= table.generator.x[w] | table.generator.z[w];
      return;
    }
    for (int i = 0; i < table.support_size; ++i) {
      const Qubit q = table.qubits[static_cast<std::size_t>(i)];
      support[q / 64] |= std::uint64_t{1} << (q % 64);
    }
  }

  static kernels::LocalTable local_table(const PreparedChannel<W>& table) {
    kernels::LocalTable t;
    t.support_size = table.support_size;
    t.qubit[0] = static_cast<int>(table.qubits[0]);
    t.qubit[1] = static_cast<int>(table.support_size == 2 ? table.qubits[1] : table.qubits[0]);
    const int patterns = table.support_size == 2 ? 16 : 4;
    for (int s = 0; s < 16; ++s) t.image[s] = 0xff;
    for (int s = 0; s < patterns; ++s) {
      for (int k = 0; k < table.fanout[s]; ++k) {
        const auto& o = table.outputs[s][k];
        t.amp_re[o.pattern][s] = o.amplitude.real();
        t.amp_im[o.pattern][s] = o.amplitude.imag();
      }
      if (table.fanout[s] == 1) t.image[s] = table.outputs[s][0].pattern;
    }
    // Reduced echelon basis of the span of the realized deltas (pivot = highest bit).
    std::vector<int> basis;
    for (std::uint8_t d : table.delta_patterns) {
      int v = d;
      for (int b : basis) {
        if (v & (1 << (std::bit_width(static_cast<unsigned>(b)) - 1))) v ^= b;
      }
      if (v == 0) continue;
      const int pivot = 1 << (std::bit_width(static_cast<unsigned>(v)) - 1);
      for (int& b : basis) {
        if (b & pivot) b ^= v;
      }
      basis.push_back(v);
    }
    t.orbit_size = 1 << basis.size();
    for (int k = 0; k < t.orbit_size; ++k) {
      int combo = 0;
      for (std::size_t i = 0; i < basis.size(); ++i) {
        if ((k >> i) & 1) combo ^= basis[i];
      }
      t.combo[k] = static_cast<std::uint8_t>(combo);
    }
    for (int s = 0; s < patterns; ++s) {
      int rep = s, coord = 0;
      for (std::size_t i = 0; i < basis.size(); ++i) {
        const int pivot = 1 << (std::bit_width(static_cast<unsigned>(basis[i])) - 1);
        if (s & pivot) {
          rep ^= basis[i];
          coord |= 1 << i;
        }
      }
      t.rep[s] = static_cast<std::uint8_t>(rep);
      t.coord[s] = static_cast<std::uint8_t>(coord);
      // A pattern that maps only to itself and receives from nobody else is rescaled in place.
      bool isolated = true;
      for (int o = 0; o < patterns; ++o) {
        if (o == s) continue;
        if (t.amp_re[o][s] != 0.0 || t.amp_im[o][s] != 0.0 || t.amp_re[s][o] != 0.0 || t.amp_im[s][o] != 0.0)
          isolated = false;
      }
      t.join[s] = isolated ? 0 : 1;
    }
    return t;
  }

  static kernels::RotationTable<W> rotation_table(const PreparedChannel<W>& table) {
    kernels::RotationTable<W> t;
    for (int w = 0; w < W; ++w) {
      t.generator.x[w] = table.generator.x[w];
      t.generator.z[w] = table.generator.z[w];
    }
    t.cos_theta = table.cos_theta;
    t.sin_signed = table.sin_signed;
    for (int word = 0; word < 2 * W; ++word) {
      const std::uint64_t bits = word < W ? t.generator.x[word] : t.generator.z[word - W];
      if (bits) {
        t.pivot_word = word;
        t.pivot_bit = bits & (~bits + 1);
        break;
      }
    }
    return t;
  }

  void zero_counters() {
    check(cudaMemsetAsync(counters.ptr, 0, sizeof(kernels::LayerCounters), stream), "memset counters");
  }
  /// Reads the layer counters back (a synchronization).
  kernels::LayerCounters read_counters() {
    check(cudaMemcpyAsync(host_counters, counters.ptr, sizeof(kernels::LayerCounters), cudaMemcpyDeviceToHost, stream),
          "read counters");
    check(cudaStreamSynchronize(stream), "layer");
    return *host_counters;
  }
  /// Reads the layer counters back at the end of a layer and applies them (appended terms join the sum).
  kernels::LayerCounters settle_counters() {
    const kernels::LayerCounters c = read_counters();
    holes = static_cast<std::size_t>(static_cast<long long>(holes) + c.hole_change);
    stored += static_cast<std::size_t>(c.appended);
    discarded += c.discarded;
    return c;
  }

  /// Between a join's insert and write: makes room for every key the write pass can append. The bound
  /// groups · orbit − members (absent orbit members) needs no pass of its own; only when it does not
  /// fit does a count pass give the exact number. Throws GpuOutOfMemory with the table cleared and the
  /// sum unchanged when even that does not fit.
  template <class Count>
  void make_room_for_join(int orbit, Count&& count_pass) {
    // bound ≤ (orbit − 1) · members ≤ (orbit − 1) · stored: when that already fits, or a sum that
    // small is cheap to over-allocate, the read-back (a synchronization, ~10 µs) is skipped. That is
    // what keeps the many layers of a small sum cheap.
    const std::size_t worst = stored * static_cast<std::size_t>(orbit - 1);
    if (stored + worst <= capacity) return;
    if ((stored + worst) * (sizeof(Key) + sizeof(C)) <= kEagerReserveBytes) {
      try {
        reserve(stored + worst, true);
        return;
      } catch (const GpuOutOfMemory&) {
        // fall through to the measured bound
      }
    }
    const kernels::LayerCounters c = read_counters();
    const std::size_t bound = static_cast<std::size_t>(c.groups) * static_cast<std::size_t>(orbit) -
                              static_cast<std::size_t>(c.members);
    if (stored + bound <= kMaxStoredTerms) {
      try {
        reserve(stored + bound, true);
        return;
      } catch (const GpuOutOfMemory&) {
        // fall through to the exact count
      }
    }
    try {
      count_pass();
      const std::size_t fresh = static_cast<std::size_t>(read_counters().fresh);
      if (stored + fresh > kMaxStoredTerms) {
        throw GpuOutOfMemory("this layer would hold " + std::to_string(stored + fresh) +
                             " terms on one device, over the limit of " + std::to_string(kMaxStoredTerms));
      }
      reserve(stored + fresh, true);
    } catch (...) {
      clear_table();
      throw;
    }
  }

  void rotation_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
    const auto t = rotation_table(table);
    reserve_table(stored, 2);
    kernels::LayerArgs<W> a = args(truncation);
    a.test_unchanged = !tested_for(truncation);  // commuting terms are not rewritten
    Launch::join_insert_rotation(a, t, stream);
    profile.mark(stream, "rotation insert");
    make_room_for_join(2, [&] { Launch::join_count_rotation(args(truncation), t, stream); });
    profile.mark(stream, "join room");
    Launch::join_write_rotation(args(truncation), t, stream);  // args again: the arrays may have moved
    profile.mark(stream, "rotation write");
  }

  void local_join_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
    const kernels::LocalTable t = local_table(table);
    reserve_table(stored, t.orbit_size);
    kernels::LayerArgs<W> a = args(truncation);
    Launch::join_insert_local(a, t, stream);
    profile.mark(stream, "local insert");
    make_room_for_join(t.orbit_size, [&] { Launch::join_count_local(args(truncation), t, stream); });
    profile.mark(stream, "join room");
    a = args(truncation);
    Launch::join_write_local(a, t, stream);
    profile.mark(stream, "local write");
    rescale_outside_join(a, t, truncation);
  }

  /// After a join's write pass: the patterns outside the join only rescale (or re-test). After the join
  /// (so a failed growth leaves the sum untouched), over the terms that were there before the layer
  /// (`a`: the write pass's arguments; appended terms are past a.size).
  void rescale_outside_join(const kernels::LayerArgs<W>& a, const kernels::LocalTable& t,
                            const Truncation& truncation) {
    bool rescale_needed = !tested_for(truncation);
    for (int s = 0; s < 16; ++s) {
      if (!t.join[s] && (t.amp_re[s][s] != 1.0 || t.amp_im[s][s] != 0.0)) rescale_needed = true;
    }
    if (rescale_needed) Launch::rescale(a, t, stream);
  }

  /// Removes the holes when they pile up (or always with `force`). In place (the live terms past the
  /// first stored − holes fill the holes below: no allocation) unless the arrays are over four times
  /// what the live terms need, in which case they are copied into smaller ones to give memory back.
  void compact_if_worthwhile(bool force) {
    if (holes == 0 || (!force && holes * 8 < stored)) return;
    const std::size_t live = stored - holes;
    if (capacity <= 4 * std::max<std::size_t>(live, 1024)) {
      try {
        reserve_scan(stored);
        auto* flags = static_cast<std::uint32_t*>(counts.ptr);
        auto* ranks = static_cast<std::uint32_t*>(offsets.ptr);
        Launch::misplaced_flags(coef.ptr, live, stored, flags, stream);
        std::size_t bytes = scan_temp.bytes;
        kernels::exclusive_sum(scan_temp.ptr, bytes, flags, ranks, stored, stream);
        Launch::fill_holes(key_ptr(), coef.ptr, live, stored, ranks, flags, stream);
        check(cudaStreamSynchronize(stream), "compact");
        stored = live;
        holes = 0;
      } catch (const GpuOutOfMemory&) {
        if (force) throw;
      }
      return;
    }
    try {
      reserve_scan(stored);
      Launch::live_flags(coef.ptr, stored, static_cast<std::uint32_t*>(counts.ptr), stream);
      std::size_t bytes = scan_temp.bytes;
      kernels::exclusive_sum(scan_temp.ptr, bytes, static_cast<std::uint32_t*>(counts.ptr),
                             static_cast<std::uint32_t*>(offsets.ptr), stored, stream);
      Buffer new_keys, new_coef;
      const std::size_t cap = std::max<std::size_t>(live + live / 4, 1024);
      allocate(new_keys, cap * sizeof(Key), "compacted keys");
      try {
        allocate(new_coef, cap * sizeof(C), "compacted coefficients");
      } catch (...) {
        free(new_keys);
        throw;
      }
      Launch::compact(key_ptr(), coef.ptr, stored, static_cast<std::uint32_t*>(offsets.ptr),
                      static_cast<Key*>(new_keys.ptr), new_coef.ptr, stream);
      check(cudaStreamSynchronize(stream), "compact");
      free(keys);
      free(coef);
      keys = new_keys;
      coef = new_coef;
      capacity = cap;
      stored = live;
      holes = 0;
    } catch (const GpuOutOfMemory&) {
      if (force) throw;  // holes are harmless; compaction is only worth it when memory allows
    }
  }

  double apply_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
    activate();
    profile.start(stream);
    if (skips_layer(table, truncation)) {
      ++skipped;
      profile.mark(stream, "skipped layer");
      return 0.0;
    }
    zero_counters();
    discarded = 0.0;
    if (table.form == PreparedChannel<W>::Form::rotation) {
      rotation_layer(table, truncation);
    } else if (table.table_class == TableClass::key_preserving) {
      Launch::rescale(args(truncation), local_table(table), stream);
      profile.mark(stream, "rescale");
    } else if (table.table_class == TableClass::permutation) {
      const kernels::LocalTable t = local_table(table);
      bool vanishing = false;  // a pattern with no image: its terms vanish and their keys must go
      for (int s = 0; s < (table.support_size == 2 ? 16 : 4); ++s) vanishing |= t.image[s] == 0xff;
      if (vanishing) compact_if_worthwhile(true);
      Launch::permute(args(truncation), t, stream);
      profile.mark(stream, "permute");
      if (vanishing) {
        settle_counters();
        compact_if_worthwhile(true);
        zero_counters();
      }
    } else {
      local_join_layer(table, truncation);
    }
    settle_counters();
    profile.mark(stream, "settle");
    tested = truncation;
    tested_valid = true;
    if (table.table_class != TableClass::key_preserving) add_support(table);
    compact_if_worthwhile(false);
    profile.mark(stream, "compact");
    return discarded;
  }

  LayerPassResult finalize_layer(const Truncation& truncation) {
    LayerPassResult result;
    const auto steps = truncation.layer_pass_steps();
    if (steps.empty()) return result;
    activate();
    if (truncation.contains(Truncation::Kind::collapse_sample)) {
      // The draw walks the terms in key order: done on the host, then the sum goes back up.
      PauliSum<W, C> host = download();
      result = truncation.finalize_layer(host);
      upload(host);
      tested_valid = false;
      return result;
    }
    discarded = 0.0;
    for (const auto& step : steps) {
      const std::size_t live = stored - holes;
      if (live <= step.count) continue;
      zero_counters();
      if (step.kind == Truncation::Kind::approx_topn) {
        approx_topn_cut(step.count);
      } else {
        topn_cut(step.count);
      }
      settle_counters();
    }
    result.discarded_weight = discarded;
    compact_if_worthwhile(false);
    return result;
  }

  unsigned long long* histogram() const { return static_cast<unsigned long long*>(scratch.ptr); }

  /// Reads the first `bins` words of the device histogram into host_scratch (a synchronization).
  void fetch_histogram(std::size_t bins) {
    check(cudaMemcpyAsync(host_scratch, histogram(), bins * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                          stream),
          "read histogram");
    check(cudaStreamSynchronize(stream), "histogram");
  }

  void approx_topn_cut(std::size_t n) {
    Launch::exponent_histogram(coef.ptr, stored, histogram(), stream);
    fetch_histogram(2048);
    std::size_t running = 0;
    int lowest = 2048;  // the same walk as approx_topn_lowest_bin on the CPU
    for (int bin = 2047; bin >= 0; --bin) {
      running += host_scratch[bin];
      if (running > n) break;
      lowest = bin;
    }
    Launch::cut(coef.ptr, stored, 0, lowest, 0.0, static_cast<kernels::LayerCounters*>(counters.ptr),
                stream);
  }

  void topn_cut(std::size_t n) {
    auto* counters_ptr = static_cast<kernels::LayerCounters*>(counters.ptr);
    if (n == 0) {
      Launch::cut(coef.ptr, stored, 3, 0, 0.0, counters_ptr, stream);
      return;
    }
    // Radix select of the n-th largest |c|² among live, non-NaN terms: 8-bit digits from the top.
    std::uint64_t prefix = 0, mask = 0;
    std::size_t rank = n, larger = 0, equal = 0;
    for (int shift = 56; shift >= 0; shift -= 8) {
      Launch::digit_histogram(coef.ptr, stored, prefix, mask, shift, histogram(), stream);
      fetch_histogram(256);
      if (shift == 56) {
        std::size_t candidates = 0;
        for (int d = 0; d < 256; ++d) candidates += host_scratch[d];
        if (candidates <= n) {  // every non-NaN term fits: keep them all (NaNs go)
          Launch::cut(coef.ptr, stored, 1, 0, -std::numeric_limits<double>::infinity(), counters_ptr,
                      stream);
          return;
        }
      }
      int digit = 255;
      for (; digit > 0; --digit) {
        if (host_scratch[digit] >= rank) break;
        rank -= host_scratch[digit];
        larger += host_scratch[digit];
      }
      equal = host_scratch[digit];
      prefix |= static_cast<std::uint64_t>(digit) << shift;
      mask |= std::uint64_t{0xff} << shift;
    }
    const double value = std::bit_cast<double>(prefix);
    // The tie group at the pivot is kept whole when it fits, otherwise dropped whole.
    const bool keep_ties = larger + equal <= n;
    Launch::cut(coef.ptr, stored, keep_ties ? 1 : 2, 0, value, counters_ptr, stream);
  }

  // ---- partitioned runs ----

  Buffer split_rows, export_keys, export_coef, import_keys, import_coef;

  /// Where export_on_device left each slot's rows in export_keys / export_coef.
  struct ExportLayout {
    std::vector<std::size_t> count, first;
  };

  /// Moves the live terms of other partitions out: by part(key), or with `orbits` (a general local
  /// table) by the partition of each term's orbit representative — part(key) ⊕ part(its delta to the
  /// representative), the delta read from the term's pattern (route_orbits' first step).
  ExportLayout export_on_device(std::span<const PauliString<W>> rows, std::uint32_t self,
                                std::span<const std::uint32_t> offsets, const PreparedChannel<W>* orbits = nullptr) {
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

  /// Whether a remote layer of `table` can run fused with its export: a rotation whose generator g
  /// belongs to the one partner offset (every delta of the layer crosses, so no orbit meets here).
  static bool fuses_rotation_with_export(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                         std::span<const std::uint32_t> offsets) {
    if (table.form != PreparedChannel<W>::Form::rotation || offsets.size() != 1 || rows.size() > 16) return false;
    const std::uint32_t part = row_parities(rows, table.generator);
    return part != 0 && part == offsets[0];
  }

  /// The routing of a general table's remote layer fused with its export (JoinExport::slot by delta
  /// pattern), or nothing when it cannot be: not a general local table, too many rows or offsets, or a
  /// realized delta of no listed offset (the two steps then report the stray term).
  static std::optional<kernels::JoinExport<W>> join_export(const PreparedChannel<W>& table,
                                                           std::span<const PauliString<W>> rows,
                                                           std::span<const std::uint32_t> offsets) {
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

  /// apply_layer(table, Truncation()) then export_on_device(rows, self, offsets), fused where it can be:
  /// - a rotation whose generator crosses (fuses_rotation_with_export): one count pass and one pass that
  ///   rescales the anticommuting terms in place and writes their partners straight into the export (no
  ///   join table, no appended terms, no holes);
  /// - a general table (join_export): the join's count and write passes route each new key by its
  ///   delta, leavers straight into the export (never appended, no export pass over the stored terms,
  ///   no holes from them).
  /// Every live term must belong to `self` (the partition driver's invariant between layers).
  ExportLayout apply_and_export(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                std::uint32_t self, std::span<const std::uint32_t> offsets) {
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
    tested = none;
    tested_valid = true;
    add_support(table);
    compact_if_worthwhile(false);
    return layout;
  }

  void remote_rotation_and_export(const PreparedChannel<W>& table, ExportLayout& layout) {
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

  /// DeviceSum::routes_orbits: a general table that fuses with its export, whose offsets with 0 are
  /// closed under ⊕ (then every element of its delta span, the delta of a member to its representative
  /// included, names a partner or none).
  static bool routes_orbits(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                            std::span<const std::uint32_t> offsets) {
    if (!join_export(table, rows, offsets)) return false;
    for (const std::uint32_t a : offsets) {
      for (const std::uint32_t b : offsets) {
        if (a != b && std::find(offsets.begin(), offsets.end(), a ^ b) == offsets.end()) return false;
      }
    }
    return true;
  }

  ExportLayout export_orbit_members(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                    std::uint32_t self, std::span<const std::uint32_t> offsets) {
    if (!routes_orbits(table, rows, offsets)) {
      throw std::logic_error("export_orbit_members: this layer's orbits cannot be routed");
    }
    return export_on_device(rows, self, offsets, &table);
  }

  /// DeviceSum::apply_and_export_final: a permutation is the layer with the test, then the export; a
  /// routed general table is the fused join with the test on every output, leavers included.
  ExportLayout apply_and_export_final(const PreparedChannel<W>& table, std::span<const PauliString<W>> rows,
                                      std::uint32_t self, std::span<const std::uint32_t> offsets,
                                      const Truncation& truncation, double& dropped) {
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
    tested = truncation;
    tested_valid = true;
    add_support(table);
    compact_if_worthwhile(false);
    dropped = discarded;
    return layout;
  }

  /// The join of a general table with its leavers routed to the export: insert, the routed count pass
  /// (new stayers and leavers per slot, one read-back), room for both, the routed write pass, then the
  /// rescale of the patterns outside the join (they stay: delta 0). Throws GpuOutOfMemory with the
  /// table cleared and the sum unchanged when the room cannot be made.
  void join_and_export(const PreparedChannel<W>& table, kernels::JoinExport<W> e, ExportLayout& layout,
                       const Truncation& truncation) {
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

  /// Export arrays of at least `rows` rows (contents not kept).
  void reserve_export(std::size_t rows) {
    if (rows == 0) return;
    if (export_keys.bytes < rows * sizeof(Key)) allocate(export_keys, rows * sizeof(Key), "export keys");
    if (export_coef.bytes < rows * sizeof(C)) allocate(export_coef, rows * sizeof(C), "export coefficients");
  }

  std::vector<std::vector<std::byte>> export_partition_rows(std::span<const PauliString<W>> rows,
                                                            std::uint32_t self,
                                                            std::span<const std::uint32_t> offsets) {
    return download_export(export_on_device(rows, self, offsets));
  }

  /// Copies an export (export_on_device's layout) into one host buffer per slot.
  std::vector<std::vector<std::byte>> download_export(const ExportLayout& layout) {
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

  std::vector<PeerRows> export_partition_rows_on_device(std::span<const PauliString<W>> rows, std::uint32_t self,
                                                        std::span<const std::uint32_t> offsets) {
    return peer_rows(export_on_device(rows, self, offsets));
  }

  /// An export (export_on_device's layout) as device addresses.
  std::vector<PeerRows> peer_rows(const ExportLayout& layout) const {
    std::vector<PeerRows> out(layout.count.size());
    for (std::size_t k = 0; k < out.size(); ++k) {
      out[k].device = device;
      out[k].count = layout.count[k];
      out[k].keys = static_cast<const Key*>(export_keys.ptr) + layout.first[k];
      out[k].coefficients = static_cast<const C*>(export_coef.ptr) + layout.first[k];
    }
    return out;
  }

  /// Room for `total` more terms, their key index, and import buffers of `largest` rows.
  void reserve_merge(std::size_t total, std::size_t largest) {
    if (total == 0) return;
    reserve(stored + total, true);
    reserve_table(stored + total, 1);
    if (largest > 0) {
      if (import_keys.bytes < largest * sizeof(Key)) allocate(import_keys, largest * sizeof(Key), "import keys");
      if (import_coef.bytes < largest * sizeof(C)) allocate(import_coef, largest * sizeof(C), "import coefficients");
    }
  }

  static std::pair<std::size_t, std::size_t> total_and_largest(std::span<const std::uint64_t> counts) {
    std::size_t total = 0, largest = 0;
    for (std::uint64_t n : counts) {
      total += n;
      largest = std::max<std::size_t>(largest, n);
    }
    return {total, largest};
  }

  /// Merges `batches` batches of rows; source(k) gives batch k's row count and device addresses (it may
  /// fill the import buffers, which hold `largest` rows, and return them).
  template <class Source>
  void merge_batches(std::size_t batches, std::size_t total, std::size_t largest, Source&& source) {
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
    tested_valid = false;  // received terms have not met the policy
  }

  struct Batch {
    std::size_t rows;
    const void* keys;
    const void* coef;
  };

  /// Room for `total` appended rows (RowArrival::append): the arrays only, no key index. The holes go
  /// first: a hole keeps its key, which an appended row may carry (a member or an output coming back
  /// to the partition it left), and keys must stay distinct.
  void reserve_append(std::size_t total) {
    if (total == 0) return;
    compact_if_worthwhile(true);
    if (stored + total > kMaxStoredTerms) {
      throw GpuOutOfMemory("the received rows would make " + std::to_string(stored + total) +
                           " terms on one device, over the limit of " + std::to_string(kMaxStoredTerms));
    }
    reserve(stored + total, true);
  }

  /// RowArrival::append: the holes compacted away and room made (reserve_append), then place(k, keys,
  /// coefficients) enqueues batch k's counts[k] rows into those device addresses on the stream (every
  /// k, empty batches included: an NCCL receive is a swap), then one pass over the new rows adds their
  /// support to the light cone. The rows are final: the tested state of the sum does not change.
  template <class Place>
  void append_batches(std::span<const std::uint64_t> counts, Place&& place) {
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

  /// Host buffers in export_partition_rows' layout: their row counts (std::runtime_error for a size
  /// that is not a whole number of rows).
  static std::vector<std::uint64_t> rows_in(std::span<const std::span<const std::byte>> buffers) {
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

  void merge_partition_rows(std::span<const std::span<const std::byte>> buffers, RowArrival arrival) {
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

  std::set<int> peers;  // devices whose memory this device reads directly

  /// Whether kernels on this device can read device `other`'s memory (enabling peer access once).
  bool reads_directly(int other) {
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

  void merge_received(std::span<const std::uint64_t> counts,
                      const std::function<void(std::size_t, void*, void*, void*)>& receive, RowArrival arrival) {
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

  void merge_partition_rows(std::span<const PeerRows> sources, RowArrival arrival) {
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

  double apply_term_truncation(const Truncation& truncation) {
    activate();
    discarded = 0.0;
    if (truncation.has_term_test()) {
      zero_counters();
      Launch::term_test(args(truncation), stream);
      settle_counters();
    }
    tested = truncation;
    tested_valid = true;
    compact_if_worthwhile(false);
    profile.mark(stream, "term test");
    return discarded;
  }

  void read_histogram(std::span<std::uint64_t> counts) {
    fetch_histogram(counts.size());
    for (std::size_t k = 0; k < counts.size(); ++k) counts[k] = host_scratch[k];
  }

  double cut_now(int mode, int bin, double value) {
    activate();
    discarded = 0.0;
    zero_counters();
    Launch::cut(coef.ptr, stored, mode, bin, value, static_cast<kernels::LayerCounters*>(counters.ptr), stream);
    settle_counters();
    compact_if_worthwhile(false);
    return discarded;
  }

  PauliSum<W, C> download() {
    activate();
    check(cudaStreamSynchronize(stream), "download");
    std::vector<PauliString<W>> host_keys(stored);
    std::vector<C> host_coef(stored);
    check(cudaMemcpy(host_keys.data(), keys.ptr, stored * sizeof(Key), cudaMemcpyDeviceToHost), "download keys");
    check(cudaMemcpy(host_coef.data(), coef.ptr, stored * sizeof(C), cudaMemcpyDeviceToHost), "download coefficients");
    // Keys on the device are distinct: the columns are sorted into buckets in place (holes dropped).
    PauliSum<W, C> result(num_qubits, hash_seed);
    const int bits = PauliSum<W, C>::bits_to_fit(stored - holes, 1024, 128);
    result.assign_distinct_columns(std::move(host_keys), std::move(host_coef), bits);
    return result;
  }
};

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
std::size_t DeviceSum<W, C>::skipped_layers() const {
  return impl_->skipped;
}
template <int W, Coefficient C>
PauliSum<W, C> DeviceSum<W, C>::download() const {
  return impl_->download();
}
template <int W, Coefficient C>
void DeviceSum<W, C>::download_to(PauliSum<W, C>& host) const {
  host = impl_->download();
}
template <int W, Coefficient C>
double DeviceSum<W, C>::apply_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
  return impl_->apply_layer(table, truncation);
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
  if (sum.num_qubits() != circuit.num_qubits()) {
    throw std::invalid_argument("the Pauli sum has " + std::to_string(sum.num_qubits()) +
                                " qubits but the circuit has " + std::to_string(circuit.num_qubits()));
  }
  if constexpr (!PauliSum<W, C>::kIsComplex) {
    for (std::size_t k = 0; k < circuit.size(); ++k) {
      if (circuit[k].has_complex_transfer()) {
        throw std::invalid_argument("gate " + std::to_string(k) + " (" + circuit[k].description() +
                                    ") has complex transfer amplitudes: propagate a complex-coefficient sum");
      }
    }
  }
  return engine_detail::run_layers<W>(sum, circuit, options);
}

template <int W, Coefficient C>
PropagationStats propagate_on_device(PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options) {
  DeviceSum<W, C> device_sum(sum, options.device, options.gpu);
  PropagationStats stats = propagate(device_sum, circuit, options);
  device_sum.download_to(sum);
  return stats;
}

#define PAULISTRINGS_INSTANTIATE_DEVICE_SUM(W, C)                                                            \
  template class DeviceSum<W, C>;                                                                            \
  template PropagationStats propagate<W, C>(DeviceSum<W, C>&, const Circuit&, const PropagateOptions&);      \
  template PropagationStats propagate_on_device<W, C>(PauliSum<W, C>&, const Circuit&, const PropagateOptions&);
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_INSTANTIATE_DEVICE_SUM)
#undef PAULISTRINGS_INSTANTIATE_DEVICE_SUM

}  // namespace paulistrings::gpu
