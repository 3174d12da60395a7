// paulistrings-partition-bench: partitioned propagation, in-process P = 1, 2, 4 or over MPI ranks.
//  - remote layers per kicked-Ising step for random and cut partition rows (the seed: 139 → 4 of 271);
//  - the 127-qubit kicked Ising (Heisenberg ⟨Z62⟩, θh = 5π/16, |c| cutoff 2^-12) end to end: wall time,
//    rows and bytes exported, imbalance, for random and cut rows;
//  - cells at 128 qubits (W = 2): rotation_zz and su4 (docs/design.md §8, steady-state sums, 4 layers; cut
//    rows over P blocks of qubits, across which the rzz delta is remote) at m terms (strong scaling)
//    and m·P terms (weak scaling), and rxx·ryy·rzz on one pair of a random sum; ns per term per layer from the layers' own wall time
//    (exchanges included; the split and the gather are not), and the end-to-end time.
// Usage: paulistrings-partition-bench [steps=5] [cell_terms=200000] [threads=0] [gpus=0] [nccl=0] [repeat=1]
// gpus > 0: every partition runs the GPU engine, partition r (or rank r) on device r mod gpus; nccl = 1:
// MPI ranks swap rows with NCCL (PartitionOptions::use_nccl) instead of through host memory. repeat > 1
// runs every cell that many times and reports the median layer time (and the fastest).
// PAULISTRINGS_BENCH_CELLS=name,name… runs only those cells (rotation_zz, su4, rxx_ryy_rzz; cnot and
// gu2q only when named);
// PAULISTRINGS_ROUTE_ORBITS_FROM=n sets PartitionOptions::route_orbits_from (never: "max");
// PAULISTRINGS_BENCH_FRESH_RECEIVE=1 (MPI) receives every exchange into a fresh vector, as before ByteBuffer.
// PAULISTRINGS_GPU_PROFILE (set) turns on GpuEngineOptions::profile: every partition's device sum prints
// its phase times to stderr when it is destroyed.
// Under mpirun (MPI build) the partitions are the ranks (a power of two) and rank 0 prints. In-process
// CPU partitions (P > 1) are pinned to contiguous blocks of the process's CPUs.

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "paulistrings/circuit/kicked_ising.h"
#include "paulistrings/core/text.h"
#include "paulistrings/cpu/bench_cells.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/partition/cpu_pinning.h"
#include "paulistrings/partition/partitioned_propagate.h"
#ifdef PAULISTRINGS_HAS_MPI
#include "paulistrings/partition/mpi_transport.h"
#endif

