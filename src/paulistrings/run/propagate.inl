#pragma once
// The typed propagate() of run/propagate.h: the engine chosen, built over the sum and run. Included only
// by propagate_w*.cc, which compile its instances one width a unit (every width instantiates the CPU,
// narrowed-key and column engines; in one unit they were the CI build's longest edge:
// docs/PERFORMANCE.md, "CI time").

#include <algorithm>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "paulistrings/cpu/column_engine.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/cpu/host_engine.inl"
#include "paulistrings/cpu/narrow_engine.h"
#include "paulistrings/engine/cpus.h"
#include "paulistrings/engine/driver.h"
#include "paulistrings/engine/reference_engine.h"
#include "paulistrings/engine/validate.h"
#include "paulistrings/gpu/device_sum.h"
#include "paulistrings/run/memory_budget.h"
#include "paulistrings/run/propagate.h"

namespace paulistrings {

namespace run_detail {

/// Runs a host engine built over `sum` and writes its result (or, when the memory guard stopped the run
/// before a layer, the state after the layers done) back into `sum`.
template <int W, class Engine, class Sum>
PropagationStats run_on_host(Engine& engine, Sum& sum, const Circuit& circuit,
                             const PropagateOptions& options) {
  PropagationStats stats;
  try {
    stats = run_layers<W>(engine, circuit, options);
  } catch (const HostMemoryExceeded& e) {
    if (!e.details().state_kept) throw;
    // The guard stopped before a layer: hand back the state after the layers done (for a checkpoint).
    try {
      engine.export_to(sum);
    } catch (const std::bad_alloc&) {
      HostMemoryExceeded::Details details = e.details();
      details.state_kept = false;
      throw HostMemoryExceeded(std::string(e.what()) + " (and the state could not be handed back)",
                               std::move(details));
    }
    throw;
  }
  try {
    engine.export_to(sum);
  } catch (const std::bad_alloc&) {
    HostMemoryExceeded::Details details;
    details.layers_done = stats.layers_done;
    details.terms = engine.size();
    details.state_kept = false;
    throw HostMemoryExceeded("out of host memory: an allocation was refused (std::bad_alloc) while the " +
                                 std::to_string(engine.size()) + " terms after layer " +
                                 std::to_string(stats.layers_done) + " were written back into the sum",
                             std::move(details));
  }
  return stats;
}

/// The CPU engine (narrowed keys when they apply) built over `from` and run into `into`; when they are
/// two sums, `from` is emptied once the engine holds its own copy of the terms.
template <int W, Coefficient C>
PropagationStats run_cpu_engine(PauliSum<W, C>& from, PauliSum<W, C>& into, const Circuit& circuit,
                                const PropagateOptions& options) {
  auto run = [&](auto& engine) {
    if (&from != &into) from = PauliSum<W, C>(from.num_qubits());
    return run_on_host<W>(engine, into, circuit, options);
  };
  if constexpr (W > 1) {
    if (runs_narrowed<W>(options)) {
      NarrowEngine<W, C> engine(from, cpu_engine_options(options));
      return run(engine);
    }
  }
  CpuEngine<W, C> engine(from, cpu_engine_options(options));
  return run(engine);
}

/// The threads the CPU engine's layers may take.
inline int cpu_threads(const PropagateOptions& options) {
  return options.threads > 0 ? options.threads : available_cpus();
}

/// How many times a layer of `circuit` can multiply the terms at most: 4^k for its widest channel of k
/// qubits (a term's Pauli on the support can map to every one).
inline std::size_t largest_growth(const Circuit& circuit) {
  std::size_t k = 1;
  for (const Channel& channel : circuit) k = std::max(k, channel.qubits().size());
  return k >= 16 ? std::numeric_limits<std::size_t>::max() : std::size_t{1} << (2 * k);
}

/// Whether a run of Engine::cpu starts with the column phase (PropagateOptions::column_phase,
/// docs/design.md §7.5): the run's formulations are the defaults the column engine matches bit for bit,
/// no memory budget cuts the sum (the column engine's budget differs), the coset engine would run the
/// first layer on one thread, and the column engine's memory guard (column_guard_terms) lets any layer
/// run.
inline bool starts_with_column_phase(std::size_t terms, const PropagateOptions& options,
                                     std::size_t column_guard_terms) {
  const ColumnPhase& phase = options.column_phase;
  if (!phase.enabled || phase.max_layers == 0 || options.engine != Engine::cpu || options.device >= 0)
    return false;
  if (!options.in_place_rotations || options.general_layer != GeneralLayer::orbit || options.max_terms > 0) {
    return false;
  }
  if (terms > column_guard_terms) return false;
  const int threads = cpu_threads(options);
  return threads == 1 || (options.parallel_threshold > 0 && terms < 2 * options.parallel_threshold);
}

/// Engine::cpu with the column phase: the column engine from the first layer until the phase ends
/// (ColumnPhase), then the CPU engine from there, as a resumed run (start_layer). Both give the same
/// bits, so the run's result is the CPU engine's. `sum` is written once, at the end (or when the memory
/// guard stops the run), so an interrupt leaves it as it was, as with the CPU engine alone.
template <int W, Coefficient C>
PropagationStats run_with_column_phase(PauliSum<W, C>& sum, const Circuit& circuit,
                                       const PropagateOptions& options) {
  PropagateOptions first = options;
  if (first.memory_guard.allowed_bytes > 0) {
    first.memory_guard.bytes_per_term = column_host_bytes_per_term(W, PauliSum<W, C>::kIsComplex);
  }
  // The terms up to which every layer of the circuit passes the column engine's guard: the phase ends
  // before the sum outgrows them, where the coset engine's guard (fewer bytes a term) still lets it run.
  const std::size_t guard_terms = first.memory_guard.allowed_terms() / largest_growth(circuit);
  if (!starts_with_column_phase(sum.size(), options, guard_terms))
    return run_cpu_engine<W>(sum, sum, circuit, options);

  const ColumnPhase& phase = options.column_phase;
  const int threads = cpu_threads(options);
  std::optional<ColumnEngine<W, C>> column;
  column.emplace(sum, ColumnEngineOptions{options.target_bucket_len, options.min_buckets});
  std::size_t terms_in = column->size();  // the terms the last layer met
  std::uint64_t visited = 0;              // rows the column engine's layers read, up to the last
  bool user_stop = false, moved = false;
  // Polled after every layer: the caller's stop first, then whether the phase ends here.
  first.should_stop = [&](std::size_t done) {
    if (options.should_stop && options.should_stop(done)) {
      user_stop = true;
      return true;
    }
    if (options.interrupt && options.interrupt()) throw LayerInterrupted();
    const std::uint64_t read = column->counters().rows_visited - visited;
    visited = column->counters().rows_visited;
    const std::size_t met = terms_in;
    terms_in = column->size();
    const bool crowded =
        read >= phase.rows && static_cast<double>(read) > phase.fraction * static_cast<double>(met);
    const bool threaded = threads > 1 && terms_in >= 2 * options.parallel_threshold;
    moved = crowded || threaded || terms_in > guard_terms || done - options.start_layer >= phase.max_layers;
    return moved;
  };
  PauliSum<W, C> middle(sum.num_qubits());
  PropagationStats stats;
  try {
    stats = run_on_host<W>(*column, middle, circuit, first);
  } catch (const HostMemoryExceeded& e) {
    if (e.details().state_kept) sum = std::move(middle);
    throw;
  }
  column.reset();
  stats.column_layers = stats.layers_done - options.start_layer;
  if (!moved || user_stop || stats.layers_done == circuit.size()) {
    sum = std::move(middle);
    return stats;
  }
  // The rest of the run on the CPU engine, resumed after the column engine's last layer.
  PropagateOptions rest = options;
  rest.start_layer = stats.layers_done;
  add_segment_stats(stats, run_cpu_engine<W>(middle, sum, circuit, rest));
  return stats;
}

}  // namespace run_detail

template <int W, Coefficient C>
PropagationStats propagate(PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options) {
  validate_run(sum.num_qubits(), PauliSum<W, C>::kIsComplex, circuit, options);
  switch (choose_engine(options)) {
    case EngineKind::gpu:
      return gpu::propagate_on_device(sum, circuit, options);
    case EngineKind::reference: {
      ReferenceEngine<W, C> engine(sum, options.target_bucket_len, options.min_buckets);
      return run_layers<W>(engine, circuit, options);
    }
    case EngineKind::column: {
      // Single-threaded: options.threads does not apply (docs/design.md §7.5).
      ColumnEngine<W, C> engine(sum, ColumnEngineOptions{options.target_bucket_len, options.min_buckets});
      return run_detail::run_on_host<W>(engine, sum, circuit, options);
    }
    default:
      return run_detail::run_with_column_phase<W>(sum, circuit, options);
  }
}

template <int W, Coefficient C>
Propagation propagate(PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options,
                      const PartitionOptions& partition) {
  Propagation result;
  result.engine = choose_engine(options, partition);
  if (options.engine == Engine::column && result.engine != EngineKind::column) {
    throw std::invalid_argument(
        "the column engine runs in one process on one partition; it cannot run partitioned or distributed");
  }
  if (result.engine == EngineKind::partitioned || result.engine == EngineKind::distributed) {
    PartitionedPropagation run = propagate_partitioned(sum, circuit, options, partition);
    result.stats = std::move(run.stats);
    result.partitions = std::move(run.partitions);
  } else {
    result.stats = propagate(sum, circuit, options);
  }
  return result;
}

/// The instances of one width, real and complex (one propagate_w*.cc each).
#define PAULISTRINGS_INSTANTIATE_PROPAGATE_WIDTH(W)                                                          \
  template PropagationStats propagate<W, double>(PauliSum<W, double>&, const Circuit&,                       \
                                                 const PropagateOptions&);                                   \
  template PropagationStats propagate<W, Complex>(PauliSum<W, Complex>&, const Circuit&,                     \
                                                  const PropagateOptions&);                                  \
  template Propagation propagate<W, double>(PauliSum<W, double>&, const Circuit&, const PropagateOptions&,   \
                                            const PartitionOptions&);                                        \
  template Propagation propagate<W, Complex>(PauliSum<W, Complex>&, const Circuit&, const PropagateOptions&, \
                                             const PartitionOptions&);                                       \
  template class HostEngine<W, double>;                                                                      \
  template class HostEngine<W, Complex>;

}  // namespace paulistrings
