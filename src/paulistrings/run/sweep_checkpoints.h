#pragma once
// The checkpoints of a parameter sweep (docs/design.md §7.8 and §9), the same for the command line and
// Python: what must match to resume one (fingerprints of every column's circuit and of the gradients),
// reading the state to resume from (io/checkpoint.h's version-2 file: C = K·(1 + gradients) columns a
// term; version 3 for a sweep whose columns split: every group's), writing one, and a sweep run in segments —
// it stops every N layers, at the first layer boundary after a time, and when the front end's interrupted()
// says so, writing a checkpoint at each stop — whose result is bitwise the uninterrupted run's
// (sweep/propagate_sweep.h, SweepState).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/any_pauli_sum.h"
#include "paulistrings/engine/options.h"
#include "paulistrings/sweep/propagate_sweep.h"

namespace paulistrings {

/// The circuit fingerprint of a sweep: every column's circuit in order (so every column's parameters).
std::uint64_t sweep_circuit_fingerprint(std::span<const Circuit> columns);

/// The task fingerprint of a sweep: `base` (the front end's fingerprint of what else must match:
/// direction, truncation, observable, …) with the column count K and every gradient — its name and, per
/// column, the layers it differentiates with their channels and scales.
std::uint64_t sweep_task_fingerprint(std::uint64_t base, std::span<const Circuit> columns,
                                     std::span<const SweepGradient> gradients);

/// A sweep checkpoint read to resume from. Of a split sweep, `state` holds its groups, and its `sum` no
/// rows, only the sweep's qubits and columns (the run that resumes it hands back the groups' union).
struct SweepResumePoint {
  std::filesystem::path path;
  SweepState state;
  std::size_t match = 0;  ///< which of the run's fingerprints (its observable) it carries
};

/// Reads the sweep checkpoint at `path` and checks that it belongs to the run: `all_columns` columns a
/// term (K values × (1 + gradients), over every group of a split sweep: the message says so when not),
/// `num_qubits` qubits, no more layers done than `columns` have, the circuit fingerprint
/// sweep_circuit_fingerprint(columns) and a task fingerprint among `fingerprints` (ResumePoint::match says
/// which; otherwise std::invalid_argument "checkpoint P belongs to a different <fingerprint_covers>; refusing
/// to resume from it"). Throws CheckpointNotFound (run/checkpoints.h) when nothing is at `path`, and what
/// io/checkpoint.h throws for a bad file.
SweepResumePoint load_sweep_resume(const std::filesystem::path& path, std::span<const Circuit> columns,
                                   std::size_t all_columns, std::size_t num_qubits,
                                   std::span<const std::uint64_t> fingerprints,
                                   const std::string& fingerprint_covers);

/// Writes `state` at `path` (streamed from its rows, atomically; a split state's groups as a version-3
/// file) and removes the parts of a distributed run's checkpoint an earlier run left there.
void write_sweep_checkpoint(const std::filesystem::path& path, std::uint64_t circuit_fingerprint,
                            std::uint64_t task_fingerprint, const SweepState& state);

struct SweepRunOptions {
  /// Each segment's options; the run sets should_stop (the schedule and interrupted()).
  PropagateOptions propagate;
  /// Written at every stop: every `checkpoint_every` layers, at the first layer boundary
  /// `checkpoint_interval` after the last write (checkpoint_every = 0; never sooner than ten times the last
  /// write took; zero: off) and when interrupted. Empty: none. A split sweep's checkpoint holds every
  /// group (a version-3 file).
  std::optional<std::filesystem::path> checkpoint;
  std::size_t checkpoint_every = 0;
  std::chrono::nanoseconds checkpoint_interval = std::chrono::minutes(10);
  std::uint64_t circuit_fingerprint = 0;  ///< sweep_circuit_fingerprint, written into each checkpoint
  std::uint64_t task_fingerprint = 0;     ///< sweep_task_fingerprint, written into each checkpoint
  /// The front end's stop flag, polled after every layer (and after the last: a signal in the last layer
  /// is an interruption too). May be empty.
  std::function<bool()> interrupted;
};

struct SweepRunResult {
  /// The segments' statistics together (records joined, counts and discarded weights summed, the largest
  /// peak, the last segment's layers_done and final_terms).
  SweepStats stats;
  bool interrupted = false;         ///< interrupted() stopped it: `state` holds where
  bool checkpoint_written = false;  ///< the last stop wrote a checkpoint (or found it written)
};

/// Runs the sweep of `observable` through `columns` (with `gradients`) in segments as `options` say:
/// from the observable, or from `state` when `resumed` (a SweepResumePoint's). `state` ends as the state
/// reached: the whole sweep, or where it was interrupted. Throws what propagate_sweep and writing a
/// checkpoint throw.
SweepRunResult run_sweep_segments(const AnyPauliSum& observable, std::span<const Circuit> columns,
                                  std::span<const SweepGradient> gradients, const SweepRunOptions& options,
                                  SweepState& state, bool resumed);

}  // namespace paulistrings
