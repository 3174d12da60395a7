#pragma once
// The typed propagate() of run/propagate.h: the engine chosen, built over the sum and run. Included only
// by propagate_w*.cc, which compile its instances one width a unit (every width instantiates the CPU,
// narrowed-key and column engines; in one unit they were the CI build's longest edge:
// docs/PERFORMANCE.md, "CI time").

#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "paulistrings/cpu/column_engine.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/cpu/host_engine.inl"
#include "paulistrings/cpu/narrow_engine.h"
#include "paulistrings/engine/driver.h"
#include "paulistrings/engine/reference_engine.h"
#include "paulistrings/engine/validate.h"
#include "paulistrings/gpu/device_sum.h"
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
      if constexpr (W > 1) {
        if (runs_narrowed<W>(options)) {
          NarrowEngine<W, C> engine(sum, cpu_engine_options(options));
          return run_detail::run_on_host<W>(engine, sum, circuit, options);
        }
      }
      CpuEngine<W, C> engine(sum, cpu_engine_options(options));
      return run_detail::run_on_host<W>(engine, sum, circuit, options);
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
