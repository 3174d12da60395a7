#pragma once
// propagate(): the driver shared by every engine. It walks the circuit (forward: first to last
// applying U·U†; Heisenberg: last to first applying U†·U), and for each channel prepares its
// table, lets the chosen engine apply the layer with the per-term truncation fused in, runs the
// layer truncation passes and records one LayerRecord (the trace).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "paulistrings/channels/channel.h"
#include "paulistrings/circuit/circuit.h"
#include "paulistrings/core/any_pauli_sum.h"
#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings {

/// Which engine applies the layers: `cpu` is the fast multi-threaded coset engine (cpu/);
/// `reference` is the simple single-threaded engine every faster engine is checked against.
enum class Engine : std::uint8_t { cpu, reference };

struct LayerRecord {
  std::size_t application_index = 0;  ///< 0..layers-1 in the order applied
  std::size_t circuit_index = 0;      ///< position of the channel in the circuit as written
  std::string gate_name;
  std::size_t terms_in = 0;
  std::size_t terms_out = 0;      ///< after this layer's truncation
  double discarded_weight = 0.0;  ///< Σ|c|² removed by truncation in this layer
  std::uint64_t wall_ns = 0;
  bool collapsed = false;                ///< collapse_sample replaced the sum in this layer
  double budget_discarded_weight = 0.0;  ///< part of discarded_weight removed by the memory budget
};

/// Thrown when a run with a memory budget and auto_truncate = false would exceed the budget.
class MemoryBudgetExceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
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
};

struct PropagateOptions {
  Direction direction = Direction::forward;
  Truncation truncation;
  std::size_t target_bucket_len = 1024;  ///< refine buckets when the mean exceeds this
  std::size_t min_buckets = 128;
  Engine engine = Engine::cpu;
  /// CUDA device that runs the layers (gpu/): −1 = the CPU engines; ≥ 0 = that device ordinal (the
  /// sum is uploaded, propagated there and downloaded back; `engine` is then ignored).
  int device = -1;
  /// Threads of the CPU engine; 0 = every core allowed by the process affinity.
  int threads = 0;
  /// The CPU engine keeps layers of fewer terms on one thread (the small-sum path).
  std::size_t parallel_threshold = 4096;
  /// CPU engine formulations, for measurement and cross-checks (the defaults are the measured best):
  /// general layers by orbit grouping or gather-sort-merge; rotations in place or by the orbit path.
  GeneralLayer general_layer = GeneralLayer::orbit;
  bool in_place_rotations = true;
  /// Resume: the sum is the state after this many application steps; propagation continues from
  /// there (LayerRecord::application_index stays absolute).
  std::size_t start_layer = 0;
  /// Polled after every layer with the number of steps done so far; returning true stops the run
  /// there, leaving the sum in that state (PropagationStats::stopped). Checkpoints, Ctrl-C and
  /// cancellation from Python use it.
  std::function<bool(std::size_t layers_done)> should_stop;
  /// Polled inside the CPU engine's layers (between cosets): returning true abandons the layer in
  /// progress and propagate() throws LayerInterrupted (cpu/cpu_engine.h), leaving `sum` as it was when
  /// propagate() was called (the engine works on its own copy). A signal in a layer of many seconds
  /// stops the run at once. Other engines do not poll it.
  std::function<bool()> interrupt;
  /// Memory budget in terms (0 = none): between layers the sum holds at most max_terms, and no
  /// layer's output can exceed 2·max_terms. After a layer that left more, and before a layer whose
  /// full branching (size × largest fanout) could pass 2·max_terms, approx_topn shrinks the sum;
  /// each such cut is counted in PropagationStats. With auto_truncate = false the run throws
  /// MemoryBudgetExceeded instead of cutting.
  std::size_t max_terms = 0;
  bool auto_truncate = true;
  /// Called after every layer (a trace sink); may be empty.
  std::function<void(const LayerRecord&)> on_layer;
  /// Keep every LayerRecord in PropagationStats::layers.
  bool keep_layer_records = true;
};

/// Evolves `sum` in place through `circuit`. Throws std::invalid_argument when the qubit counts
/// differ or when a real sum meets a channel with complex amplitudes.
template <int W, Coefficient C>
PropagationStats propagate(PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options = {});

/// Runtime-width form: dispatches once; a real sum is switched to complex storage first when a
/// channel has complex amplitudes.
PropagationStats propagate(AnyPauliSum& sum, const Circuit& circuit, const PropagateOptions& options = {});

namespace gpu {
/// propagate() with options.device ≥ 0: upload, run on the device, download (gpu/device_sum.cc; without
/// CUDA it throws gpu::GpuUnavailable).
template <int W, Coefficient C>
PropagationStats propagate_on_device(PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options);
}  // namespace gpu

#define PAULISTRINGS_FOR_EACH_SUM_TYPE(X) \
  X(1, double)                            \
  X(2, double)                            \
  X(4, double)                            \
  X(8, double) X(16, double) X(1, Complex) X(2, Complex) X(4, Complex) X(8, Complex) X(16, Complex)
#define PAULISTRINGS_DECLARE_PROPAGATE(W, C) \
  extern template PropagationStats propagate<W, C>(PauliSum<W, C>&, const Circuit&, const PropagateOptions&);
PAULISTRINGS_FOR_EACH_SUM_TYPE(PAULISTRINGS_DECLARE_PROPAGATE)
#undef PAULISTRINGS_DECLARE_PROPAGATE

}  // namespace paulistrings

#include "paulistrings/engine/propagate.inl"
