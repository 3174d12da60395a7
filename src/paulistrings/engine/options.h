#pragma once
// PropagateOptions: everything a propagation run is given besides the sum and the circuit — direction,
// truncation, which engine and how it is tuned, resume point, memory budget, callbacks. Plain data: the
// engine is chosen from these in one place, run/propagate.cc.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "paulistrings/channels/channel.h"
#include "paulistrings/engine/gpu_options.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings {

/// The default of PropagateOptions::parallel_threshold (docs/design.md §7.2, "Threads a layer takes").
inline constexpr std::size_t kParallelGrain = 4096;

/// The threads a CPU engine gives a layer of `terms` terms whose work per term is `weight` times a
/// rotation's: one per `grain` weighted terms, from 1 to `threads` (grain 0: `threads`). A parallel region
/// costs tens of microseconds of waking and joining threads, more than a small layer's work
/// (docs/design.md §7.2).
constexpr int layer_threads(std::size_t terms, std::size_t weight, std::size_t grain, int threads) {
  if (threads <= 1) return 1;
  if (grain == 0) return threads;
  const std::size_t wanted = terms * weight / grain;
  return wanted <= 1 ? 1 : wanted >= static_cast<std::size_t>(threads) ? threads : static_cast<int>(wanted);
}

struct LayerRecord;

/// Which single-process engine applies the layers when no device is named: `cpu` is the fast
/// multi-threaded coset engine (cpu/), its first layers on the column engine (ColumnPhase below); `reference`
/// is the simple single-threaded engine every faster engine is checked against (engine/reference_engine.h);
/// `column` is the single-threaded column-index engine (cpu/column_engine.h, docs/design.md §7.5) — one
/// thread whatever `threads` says, faster than `cpu` on circuits of many light gates that each touch a small
/// fraction of the terms, slower where many terms anticommute with each gate. `column` runs on the host only:
/// with a device, partitions or in a sweep it is refused (std::invalid_argument).
enum class Engine : std::uint8_t { cpu, reference, column };

/// Formulation of the CPU engine's general (non-rotation, non-permutation) layers: `orbit` — inputs
/// grouped by orbit representative, a small matrix-vector product per orbit, no sort or merge — or
/// `sort_merge` — every output into one stream per coset, sorted, duplicates summed
/// (docs/design.md §4.3).
enum class GeneralLayer : std::uint8_t { orbit, sort_merge };

/// The host memory guard of a run (docs/design.md §2.8): before each layer the driver predicts what the
/// layer's output could reach — the terms now times the layer's largest fanout — and stops the run with
/// HostMemoryExceeded, before the layer, when those terms at `bytes_per_term` each would pass
/// `allowed_bytes`. One multiply and one compare a layer. The run's orchestration fills it
/// (run/memory_budget.h: what the process may use, by engine); allowed_bytes = 0 is no guard.
struct MemoryGuard {
  std::size_t allowed_bytes = 0;   ///< bytes the run's terms may take on top of the process at its start
  std::size_t bytes_per_term = 0;  ///< bytes one output term costs the engine, working set included
  /// How the message names the limit the bytes come from ("the memory available at the start, less a
  /// margin", …).
  std::string source;

  /// The terms the guard lets a layer's output reach (the largest size_t when there is no guard).
  std::size_t allowed_terms() const {
    return allowed_bytes > 0 && bytes_per_term > 0 ? allowed_bytes / bytes_per_term
                                                   : std::numeric_limits<std::size_t>::max();
  }
};

