#pragma once
// RunOptions: everything a long run is given besides the sum and the circuit — the propagation and
// partition options of each segment, the checkpoint schedule, the resume point, the memory limit and the
// front end's stop flag (docs/design.md §3, run/). Plain data: the front ends (the command line, the
// Python package) fill it, run/orchestrate.h carries it out.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "paulistrings/engine/options.h"
#include "paulistrings/partition/partitioned_propagate.h"

namespace paulistrings {

/// How a distributed run turns the memory limit into its global term budget (the ranks' baselines
/// agreed as the largest): `per_rank` — every rank may use the limit, so the budget is that many terms
/// times the rank count (the Python package); `whole_run` — the budget is the terms of one limit (the
/// command line: docs/cli.md).
enum class DistributedBudget : std::uint8_t { per_rank, whole_run };

struct RunOptions {
  /// Each segment's propagation options. The run sets start_layer (resume, segments), should_stop (the
  /// checkpoint schedule and interrupted()) and max_terms (the memory limit) itself.
  PropagateOptions propagate;
  /// Partitions of the run (partition.transport: this rank's, for a distributed run). `result` is where
  /// the result ends (a distributed run that checkpoints keeps it local between segments and gathers
  /// once at the end when asked); `input` says what the given sum is (a resumed run sets it).
  PartitionOptions partition;

  /// Checkpoints: the file written at every stop (every `checkpoint_every` layers, and when interrupted);
  /// a distributed run writes one part per rank (io::checkpoint_part_path). Empty: none.
  std::optional<std::filesystem::path> checkpoint;
  std::size_t checkpoint_every = 0;  ///< 0: by time (checkpoint_interval) and when interrupted
  /// Without a layer schedule (checkpoint_every = 0) a checkpoint is also written at the first layer
  /// boundary this long after the last one (or the start), and never sooner than ten times the last
  /// write took: a signal inside a long layer abandons that layer's segment (RunResult::abandoned_layer),
  /// so this bounds the work it can lose. Zero: only when interrupted.
  std::chrono::nanoseconds checkpoint_interval = std::chrono::minutes(10);
  /// Resume from the checkpoint here (one file or parts; a rank of a distributed run reads its share).
  std::optional<std::filesystem::path> resume;
  /// What must match to resume, computed by the front end (circuit, direction, truncation, observable,
  /// …): written into each checkpoint, compared on resume. A task of several observables gives one per
  /// observable to Orchestration instead.
  std::uint64_t fingerprint = 0;

  /// The memory this run may use: on the host, in bytes of the process's resident size (what the process
  /// holds when the run is prepared is the baseline, the rest becomes a term budget); on GPUs, in bytes
  /// of each device's memory (run/memory_budget.h).
  std::optional<std::size_t> memory_limit;
  DistributedBudget distributed_budget = DistributedBudget::per_rank;
  /// The host memory guard (PropagateOptions::memory_guard, run/memory_budget.h): a run on the host
  /// engines stops before a layer that could grow the sum past what the process may still use
  /// (measured when the run is prepared), with HostMemoryExceeded and a checkpoint when one is asked
  /// for. GPU and partitioned runs are not guarded.
  bool memory_guard = true;
  /// The guard's allowance in bytes instead of the measured one (CLI --host-memory, Python
  /// memory_guard=BYTES): to leave room for other programs, or to try the guard with small sums.
  std::optional<std::size_t> memory_guard_bytes;

  /// The front end's stop flag (a signal, a failed callback), polled after every layer: true stops the
  /// run there, with a checkpoint when one is asked for; RunResult::interrupted says so. May be empty.
  std::function<bool()> interrupted;
  /// Distributed runs: called when every rank ends the run together (an error all ranks throw, an agreed
  /// interrupt), before the throw or the return. The command line's Launch then ends MPI normally.
  std::function<void()> on_shared_ending;

  /// How the front end names things in the messages of a refused run: its memory-limit option, and what
  /// its fingerprint covers ("checkpoint P belongs to a different <fingerprint_covers>; …").
  std::string memory_limit_name = "memory limit";
  /// How the front end names a stricter truncation, for the guard's message ("--coeff").
  std::string stricter_truncation_name = "a stricter truncation";
  std::string fingerprint_covers = "run (circuit, direction, truncation or observable differ)";
};

}  // namespace paulistrings
