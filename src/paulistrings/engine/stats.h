#pragma once
// What a propagation run reports: one LayerRecord per layer applied (the trace) and the run's totals.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace paulistrings {

struct LayerRecord {
  std::size_t application_index = 0;  ///< 0..layers-1 in the order applied
  std::size_t circuit_index = 0;      ///< position of the channel in the circuit as written
  std::string gate_name;
  std::size_t terms_in = 0;
  std::size_t terms_out = 0;      ///< after this layer's truncation
  double discarded_weight = 0.0;  ///< Σ|c|² removed by truncation in this layer
  std::uint64_t wall_ns = 0;  ///< this layer's time; layers applied as one block share its time evenly
  bool collapsed = false;                ///< collapse_sample replaced the sum in this layer
  double budget_discarded_weight = 0.0;  ///< part of discarded_weight removed by the memory budget
};

/// Thrown when a run with a memory budget and auto_truncate = false would exceed the budget.
class MemoryBudgetExceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown when a run stops for want of host memory: the memory guard (PropagateOptions::memory_guard)
/// found that a layer could grow the sum past the bytes the process may use and stopped before it, or
/// the host refused an allocation inside a layer (std::bad_alloc, e.g. under an address-space limit).
class HostMemoryExceeded : public std::runtime_error {
 public:
  struct Details {
    std::size_t layers_done = 0;  ///< layers complete (absolute): the layer that did not run is the next
    std::string gate;             ///< that layer's channel
    std::size_t terms = 0;        ///< terms before it
    /// The guard: what the layer's output could reach (terms × its largest fanout), those terms'
    /// bytes, and the bytes the process may still add (both 0 for std::bad_alloc).
    std::size_t predicted_terms = 0;
    std::size_t bytes_needed = 0;
    std::size_t bytes_allowed = 0;
    /// The engine still held the state after layers_done layers (the guard stops before a layer);
    /// false after std::bad_alloc inside a layer, which leaves an engine's state half-written.
    bool state_kept = true;
  };
  HostMemoryExceeded(const std::string& what, Details details)
      : std::runtime_error(what), details_(std::move(details)) {}
  const Details& details() const { return details_; }

 private:
  Details details_;
};

/// Thrown by an engine that PropagateOptions::interrupt stopped inside a layer (the CPU engine polls it
/// between cosets). The engine's contents are then unspecified; the sum propagate() was given is
/// unchanged (the CPU engine works on its own copy).
class LayerInterrupted : public std::runtime_error {
 public:
  LayerInterrupted() : std::runtime_error("the layer was interrupted") {}
};

struct PropagationStats {
  std::vector<LayerRecord> layers;
  std::size_t layers_done = 0;           ///< application steps completed (absolute, counting start_layer)
  bool stopped = false;                  ///< should_stop ended the run before the last layer
  std::size_t budget_truncations = 0;    ///< memory-budget cuts made
  double budget_discarded_weight = 0.0;  ///< Σ|c|² those cuts removed (also in discarded_weight)
  std::size_t peak_terms = 0;            ///< max of the input size and every layer's output size
  std::size_t final_terms = 0;
  double discarded_weight = 0.0;
  std::size_t collapses = 0;
  /// Of this run's layers, how many the CPU engine's column phase applied (PropagateOptions::column_phase).
  std::size_t column_layers = 0;
};

/// Adds the statistics of a run's continuation (a later segment, a resumed run, the coset engine after
/// the column phase) to the run's: records joined, counts and discarded weight summed, the largest peak,
/// the continuation's layers_done, stopped and final_terms.
inline void add_segment_stats(PropagationStats& run, PropagationStats&& part) {
  run.layers.insert(run.layers.end(), std::make_move_iterator(part.layers.begin()),
                    std::make_move_iterator(part.layers.end()));
  run.layers_done = part.layers_done;
  run.stopped = part.stopped;
  run.budget_truncations += part.budget_truncations;
  run.budget_discarded_weight += part.budget_discarded_weight;
  run.peak_terms = std::max(run.peak_terms, part.peak_terms);
  run.final_terms = part.final_terms;
  run.discarded_weight += part.discarded_weight;
  run.collapses += part.collapses;
  run.column_layers += part.column_layers;
}

}  // namespace paulistrings