namespace paulistrings {
namespace {

/// Four heavy-hex blocks cut at bridge rows (each boundary crossed by 4 edges); two blocks cut at 52.
std::vector<std::vector<std::size_t>> heavy_hex_blocks(std::size_t partitions) {
  const std::vector<std::size_t> bounds = partitions == 2   ? std::vector<std::size_t>{52}
                                          : partitions == 4 ? std::vector<std::size_t>{33, 71, 109}
                                                            : std::vector<std::size_t>{};
  std::vector<std::vector<std::size_t>> blocks(bounds.size() + 1);
  for (std::size_t q = 0; q < kHeavyHexQubits; ++q) {
    std::size_t b = 0;
    while (b < bounds.size() && q >= bounds[b]) ++b;
    blocks[b].push_back(q);
  }
  return blocks;
}

struct Setup {
  Transport* transport = nullptr;  // MPI
  int rank = 0;
  int ranks = 1;
  int threads = 0;
  int gpus = 0;
  bool nccl = false;
  int repeat = 1;
};

/// Whether PAULISTRINGS_BENCH_CELLS (unset: every cell) names `cell`.
bool cell_selected(const std::string& cell) {
  const char* list = std::getenv("PAULISTRINGS_BENCH_CELLS");
  if (list == nullptr || *list == '\0') return true;
  std::string padded(",");
  padded.append(list).append(",");
  std::string wanted(",");
  wanted.append(cell).append(",");
  return padded.find(wanted) != std::string::npos;
}

/// The options every run of `partitions` partitions starts from: the transport (MPI) and the devices
/// (in-process partition r, or this rank, on GPU r mod gpus; none for the CPU).
PartitionOptions partition_options(const Setup& setup, std::size_t partitions) {
  PartitionOptions partition;
  partition.partitions = partitions;
  partition.transport = setup.transport;
  partition.use_nccl = setup.nccl;
  if (const char* from = std::getenv("PAULISTRINGS_ROUTE_ORBITS_FROM"); from != nullptr && *from != '\0') {
    try {
      partition.route_orbits_from = std::string(from) == "max" ? SIZE_MAX : parse_count(from);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "PAULISTRINGS_ROUTE_ORBITS_FROM: %s\n", e.what());
      std::exit(2);
    }
  }
  if (setup.gpus <= 0) {
    // In-process CPU partitions each on their own contiguous block of this process's CPUs (threads,
    // caches and first-touched memory stay with the partition), as the CLI pins them to NUMA nodes.
    const std::vector<int> cpus = allowed_cpus();
    if (!setup.transport && partitions > 1 && cpus.size() >= partitions) {
      partition.cpu_lists.resize(partitions);
      for (std::size_t i = 0; i < cpus.size(); ++i) partition.cpu_lists[i * partitions / cpus.size()].push_back(cpus[i]);
    }
    return partition;
  }
  if (setup.transport) {
    partition.devices = {setup.rank % setup.gpus};
  } else {
    for (std::size_t r = 0; r < partitions; ++r) partition.devices.push_back(static_cast<int>(r) % setup.gpus);
  }
  return partition;
}

#ifdef PAULISTRINGS_HAS_MPI
/// The exchange as it was before ByteBuffer (A/B, PAULISTRINGS_BENCH_FRESH_RECEIVE=1): every exchange
/// receives into a fresh zero-filled std::vector (MpiTransport::exchange), kept until that receive
/// buffer's next exchange, so nothing is copied.
class FreshReceiveTransport final : public Transport {
 public:
  explicit FreshReceiveTransport(Transport& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string kind() const override { return inner_.kind(); }
  std::vector<std::byte> exchange(int partner, std::span<const std::byte> send) override {
    return inner_.exchange(partner, send);
  }
  std::span<const std::byte> exchange_into(int partner, std::span<const std::byte> send, ByteBuffer& receive) override {
    std::vector<std::byte>& held = held_[&receive];
    held = inner_.exchange(partner, send);
    return held;
  }
  void all_reduce_sum(std::span<std::uint64_t> values) override { inner_.all_reduce_sum(values); }
  void all_reduce_max(std::span<std::uint64_t> values) override { inner_.all_reduce_max(values); }
  void all_reduce_sum(std::span<double> values) override { inner_.all_reduce_sum(values); }

 private:
  Transport& inner_;
  std::map<const ByteBuffer*, std::vector<std::byte>> held_;
};
#endif

/// Σ of the layers' own wall time (partition 0 / this rank; exchanges included).
double layer_seconds(const PartitionedPropagation& out) {
  double ns = 0.0;
  for (const LayerRecord& record : out.stats.layers) ns += static_cast<double>(record.wall_ns);
  return 1e-9 * ns;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void print_run(const Setup& setup, const char* what, std::size_t partitions, const char* rows, double seconds,
               std::size_t terms, const PartitionedPropagation& out, std::size_t layers) {
  if (setup.rank != 0) return;
  // Imbalance (max / mean terms per partition) after the last layer and averaged over the layers.
  double mean_imbalance = 0.0;
  for (const PartitionLayerStats& layer : out.partitions.layers) mean_imbalance += layer.imbalance;
  if (!out.partitions.layers.empty()) mean_imbalance /= static_cast<double>(out.partitions.layers.size());
  const double last = out.partitions.layers.empty() ? 1.0 : out.partitions.layers.back().imbalance;
  std::printf("%-12s P=%zu %-6s %8.3f s", what, partitions, rows, seconds);
  if (terms)
    std::printf(" (%6.1f ns/term/layer)",
                1e9 * seconds / static_cast<double>(terms) / static_cast<double>(layers));
  std::printf("  remote %4zu/%-4zu  rows %10zu  bytes %11zu  imbalance last %.3f mean %.3f\n",
              out.partitions.remote_layers, layers, out.partitions.rows_exported,
              out.partitions.bytes_exported, last, mean_imbalance);
}

void kicked_ising(const Setup& setup, std::size_t steps) {
  const Circuit one_step = kicked_ising_circuit(1, 5 * std::numbers::pi / 16);
  const Circuit circuit = kicked_ising_circuit(steps, 5 * std::numbers::pi / 16);
  const std::vector<std::size_t> counts =
      setup.transport ? std::vector<std::size_t>{static_cast<std::size_t>(setup.ranks)}
                      : std::vector<std::size_t>{1, 2, 4};
  for (std::size_t partitions : counts) {
    if (partitions == 1 && setup.rank == 0) std::printf("kicked Ising, %zu steps, P=1\n", steps);
    for (bool cut : {false, true}) {
      if (partitions == 1 && cut) continue;
      PartitionOptions partition = partition_options(setup, partitions);
      if (cut) {
        partition.row_policy = PartitionRowPolicy::cut;
        partition.cut_blocks = heavy_hex_blocks(partitions);
      }
      const PartitionRows rows = make_partition_rows(partition, kHeavyHexQubits, partitions);
      if (setup.rank == 0) {
        std::printf("rows %-22s remote layers per step: %zu of %zu\n", rows.description().c_str(),
                    count_remote_layers(one_step, rows), one_step.size());
      }
      PropagateOptions options;
      options.direction = Direction::heisenberg;
      options.truncation = Truncation::coeff(std::ldexp(1.0, -12));
      options.threads = setup.threads;
      options.gpu.profile = std::getenv("PAULISTRINGS_GPU_PROFILE") != nullptr;
      auto sum = PauliSum<2, double>::from_labels(kHeavyHexQubits, {{"Z62", 1.0}});
      const auto start = std::chrono::steady_clock::now();
      const PartitionedPropagation out = propagate_partitioned(sum, circuit, options, partition);
      const double seconds = seconds_since(start);
      // ⟨Z62⟩ in |0…0⟩: the coefficients of the strings made of I and Z only.
      double expectation = 0.0;
      for (std::size_t i = 0; i < sum.size(); ++i) {
        if (sum.keys()[i].x[0] == 0 && sum.keys()[i].x[1] == 0) expectation += sum.coefficients()[i];
      }
      if (setup.rank == 0)
        std::printf("  <Z62> = %.12f, peak %zu terms\n", expectation, out.stats.peak_terms);
      print_run(setup, "kicked_ising", partitions, cut ? "cut" : "random", seconds, 0, out, circuit.size());
    }
  }
}

void run_cell(const Setup& setup, const char* name, const Circuit& circuit, const PauliSum<2, double>& start_sum,
              std::size_t partitions, const char* scaling) {
  PartitionOptions partition = partition_options(setup, partitions);
  // Cut rows over P blocks of 128 / P qubits: the cell's pair (5, 70) lies in two blocks, so every
  // delta with a Z/Y change on qubit 70 crosses (rotation_zz: every layer is remote).
  partition.row_policy = PartitionRowPolicy::cut;
  partition.cut_blocks.resize(partitions);
  for (std::size_t q = 0; q < 128; ++q) partition.cut_blocks[q * partitions / 128].push_back(q);
  PropagateOptions options;
  options.threads = setup.threads;
  options.direction = Direction::heisenberg;
  options.gpu.profile = std::getenv("PAULISTRINGS_GPU_PROFILE") != nullptr;
  // Every repetition from the same start; the median layer time is reported (and the fastest).
  std::vector<double> layer_times, wall_times;
  PartitionedPropagation out;
  for (int r = 0; r < std::max(setup.repeat, 1); ++r) {
    auto sum = start_sum;
    const auto start = std::chrono::steady_clock::now();
    out = propagate_partitioned(sum, circuit, options, partition);
    wall_times.push_back(seconds_since(start));
    layer_times.push_back(layer_seconds(out));
  }
  if (setup.rank != 0) return;
  std::sort(layer_times.begin(), layer_times.end());
  std::sort(wall_times.begin(), wall_times.end());
  const double layers = layer_times[layer_times.size() / 2];
  const double seconds = wall_times[wall_times.size() / 2];
  // Row bytes every partition exported per second of the layers' wall time: a lower bound on the rate
  // the exchange reached (the layers' own work is in the time too), compared with the peer bandwidth.
  const double exchange_gbs =
      layers > 0 ? static_cast<double>(out.partitions.bytes_exported) / static_cast<double>(partitions) / layers / 1e9
                 : 0.0;
  std::printf("%-12s %-6s m=%-10zu P=%zu %s  layers %8.4f s (%7.3f ns/term/layer)  end to end %7.3f s  "
              "remote %zu/%zu  rows %zu  bytes %zu  imbalance %.3f  rows out %.2f GB/s a partition\n",
              name, scaling, start_sum.size(), partitions, partition.devices.empty() ? "cpu" : "gpu", layers,
              1e9 * layers / static_cast<double>(start_sum.size()) / static_cast<double>(circuit.size()), seconds,
              out.partitions.remote_layers, circuit.size(), out.partitions.rows_exported,
              out.partitions.bytes_exported, out.partitions.max_imbalance, exchange_gbs);
  if (layer_times.size() > 1) {
    std::printf("  (median of %zu runs; fastest %.4f s = %.3f ns/term/layer)\n", layer_times.size(), layer_times.front(),
                1e9 * layer_times.front() / static_cast<double>(start_sum.size()) / static_cast<double>(circuit.size()));
  }
}

void cells(const Setup& setup, std::size_t terms) {
  const std::vector<std::size_t> counts =
      setup.transport ? std::vector<std::size_t>{static_cast<std::size_t>(setup.ranks)}
                      : std::vector<std::size_t>{1, 2, 4};
  std::mt19937_64 rng(2026);
  const auto layer_cells = bench::layer_cells(rng);
  const char* named = std::getenv("PAULISTRINGS_BENCH_CELLS");
  for (const char* name : {"rotation_zz", "su4", "cnot", "gu2q"}) {
    if (!cell_selected(name)) continue;
    // cnot (a permutation) and gu2q (a sparse general table) run only when named.
    if (std::string(name) == "cnot" || std::string(name) == "gu2q") {
      if (named == nullptr || *named == '\0') continue;
    }
    const Channel& channel = layer_cells.at(name);
    Circuit circuit(bench::kQubits);
    for (int k = 0; k < 4; ++k) circuit.append(channel);
    // Strong scaling (m terms over P partitions), then weak (m·P terms).
    const auto strong = bench::steady_state_sum(channel, terms, rng);
    for (std::size_t partitions : counts) run_cell(setup, name, circuit, strong, partitions, "strong");
    for (std::size_t partitions : counts) {
      if (partitions == 1) continue;
      const auto weak = bench::steady_state_sum(channel, terms * partitions, rng);
      run_cell(setup, name, circuit, weak, partitions, "weak");
    }
  }
  if (!cell_selected("rxx_ryy_rzz")) return;
  std::vector<PauliSum<2, double>::Term> random_terms;
  std::uniform_int_distribution<int> letter(0, 3);
  std::normal_distribution<double> normal;
  for (std::size_t t = 0; t < terms; ++t) {
    PauliString<2> key;
    for (std::size_t q = 0; q < 128; ++q) key.set_code(q, letter(rng));
    random_terms.push_back({key, normal(rng)});
  }
  const auto start_sum = PauliSum<2, double>::from_terms(128, random_terms);
  // Three two-qubit rotations on the same pair (sparse layers, each remote with random rows).
  Circuit circuit(128);
  circuit.append(Channel::rxx(0.41, 10, 90));
  circuit.append(Channel::ryy(0.77, 10, 90));
  circuit.append(Channel::rzz(1.13, 10, 90));
  for (std::size_t partitions : counts) run_cell(setup, "rxx_ryy_rzz", circuit, start_sum, partitions, "strong");
}

/// The copy bandwidth between GPUs 0 and 1 (one way and both ways at once): what the exchange is
/// compared with.
void peer_bandwidth(const Setup& setup) {
  if (setup.gpus < 2 || setup.rank != 0) return;
  try {
    const gpu::PeerBandwidth one = gpu::measure_peer_bandwidth(0, 1, std::size_t{1} << 30, 10);
    const gpu::PeerBandwidth both = gpu::measure_peer_bandwidth(0, 1, std::size_t{1} << 30, 10, true);
    std::printf("peer copy GPU 0 -> 1 (1 GiB x 10): %.1f GB/s one way, %.1f GB/s both ways at once (peer access %s)\n",
                one.bytes_per_second / 1e9, both.bytes_per_second / 1e9, one.peer_access ? "yes" : "no");
  } catch (const std::exception& e) {
    std::printf("peer copy: %s\n", e.what());
  }
}

}  // namespace
}  // namespace paulistrings

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines in order with stderr's (the GPU phase profiles)
  // Strict numbers (core/text.h): "1e6" is 10^6; "1.5", "-1" or "x" end the program naming the argument.
  const auto argument = [&](int k, const char* name, std::uint64_t fallback, std::uint64_t max) {
    if (argc <= k) return fallback;
    try {
      return paulistrings::parse_count(argv[k], max);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "%s: %s\n", name, e.what());
      std::exit(2);
    }
  };
  const std::size_t steps = argument(1, "steps", 5, SIZE_MAX);
  const std::size_t cell_terms = argument(2, "cell_terms", 200000, SIZE_MAX);
  paulistrings::Setup setup;
  setup.threads = static_cast<int>(argument(3, "threads", 0, INT_MAX));
  setup.gpus = static_cast<int>(argument(4, "gpus", 0, INT_MAX));
  setup.nccl = argument(5, "nccl", 0, 1) != 0;
  setup.repeat = std::max(static_cast<int>(argument(6, "repeat", 1, INT_MAX)), 1);
#ifdef PAULISTRINGS_HAS_MPI
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  {
    std::unique_ptr<paulistrings::MpiTransport> transport;
    std::unique_ptr<paulistrings::FreshReceiveTransport> fresh;
    if (ranks > 1) {
      transport = std::make_unique<paulistrings::MpiTransport>(MPI_COMM_WORLD);
      setup.transport = transport.get();
      setup.rank = transport->rank();
      setup.ranks = ranks;
      const char* fresh_receive = std::getenv("PAULISTRINGS_BENCH_FRESH_RECEIVE");
      if (fresh_receive != nullptr && std::string(fresh_receive) == "1") {
        fresh = std::make_unique<paulistrings::FreshReceiveTransport>(*transport);
        setup.transport = fresh.get();
      }
    }
    paulistrings::peer_bandwidth(setup);
    paulistrings::kicked_ising(setup, steps);
    paulistrings::cells(setup, cell_terms);
  }
  MPI_Finalize();
#else
  paulistrings::peer_bandwidth(setup);
  paulistrings::kicked_ising(setup, steps);
  paulistrings::cells(setup, cell_terms);
#endif
  return 0;
}
