#pragma once
// run_sweep(): the layer driver of a sweep (sweep/propagate_sweep.h) — engine/driver.h's walk with K
// tables per layer, one per value column (and the shifted tables of derivative columns): it prepares them,
// checks that they share one structure, makes room
// under the memory budget, checks the host memory guard, lets the engine apply the layer and its
// truncation, and records the layer. A sweep engine provides size(), apply_layer(SweepLayer, truncation,
// dropped) and finalize_layer(truncation, dropped), adding each column's dropped Σ|c|² to dropped[k].
// A resumed sweep (SweepState) starts at step `start_layer`, the engine holding the state after it.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/circuit/circuit.h"
#include "paulistrings/engine/driver.h"
#include "paulistrings/engine/options.h"
#include "paulistrings/sweep/propagate_sweep.h"
#include "paulistrings/sweep/sweep_table.h"

namespace paulistrings {

namespace sweep_detail {

/// Throws unless `table` has the form and place of `first` (same rotation generator, or same support).
template <int W>
void check_same_structure(const PreparedChannel<W>& first, const PreparedChannel<W>& table, std::size_t step,
                          std::size_t layers, const Channel& channel, std::size_t column) {
  using Form = typename PreparedChannel<W>::Form;
  bool same = first.form == table.form;
  if (same && table.form == Form::rotation) same = first.generator == table.generator;
  if (same && table.form == Form::local) {
    same = first.support_size == table.support_size && first.qubits[0] == table.qubits[0] &&
           (table.support_size < 2 || first.qubits[1] == table.qubits[1]);
  }
  if (!same) {
    throw std::invalid_argument("sweep: " + engine_detail::layer_name(step, layers, channel) + " of column " +
                                std::to_string(column) +
                                " acts differently from column 0's (the columns of a " +
                                "sweep must share one gate structure: the same gates on the same qubits)");
  }
}

}  // namespace sweep_detail

/// Throws unless every gradient has a list per column of distinct layers in range.
inline void check_gradients(std::span<const SweepGradient> gradients, std::size_t K, std::size_t layers) {
  for (const SweepGradient& gradient : gradients) {
    if (gradient.derivatives.size() != K) {
      throw std::invalid_argument("sweep gradient '" + gradient.name +
                                  "': " + std::to_string(gradient.derivatives.size()) +
                                  " columns of derivatives for " + std::to_string(K) + " columns");
    }
    for (const auto& column : gradient.derivatives) {
      std::vector<char> seen(layers, 0);
      for (const LayerDerivative& d : column) {
        if (d.layer >= layers || seen[d.layer]) {
          throw std::invalid_argument(
              "sweep gradient '" + gradient.name + "': layer " + std::to_string(d.layer) +
              (d.layer >= layers ? " is past the circuit's end" : " is listed twice"));
        }
        seen[d.layer] = 1;
      }
    }
  }
}

template <int W, class E>
SweepStats run_sweep(E& engine, std::span<const Circuit> columns, std::span<const SweepGradient> gradients,
                     const PropagateOptions& options, std::size_t start_layer = 0) {
  using Clock = std::chrono::steady_clock;
  const std::size_t K = columns.size();
  const Circuit& circuit = columns[0];
  const std::size_t layers = circuit.size();
  const std::size_t all_columns = K * (1 + gradients.size());
  check_gradients(gradients, K, layers);
  // derivative_at[(g·K + k)·layers + l]: column k's derivative of layer l with respect to gradient g.
  std::vector<const LayerDerivative*> derivative_at(gradients.empty() ? 0 : all_columns * layers, nullptr);
  for (std::size_t g = 0; g < gradients.size(); ++g) {
    for (std::size_t k = 0; k < K; ++k) {
      for (const LayerDerivative& d : gradients[g].derivatives[k])
        derivative_at[(g * K + k) * layers + d.layer] = &d;
    }
  }
  std::vector<PreparedChannel<W>> plus(gradients.size() * K), minus(gradients.size() * K);
  std::vector<typename SweepLayer<W>::Source> sources(gradients.empty() ? 0 : all_columns);
  SweepStats result;
  result.discarded_weight.assign(all_columns, 0.0);
  PropagationStats& stats = result.stats;
  stats.peak_terms = engine.size();
  stats.layers_done = start_layer;
  if (options.keep_layer_records) stats.layers.reserve(layers - std::min(start_layer, layers));
  const MemoryGuard& guard = options.memory_guard;
  const std::size_t guard_terms = guard.allowed_terms();
  std::vector<PreparedChannel<W>> tables(K);
  std::vector<double> dropped(all_columns);
  // The largest value column's dropped weight (the record's), and the per-column totals.
  auto settle = [&]() {
    double largest = 0.0;
    for (std::size_t k = 0; k < all_columns; ++k) {
      result.discarded_weight[k] += dropped[k];
      if (k < K) largest = std::max(largest, dropped[k]);
      dropped[k] = 0.0;
    }
    return largest;
  };
  auto budget_cut = [&](std::size_t limit, std::size_t fanout) {
    if (engine.size() <= limit) return;
    if (!options.auto_truncate) {
      throw MemoryBudgetExceeded("memory budget: the sweep would grow to " +
                                 std::to_string(engine.size() * fanout) + " terms, over the limit of " +
                                 std::to_string(options.max_terms) + " (auto-truncation is off)");
    }
    // A grouped engine (sweep/grouped_sweep_engine.h) shares the limit out among its groups.
    if constexpr (requires { engine.budget_cut(limit, std::span<double>(dropped)); })
      engine.budget_cut(limit, std::span<double>(dropped));
    else
      engine.finalize_layer(Truncation::approx_topn(limit), std::span<double>(dropped));
    engine_detail::release_free_memory();
    ++stats.budget_truncations;
  };
  for (std::size_t step = start_layer; step < layers; ++step) {
    const std::size_t index = engine_detail::circuit_index(options.direction, layers, step);
    const Channel& channel = circuit[index];
    const auto start = Clock::now();
    LayerRecord record;
    record.application_index = step;
    record.circuit_index = index;
    record.gate_name = channel.name();
    record.terms_in = engine.size();
    int largest_fanout = 1;
    for (std::size_t k = 0; k < K; ++k) {
      tables[k] = prepare_channel<W>(columns[k][index], options.direction);
      if (k > 0) sweep_detail::check_same_structure(tables[0], tables[k], step, layers, columns[k][index], k);
      largest_fanout = std::max(largest_fanout, tables[k].max_fanout);
    }
    // Derivative columns whose parameter this layer uses: their source terms.
    for (std::size_t g = 0; g < gradients.size(); ++g) {
      for (std::size_t k = 0; k < K; ++k) {
        const std::size_t column = K * (1 + g) + k;
        sources[column] = {};
        const LayerDerivative* d = derivative_at[(g * K + k) * layers + index];
        if (d == nullptr) continue;
        plus[g * K + k] = prepare_channel<W>(d->plus, options.direction);
        minus[g * K + k] = prepare_channel<W>(d->minus, options.direction);
        sweep_detail::check_same_structure(tables[0], plus[g * K + k], step, layers, d->plus, k);
        sweep_detail::check_same_structure(tables[0], minus[g * K + k], step, layers, d->minus, k);
        sources[column] = {k, &plus[g * K + k], &minus[g * K + k], d->scale};
      }
    }
    SweepLayer<W> layer;
    layer.tables = std::span<const PreparedChannel<W>>(tables);
    layer.columns = all_columns;
    layer.sources = std::span<const typename SweepLayer<W>::Source>(sources);
    // The union of the columns' outputs can branch further than one column's (a local table's outputs
    // differ per column where an amplitude vanishes): at most 16 outputs per input on two qubits.
    const std::size_t fanout = static_cast<std::size_t>(
        (K > 1 || !gradients.empty()) && tables[0].form == PreparedChannel<W>::Form::local
            ? std::size_t{1} << (2 * tables[0].support_size)
            : static_cast<std::size_t>(largest_fanout));
    try {
      if (options.max_terms > 0) {
        budget_cut(std::max<std::size_t>(2 * options.max_terms / fanout, 1), fanout);
        record.budget_discarded_weight += settle();
      }
      if (fanout > 1 && engine.size() * fanout > guard_terms) {
        engine_detail::stop_for_host_memory(step, layers, channel, engine.size(), engine.size() * fanout,
                                            guard);
      }
      engine.apply_layer(layer, options.truncation, std::span<double>(dropped));
      if (options.truncation.has_layer_pass())
        engine.finalize_layer(options.truncation, std::span<double>(dropped));
      record.discarded_weight = settle();
      if (options.max_terms > 0) {
        budget_cut(options.max_terms, 1);
        const double cut = settle();
        record.budget_discarded_weight += cut;
        record.discarded_weight += cut;
      }
    } catch (const std::bad_alloc&) {
      engine_detail::refused_allocation(step, layers, channel, record.terms_in);
    }
    record.terms_out = engine.size();
    record.wall_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    stats.budget_discarded_weight += record.budget_discarded_weight;
    engine_detail::record_layer(std::move(record), options, stats);
    if (engine_detail::stop_after(step + 1, layers, options)) {
      stats.stopped = true;
      break;
    }
  }
  stats.final_terms = engine.size();
  return result;
}

}  // namespace paulistrings
