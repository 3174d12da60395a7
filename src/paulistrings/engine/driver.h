#pragma once
// run_layers(): the layer driver every engine shares. It walks the circuit (forward: first to last,
// applying U·U†; Heisenberg: last to first, applying U†·U — docs/design.md §2.4), and for each channel
// prepares its table, makes room under the memory budget, checks the host memory guard, lets the
// engine apply the layer with the per-term truncation fused in, runs the layer truncation passes, and
// records one LayerRecord (the trace). Which engine runs is decided above the engines
// (run/propagate.h); this driver only needs the LayerEngine concept.

#include <cstddef>

#include "paulistrings/circuit/circuit.h"
#include "paulistrings/engine/layer_engine.h"
#include "paulistrings/engine/options.h"
#include "paulistrings/engine/stats.h"

namespace paulistrings {

/// Applies circuit layers options.start_layer … end to the sum `engine` holds. The caller has
/// validated the run (validate_run). Throws MemoryBudgetExceeded under a budget without auto-truncation,
/// and HostMemoryExceeded when options.memory_guard stops the run before a layer (the engine then holds
/// the state after the layers before it) or an allocation in a layer throws std::bad_alloc (the engine's
/// state is then not to be used: Details::state_kept is false).
template <int W, class E>
  requires LayerEngine<E, W>
PropagationStats run_layers(E& engine, const Circuit& circuit, const PropagateOptions& options);

}  // namespace paulistrings

#include "paulistrings/engine/driver.inl"