/// The CPU engine's column phase (docs/design.md §7.5, "The column phase"): a run of Engine::cpu starts
/// on the column engine (cpu/column_engine.h), which reads only the terms a gate changes, and moves to
/// the coset engine for good after the first layer in which more than `fraction` of the terms, and at
/// least `rows` of them, anticommuted with the gate (or had a factor on a channel's support); also once
/// the coset engine would give a layer more than one thread, or after `max_layers` layers. Both engines
/// give the same bits, so the phase changes the run's time, never its result. It applies when the run
/// uses the CPU engine's default formulations and no memory budget (max_terms), and starts only when the
/// coset engine would run the first layer on one thread.
struct ColumnPhase {
  bool enabled = true;
  double fraction = 0.125;
  std::size_t rows = 1024;
  std::size_t max_layers = std::numeric_limits<std::size_t>::max();
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
  /// Terms each thread of a CPU engine's layer takes at least (layer_threads below): a layer of fewer
  /// than twice this many terms runs on the calling thread; 0 = every thread on every layer.
  std::size_t parallel_threshold = kParallelGrain;
  /// CPU engine formulations, for measurement and cross-checks (the defaults are the measured best):
  /// general layers by orbit grouping or gather-sort-merge; rotations in place or by the orbit path.
  GeneralLayer general_layer = GeneralLayer::orbit;
  bool in_place_rotations = true;
  /// The CPU engine holds keys only as wide as the qubits the sum has used (cpu/narrow_engine.h,
  /// docs/design.md §7.6) when the truncation allows it; off = keys at the sum's width always.
  bool narrow_keys = true;
  /// The CPU engine applies runs of rotations and of rescaling noise in blocks, one pass over memory
  /// each (docs/design.md §7.7); off = one layer at a time.
  bool gate_blocks = true;
  /// The CPU engine's first layers on the column engine while they touch few terms (ColumnPhase).
  ColumnPhase column_phase;
  /// The GPU engine's switches (device ≥ 0, and GPU partitions).
  GpuEngineOptions gpu;
  /// Resume: the sum is the state after this many application steps; propagation continues from
  /// there (LayerRecord::application_index stays absolute).
  std::size_t start_layer = 0;
  /// Polled after every layer with the number of steps done so far — after a block of layers, at its
  /// end, when an engine takes several at once (engine/layer_engine.h) — and returning true stops the
  /// run there, leaving the sum in that state (PropagationStats::stopped). Checkpoints, Ctrl-C and
  /// cancellation from Python use it.
  std::function<bool(std::size_t layers_done)> should_stop;
  /// Blocks of layers end at multiples of this many steps (0: anywhere): where a checkpoint schedule
  /// wants should_stop to see every multiple.
  std::size_t block_boundary = 0;
  /// Polled inside the CPU engine's layers (between cosets, from any of its threads): returning true
  /// abandons the layer in progress and propagate() throws LayerInterrupted (engine/stats.h), leaving
  /// the sum as it was when propagate() was called. A signal in a layer of many seconds stops the run at
  /// once. Other engines poll should_stop between layers only.
  std::function<bool()> interrupt;
  /// Memory budget in terms (0 = none): between layers the sum holds at most max_terms, and no
  /// layer's output can exceed 2·max_terms. After a layer that left more, and before a layer whose
  /// full branching (size × largest fanout) could pass 2·max_terms, approx_topn shrinks the sum;
  /// each such cut is counted in PropagationStats. With auto_truncate = false the run throws
  /// MemoryBudgetExceeded instead of cutting.
  std::size_t max_terms = 0;
  bool auto_truncate = true;
  /// The host memory guard (none by default; the orchestration sets it for host engines).
  MemoryGuard memory_guard;
  /// Called after every layer (a trace sink); may be empty.
  std::function<void(const LayerRecord&)> on_layer;
  /// Keep every LayerRecord in PropagationStats::layers.
  bool keep_layer_records = true;
  /// Sweeps (sweep/propagate_sweep.h, docs/design.md §7.8): under a per-term truncation, split the value
  /// columns into groups of adjacent columns when the terms each group keeps cost clearly less than the
  /// union; false keeps one group. A group is counted from sweep_split_min_terms terms on, and the split
  /// prices every group it would make at that many keys besides its terms (what a group costs at every
  /// layer whatever it holds).
  bool sweep_split = true;
  std::size_t sweep_split_min_terms = std::size_t{1} << 14;
};

}  // namespace paulistrings
