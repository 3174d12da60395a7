#pragma once
// propagate_partitioned(): propagate() over P = 2^p partitions of the sum (docs/design.md §7.4, docs/partitions.md).
//
// The terms are split by part(v) = R·v (PartitionRows). Every partition runs the CPU engine (or the GPU
// engine: PartitionOptions::devices) on its share. Per layer, each delta d of the channel is local (part(d)
// = 0) or remote; in a layer with a remote delta every partition applies the channel without the per-term
// truncation, sends each output that now belongs to partition rank ⊕ s to that partner (one pairwise
// exchange per distinct s), adds the rows it receives (equal keys sum), and then applies the per-term
// truncation to the final summed coefficients and drops exact zeros. A layer with no remote delta makes no
// communication call. Partitions skip the sum where no key can meet another (RemotePlan in
// local_engine.h): a permutation's outputs are tested before they leave and appended by the receiver,
// and a dense general table of a large sum (CPU partitions; GPU partitions when asked) first moves each
// orbit of its delta span whole to one partition (PartitionOptions::route_orbits_from), then does the
// same. Layer truncation is global: approx_topn all-reduces the exponent histogram (the same
// kept set as one partition), exact topn runs a distributed radix select of the n-th largest |c|² with
// topn's tie rule (a tie group at the cut is kept whole if it fits, else dropped whole; NaN is never kept).
// The memory budget of PropagateOptions (max_terms) is applied to the global term count the same way.
//
// Two ways to run:
//  - in-process: options.transport == nullptr; options.partitions partitions (a power of two) run as
//    threads of this process, each with its own OpenMP team of max(1, threads / P) threads (threads 0 =
//    every allowed core). The result is always gathered back into `sum`.
//  - distributed: options.transport is this rank's Transport (e.g. MpiTransport from
//    partition/mpi_transport.h); the partition count is transport->size(). Collective: every rank calls
//    with the same circuit, options and (input = replicated) the same sum. result = gather leaves the
//    whole result on every rank, result = local only this rank's share.
// Before the first layer the ranks compare the run's shape (circuit fingerprint, direction, qubit count,
// width, coefficient type, partition rows, truncation, start layer, memory budget, input fingerprint);
// a difference is a std::runtime_error on every rank naming the field, never a hang. A rank that throws
// during the run makes every other rank throw PartitionPeerFailure naming it (error agreement at each
// communication point); the failing rank rethrows its own exception.
//
// P = 1 gives the same bits as propagate() with the CPU engine. Results for P > 1 agree to rounding
// (equal keys are summed in another order). Not supported for P > 1: collapse_sample (its pass counter
// lives in the policy; std::invalid_argument). PropagateOptions::engine is ignored: partitions run the
// CPU engine, or the GPU engine when PartitionOptions::devices (or PropagateOptions::device) names devices.
// User callbacks (on_layer, should_stop) run once per layer on partition 0 in-process and on
// every rank in a distributed run; should_stop's answers are combined (any rank stopping stops all).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/any_pauli_sum.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/engine/options.h"
#include "paulistrings/engine/stats.h"
#include "paulistrings/partition/partition_rows.h"
#include "paulistrings/partition/transport.h"

