// Template body of propagate (included by propagate.h).

#include <chrono>
#include <stdexcept>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/cpu/cpu_engine.h"
#include "paulistrings/engine/reference_engine.h"

namespace paulistrings {

namespace engine_detail {

/// The reference engine behind the layer-engine interface the driver uses:
/// size(), apply_layer(table, truncation) → discarded Σ|c|², finalize_layer(truncation).
template <int W, Coefficient C>
class ReferenceLayers {
 public:
  ReferenceLayers(PauliSum<W, C>& sum, const PropagateOptions& options) : sum_(sum), options_(options) {
    sum_.refine_to_fit(options.target_bucket_len, options.min_buckets);
  }
  std::size_t size() const { return sum_.size(); }
  double apply_layer(const PreparedChannel<W>& table, const Truncation& truncation) {
    return apply_layer_reference(sum_, table, truncation, options_.target_bucket_len, options_.min_buckets);
  }
  LayerPassResult finalize_layer(const Truncation& truncation) { return truncation.finalize_layer(sum_); }

 private:
  PauliSum<W, C>& sum_;
  const PropagateOptions& options_;
};

/// The memory-budget cut: approx_topn down to `limit` terms when the sum holds more.
template <class LayerEngine>
double budget_cut(LayerEngine& engine, std::size_t limit, std::size_t next_fanout,
                  const PropagateOptions& options, PropagationStats& stats) {
  if (engine.size() <= limit) return 0.0;
  if (!options.auto_truncate) {
    throw MemoryBudgetExceeded("memory budget: the sum would grow to " +
                               std::to_string(engine.size() * next_fanout) + " terms, over the limit of " +
                               std::to_string(options.max_terms) + " (auto-truncation is off)");
  }
  const LayerPassResult cut = engine.finalize_layer(Truncation::approx_topn(limit));
  ++stats.budget_truncations;
  stats.budget_discarded_weight += cut.discarded_weight;
  return cut.discarded_weight;
}

/// Walks the circuit with any layer engine, recording the trace.
template <int W, class LayerEngine>
PropagationStats run_layers(LayerEngine& engine, const Circuit& circuit, const PropagateOptions& options) {
  using Clock = std::chrono::steady_clock;
  PropagationStats stats;
  stats.peak_terms = engine.size();
  const std::size_t layers = circuit.size();
  if (options.start_layer > layers) {
    throw std::invalid_argument("start_layer " + std::to_string(options.start_layer) +
                                " is past the circuit's " + std::to_string(layers) + " layers");
  }
  stats.layers_done = options.start_layer;
  if (options.keep_layer_records) stats.layers.reserve(layers - options.start_layer);
  for (std::size_t step = options.start_layer; step < layers; ++step) {
    const std::size_t index = options.direction == Direction::forward ? step : layers - 1 - step;
    const Channel& channel = circuit[index];
    const auto start = Clock::now();
    LayerRecord record;
    record.application_index = step;
    record.circuit_index = index;
    record.gate_name = channel.name();
    record.terms_in = engine.size();
    const PreparedChannel<W> table = prepare_channel<W>(channel, options.direction);
    if (options.max_terms > 0) {
      // Make room first so that even a layer whose every term branches fully (size × fanout) stays
      // within twice the budget mid-layer; rotations (fanout 2) never need this cut.
      const std::size_t fanout = static_cast<std::size_t>(std::max(table.max_fanout, 1));
      const std::size_t room = std::max<std::size_t>(2 * options.max_terms / fanout, 1);
      if (engine.size() > room) {
        record.budget_discarded_weight += budget_cut(engine, room, fanout, options, stats);
      }
    }
    record.discarded_weight = engine.apply_layer(table, options.truncation);
    const LayerPassResult pass = engine.finalize_layer(options.truncation);
    record.discarded_weight += pass.discarded_weight;
    record.collapsed = pass.collapsed;
    if (options.max_terms > 0)
      record.budget_discarded_weight += budget_cut(engine, options.max_terms, 1, options, stats);
    record.discarded_weight += record.budget_discarded_weight;
    record.terms_out = engine.size();
    record.wall_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    stats.peak_terms = std::max(stats.peak_terms, record.terms_out);
    stats.discarded_weight += record.discarded_weight;
    stats.collapses += record.collapsed;
    stats.layers_done = step + 1;
    if (options.on_layer) options.on_layer(record);
    if (options.keep_layer_records) stats.layers.push_back(std::move(record));
    if (step + 1 < layers && options.should_stop && options.should_stop(step + 1)) {
      stats.stopped = true;
      break;
    }
  }
  stats.final_terms = engine.size();
  return stats;
}

}  // namespace engine_detail

template <int W, Coefficient C>
PropagationStats propagate(PauliSum<W, C>& sum, const Circuit& circuit, const PropagateOptions& options) {
  if (sum.num_qubits() != circuit.num_qubits()) {
    throw std::invalid_argument("the Pauli sum has " + std::to_string(sum.num_qubits()) +
                                " qubits but the circuit has " + std::to_string(circuit.num_qubits()));
  }
  if constexpr (!PauliSum<W, C>::kIsComplex) {
    for (std::size_t k = 0; k < circuit.size(); ++k) {
      if (circuit[k].has_complex_transfer()) {
        throw std::invalid_argument("gate " + std::to_string(k) + " (" + circuit[k].description() +
                                    ") has complex transfer amplitudes: propagate a complex-coefficient sum");
      }
    }
  }
  if (options.threads < 0) throw std::invalid_argument("threads must be ≥ 0 (0 = all available cores)");
  if (options.device < -1) {
    throw std::invalid_argument("device must be −1 (CPU) or a CUDA device ordinal ≥ 0, got " +
                                std::to_string(options.device));
  }
  if (options.device >= 0) return gpu::propagate_on_device(sum, circuit, options);
  if (options.engine == Engine::reference) {
    engine_detail::ReferenceLayers<W, C> engine(sum, options);
    return engine_detail::run_layers<W>(engine, circuit, options);
  }
  CpuEngineOptions cpu_options;
  cpu_options.threads = options.threads;
  cpu_options.target_bucket_len = options.target_bucket_len;
  cpu_options.min_buckets = options.min_buckets;
  cpu_options.parallel_threshold = options.parallel_threshold;
  cpu_options.in_place_rotations = options.in_place_rotations;
  cpu_options.general_layer = options.general_layer;
  cpu_options.interrupt = options.interrupt;
  CpuEngine<W, C> engine(sum, cpu_options);
  PropagationStats stats = engine_detail::run_layers<W>(engine, circuit, options);
  engine.export_to(sum);
  return stats;
}

}  // namespace paulistrings
