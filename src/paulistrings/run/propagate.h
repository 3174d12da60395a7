#pragma once
// propagate(): the library's entry point for a propagation, and the one place that chooses the engine
// (choose_engine): the reference engine, the CPU coset engine, the GPU engine, partitions in this
// process, or one partition per rank of a distributed run. The C++ API, the command line and the Python
// package all come through here; engines never choose among themselves (docs/design.md §3).

#include <cstdint>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/any_pauli_sum.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/engine/options.h"
#include "paulistrings/engine/stats.h"
#include "paulistrings/partition/partitioned_propagate.h"

namespace paulistrings {

enum class EngineKind : std::uint8_t { reference, cpu, gpu, partitioned, distributed, column };

/// "reference", "cpu", "gpu", "partitioned", "distributed" or "column".
const char* engine_kind_name(EngineKind kind);

/// The engine a run with these options uses: `distributed` when partition.transport is set;
/// `partitioned` when it asks for more than one partition, lists devices or pins CPU lists; `gpu` when
/// options.device ≥ 0; otherwise options.engine (`cpu`, `reference` or `column`). (propagate() refuses
/// Engine::column with a device or partitions.)
EngineKind choose_engine(const PropagateOptions& options, const PartitionOptions& partition = {});

/// Evolves `sum` in place through `circuit` on the engine choose_engine(options) names (reference, CPU,
/// column or GPU: a device run uploads, propagates and downloads; the column engine runs on one thread).
/// Throws std::invalid_argument for a bad run (validate_run: qubit counts differ, a real sum meets a channel
/// with complex amplitudes, …), and HostMemoryExceeded when host memory runs out (engine/driver.h): with
/// Details::state_kept, `sum` then holds the state after Details::layers_done layers; without, it is not to
/// be used.
template <int W, Coefficient C>
PropagationStats propagate(PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options = {});

/// Runtime-width form: dispatches once; a real sum is switched to complex storage first when a
/// channel has complex amplitudes.
PropagationStats propagate(AnyPauliSum& sum, const Circuit& circuit, const PropagateOptions& options = {});

/// What a run on any engine reports: the engine that ran it, the propagation statistics (global
/// counts for partitioned runs) and, for partitioned and distributed runs, what crossed partitions.
struct Propagation {
  EngineKind engine = EngineKind::cpu;
  PropagationStats stats;
  PartitionStats partitions;  ///< default (one partition) unless engine is partitioned or distributed
};

/// Any engine, partitioned and distributed ones included (see choose_engine and
/// partition/partitioned_propagate.h for what partitioned runs do and require).
template <int W, Coefficient C>
Propagation propagate(PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options,
                      const PartitionOptions& partition);
Propagation propagate(AnyPauliSum& sum, const Circuit& circuit, const PropagateOptions& options,
                      const PartitionOptions& partition);

#define PAULISTRINGS_DECLARE_PROPAGATE(W, C)                                                                   \
  extern template PropagationStats propagate<W, C>(PauliSum<W, C>&, const Circuit&, const PropagateOptions&); \
  extern template Propagation propagate<W, C>(PauliSum<W, C>&, const Circuit&, const PropagateOptions&,       \
                                              const PartitionOptions&);
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_DECLARE_PROPAGATE)
#undef PAULISTRINGS_DECLARE_PROPAGATE

}  // namespace paulistrings