namespace paulistrings {

inline constexpr std::uint64_t kDefaultPartitionSeed = 0x9a27'1710'0000'0001ULL;

enum class PartitionRowPolicy : std::uint8_t { seeded, seeded_excluding, cut };
enum class PartitionResult : std::uint8_t { gather, local };
/// replicated: every rank passes the whole input and keeps its share; share: every rank passes only the
/// terms of its own partition (part(key) must equal the rank); scattered: every rank passes any part of
/// the input (say the lines of a file it read), and the library routes each term to its owner before the
/// first layer (log2 P pairwise rounds; equal keys from several ranks are summed). share and scattered
/// are the distributed load paths: no rank ever holds the whole input.
enum class PartitionInput : std::uint8_t { replicated, share, scattered };

struct PartitionOptions {
  /// In-process partition count (a power of two); ignored when transport is set.
  std::size_t partitions = 1;
  PartitionRowPolicy row_policy = PartitionRowPolicy::seeded;
  std::uint64_t row_seed = kDefaultPartitionSeed;
  std::vector<std::size_t> excluded_qubits;          ///< seeded_excluding
  std::vector<std::vector<std::size_t>> cut_blocks;  ///< cut: one block per partition
  char cut_basis = 'z';                              ///< cut: 'z' or 'x' (see PartitionRows::cut)
  /// In-process only: partition r runs on the CPUs cpu_lists[r] — its thread, the OpenMP team that
  /// thread starts (of cpu_lists[r].size() threads when PropagateOptions::threads is 0) and so the
  /// memory it first touches (its NUMA node). One non-empty list per partition, CPUs this process may
  /// use (lists may overlap). Empty: not pinned. The calling thread runs partition 0 and gets its own
  /// binding back afterwards.
  std::vector<std::vector<int>> cpu_lists;
  /// GPU partitions: each partition runs the GPU engine (gpu::DeviceSum) on a CUDA device. In-process:
  /// partition r on devices[r]; the partition count is devices.size() (a power of two; repeats allowed,
  /// several partitions then share a device; `partitions` must be 1 or equal). Distributed: one entry
  /// (this rank's device) or one per rank (rank r on devices[r]). Empty: PropagateOptions::device
  /// (≥ 0: every partition on that device; −1: the CPU engine). Rows cross partitions through the
  /// transport, staged in host memory.
  std::vector<int> devices;
  /// GPU ranks of a distributed run (transport not shared by one process) swap rows with NCCL on the
  /// devices instead of through host memory (partition/nccl_exchange.h; every rank must ask alike; a
  /// build without NCCL throws). Off by default: faster on large remote layers, slower on many small ones
  /// (docs/PERFORMANCE.md, "2026-11-30 (evening) — two H200s, NCCL, 16 CPU cores").
  bool use_nccl = false;
  /// CPU partitions, a remote dense general table (mean fanout ≥ 8 outputs per input pattern: a Haar
  /// two-qubit unitary, not a sparse one): when the largest partition holds at least this many terms,
  /// every orbit of the layer's delta span is first moved to one partition (an exchange of inputs), so
  /// each output is computed once and the outputs sent afterwards are appended by the receiver, not
  /// summed in through a key index. Otherwise one exchange of half-orbit outputs that the receiver sums
  /// (fewer messages for small layers; cheaper for sparse tables). 0: every remote general table, dense
  /// or not, at any size, on CPU and GPU partitions alike; GPU partitions route only then (the join is
  /// cheap there next to the added export, compaction and rows: docs/PERFORMANCE.md,
  /// "2026-12-02 — GPU partitions: orbits routed vs the merge plan").
  /// SIZE_MAX: never. Every rank must ask alike (shape check).
  std::size_t route_orbits_from = std::size_t{1} << 13;
  /// Distributed run: this rank's transport (not owned). nullptr = in-process.
  Transport* transport = nullptr;
  PartitionResult result = PartitionResult::gather;
  PartitionInput input = PartitionInput::replicated;
  /// Called on every partition at the start of every layer, inside the error-guarded region: an
  /// exception thrown here counts as that partition failing (fault injection in tests, progress).
  std::function<void(int partition, std::size_t step)> before_layer;
};

/// "seeded", "seeded_excluding" or "cut" (the front ends' names) → the policy; std::invalid_argument
/// naming the three otherwise.
PartitionRowPolicy parse_row_policy(std::string_view name);

/// The rows a run with these options uses on num_qubits qubits and `partitions` partitions.
PartitionRows make_partition_rows(const PartitionOptions& options, std::size_t num_qubits,
                                  std::size_t partitions);

struct PartitionLayerStats {
  std::size_t application_index = 0;
  bool remote = false;            ///< some delta crossed partitions (an exchange took place)
  std::size_t partners = 0;       ///< distinct partner offsets s = part(d) ≠ 0 (exchanges per partition)
  bool orbits_routed = false;     ///< inputs moved to their orbit's partition first (two exchanges per partner)
  std::size_t rows_exported = 0;  ///< summed over partitions
  std::size_t bytes_exported = 0;
  std::size_t max_terms = 0;  ///< largest partition after the layer
  double imbalance = 1.0;     ///< max / mean terms per partition after the layer (1 when empty)
};

struct PartitionStats {
  std::size_t partitions = 1;
  std::string rows;  ///< PartitionRows::description()
  std::string transport;
  std::size_t remote_layers = 0;
  std::size_t local_layers = 0;
  std::size_t orbit_routed_layers = 0;  ///< remote layers that moved inputs first (route_orbits_from)
  std::size_t rows_exported = 0;
  std::size_t bytes_exported = 0;
  double max_imbalance = 1.0;
  std::vector<PartitionLayerStats> layers;  ///< one per layer applied (when keep_layer_records)
  /// Per partition (index = rank): terms at the end, and the run's wall time split into time spent in
  /// the transport (exchanges and reductions, waiting for partners included) and the rest (its own work).
  std::vector<std::size_t> final_terms;
  std::vector<double> transport_seconds;
  std::vector<double> work_seconds;
};

struct PartitionedPropagation {
  PropagationStats stats;  ///< as propagate() fills it, with global counts
  PartitionStats partitions;
};

/// Evolves `sum` through `circuit` over partitions (see the file comment). Throws std::invalid_argument
/// for bad options (partition count not a power of two, cut blocks out of range, …) and the errors
/// propagate() throws.
template <int W, Coefficient C>
PartitionedPropagation propagate_partitioned(PauliSum<W, C>& sum, const Circuit& circuit,
                                             const PropagateOptions& options,
                                             const PartitionOptions& partition_options);

/// Runtime-width form (switches a real sum to complex first when a channel has complex amplitudes).
PartitionedPropagation propagate_partitioned(AnyPauliSum& sum, const Circuit& circuit,
                                             const PropagateOptions& options,
                                             const PartitionOptions& partition_options);

/// Remote layers of `circuit` under `rows`: layers with a delta d of part(d) ≠ 0 (direction-independent).
std::size_t count_remote_layers(const Circuit& circuit, const PartitionRows& rows);

#define PAULISTRINGS_DECLARE_PROPAGATE_PARTITIONED(W, C)              \
  extern template PartitionedPropagation propagate_partitioned<W, C>( \
      PauliSum<W, C>&, const Circuit&, const PropagateOptions&, const PartitionOptions&);
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_DECLARE_PROPAGATE_PARTITIONED)
#undef PAULISTRINGS_DECLARE_PROPAGATE_PARTITIONED

}  // namespace paulistrings

#include "paulistrings/partition/partitioned_propagate.inl"
