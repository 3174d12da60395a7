#pragma once
// The orchestration of a long run, the same for the command line, the Python package and the C++ API
// (docs/design.md §3, run/): resume from a checkpoint (one file, parts, a rank's share), the memory
// limit as a term budget, the checkpoint schedule — the run goes in segments of propagate() calls that
// stop every N layers and when the front end's interrupted() says so, a checkpoint (one file, or one part
// per rank) written at each stop — and the statistics of the whole run.
//
// Two ways in:
//  - orchestrate(sum, circuit, options): one observable, everything in one call. Under a transport the
//    ranks agree on every step (a rank that cannot resume makes all refuse).
//  - Orchestration: a task of several observables (the command line), in steps that leave the front end
//    room between them: construct it (every rank alone: read the resume point, measure the memory
//    baseline), join(transport) (collective: the ranks agree on the resume parts and the baseline), then
//    propagate(i, sum) for each observable in turn.
//
// A resumed run is bitwise the uninterrupted one: the checkpoint restores the sum with its buckets and
// the run continues from its layer (PropagateOptions::start_layer).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/any_pauli_sum.h"
#include "paulistrings/engine/stats.h"
#include "paulistrings/partition/partitioned_propagate.h"
#include "paulistrings/run/checkpoints.h"
#include "paulistrings/run/memory_budget.h"
#include "paulistrings/run/propagate.h"
#include "paulistrings/run/run_options.h"

namespace paulistrings {

/// What a whole run did: its segments' statistics together.
struct RunResult {
  EngineKind engine = EngineKind::cpu;
  /// Every segment's layer records in order; truncations, discarded weight and collapses summed; the
  /// largest peak; layers_done and final_terms of the last segment; stopped = interrupted.
  PropagationStats stats;
  /// Partitioned and distributed runs: the segments' statistics merged (per-layer lists joined, counts
  /// summed, the largest imbalance, per-partition seconds summed, rows, transport and final terms of
  /// the first and last segment).
  PartitionStats partitions;
  /// interrupted() stopped the run (on some rank of a distributed run): the sum holds the state after
  /// stats.layers_done steps.
  bool interrupted = false;
  /// interrupted inside a layer (PropagateOptions::interrupt, single-process engines): the layers of the
  /// segment in progress were abandoned, so the sum holds the state the segment began with — the last
  /// checkpoint written, or the start of the run.
  bool abandoned_layer = false;
  /// The last stop wrote a checkpoint, or found the state already saved (with interrupted: the run can go
  /// on from it).
  bool checkpoint_written = false;
  /// The term budget the memory limit gave (0: no limit).
  std::size_t max_terms = 0;
};

class Orchestration {
 public:
  /// Every rank alone, before any communication: reads options.resume (as rank `rank` of `ranks`: which
  /// parts of a checkpoint in parts it reads) and matches it to one of `fingerprints` (one per
  /// observable of the task; empty: options.fingerprint alone); measures the process's resident bytes as
  /// the memory baseline and checks that options.memory_limit leaves room above it; reads what the host
  /// lets the process use (the memory guard's allowance, unless options.memory_guard is off or the run
  /// is on GPUs). Throws what load_resume and check_budget_room throw. options.partition.transport is
  /// ignored here (join()).
  Orchestration(const Circuit& circuit, std::size_t num_qubits, RunOptions options,
                std::vector<std::uint64_t> fingerprints = {}, std::size_t rank = 0, std::size_t ranks = 1);

  /// Polled inside long layers from the engine's threads (PropagateOptions::interrupt): true abandons the
  /// layer and ends the run as interrupted. Single-process runs only: partitions stop between layers.
  void set_layer_interrupt(std::function<bool()> interrupt) { options_.propagate.interrupt = std::move(interrupt); }

  /// Distributed runs, collective (every rank once, before propagate); nullptr: nothing (one process).
  /// The run's transport from now on. The ranks agree that the parts they resume from were written after
  /// the same layer for the same observable (std::invalid_argument on every rank otherwise) and take the
  /// largest memory baseline (the term budget is part of the run's shape, which every rank must share).
  void join(Transport* transport);

  /// Runs observable `index` (fingerprints[index]) from `sum` — replaced by the checkpoint's sum when
  /// the resume point is this observable's — to the circuit's end or an interrupt, writing checkpoints
  /// as options say (not for observables before the resumed one: that would replace the checkpoint being
  /// resumed). `sum` ends as the result: the whole sum, or this rank's share where
  /// options.partition.result is local. Throws what propagate() throws (calling on_shared_ending first in
  /// a distributed run: the partitioned driver agrees on errors), and what writing a checkpoint throws.
  /// When memory runs out — the guard stops before a layer, or an allocation throws std::bad_alloc — it
  /// throws HostMemoryExceeded naming the layer, the terms and the bytes, and the front end's ways out
  /// (memory_limit_name, stricter_truncation_name); when the guard stopped and a checkpoint is asked for,
  /// it is written first with the state before that layer (the message says so; otherwise it names the
  /// last checkpoint written, whose state is the one to resume from).
  RunResult propagate(std::size_t index, AnyPauliSum& sum);

  const std::optional<ResumePoint>& resume() const { return resume_; }
  /// The layer observable `index` starts from: the checkpoint's for the resumed one, else 0.
  std::size_t start_layer(std::size_t index) const;
  /// The memory baseline in bytes (0 without a memory limit, or on GPUs).
  std::size_t baseline_bytes() const { return baseline_; }
  /// The host memory guard's allowance (bytes 0: no guard).
  const HostAllowance& memory_guard() const { return guard_; }

 private:
  std::size_t term_budget(const AnyPauliSum& sum) const;
  struct LastCheckpoint {
    std::filesystem::path path;
    std::size_t layer = 0;
  };
  [[noreturn]] void stop_for_memory(const HostMemoryExceeded& stop, std::size_t index, const AnyPauliSum& sum,
                                    bool checkpointing, const std::optional<LastCheckpoint>& last) const;

  const Circuit& circuit_;
  RunOptions options_;
  std::vector<std::uint64_t> fingerprints_;
  std::optional<ResumePoint> resume_;
  std::size_t baseline_ = 0;
  HostAllowance guard_;
  std::size_t ranks_ = 1;
};

/// One observable's run (Orchestration over options.fingerprint), in one call. Under
/// options.partition.transport the steps are collective and the ranks agree on them: a rank whose
/// preparation fails throws its own error, the others std::invalid_argument ("checkpoint P: another rank
/// could not resume from it; refusing to resume", or that another rank could not start the run).
RunResult orchestrate(AnyPauliSum& sum, const Circuit& circuit, RunOptions options);

}  // namespace paulistrings
