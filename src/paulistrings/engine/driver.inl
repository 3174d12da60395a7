// Template body of run_layers (included by driver.h).

#include <algorithm>
#include <chrono>
#include <string>

#include "paulistrings/channels/prepared_channel.h"

namespace paulistrings {

namespace engine_detail {

/// The memory-budget cut: approx_topn down to `limit` terms when the sum holds more.
template <int W, class E>
double budget_cut(E& engine, std::size_t limit, std::size_t next_fanout, const PropagateOptions& options,
                  PropagationStats& stats) {
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

}  // namespace engine_detail

template <int W, class E>
  requires LayerEngine<E, W>
PropagationStats run_layers(E& engine, const Circuit& circuit, const PropagateOptions& options) {
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
        record.budget_discarded_weight += engine_detail::budget_cut<W>(engine, room, fanout, options, stats);
      }
    }
    record.discarded_weight = engine.apply_layer(table, options.truncation);
    const LayerPassResult pass = engine.finalize_layer(options.truncation);
    record.discarded_weight += pass.discarded_weight;
    record.collapsed = pass.collapsed;
    if (options.max_terms > 0)
      record.budget_discarded_weight += engine_detail::budget_cut<W>(engine, options.max_terms, 1, options, stats);
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

}  // namespace paulistrings
