#pragma once
// ReferenceSweepEngine<W, C>: the simple sweep engine every faster one is checked against
// (sweep/propagate_sweep.h): each layer rebuilds the sum from every column's outputs (one std::unordered_map
// of key → K coefficients), then applies the sweep truncation. Single-threaded, rows in key order.

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "paulistrings/channels/prepared_channel.h"
#include "paulistrings/sweep/sweep_sum.h"
#include "paulistrings/sweep/sweep_table.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings {

namespace sweep_detail {

/// Adds amplitude · c to `out` (real sums only meet real amplitudes: propagate_sweep makes the sum complex
/// first).
template <Coefficient C>
inline void add_scaled(C& out, const Complex& amplitude, const C& c) {
  if constexpr (std::same_as<C, double>) {
    out += amplitude.real() * c;
  } else {
    out += amplitude * c;
  }
}

/// The coefficient of largest magnitude of a row: the per-term test of a sweep is that column's test.
template <Coefficient C>
inline C largest(std::span<const C> row) {
  C best = row[0];
  double best_magnitude = magnitude_squared(best);
  for (std::size_t k = 1; k < row.size(); ++k) {
    const double m = magnitude_squared(row[k]);
    if (m > best_magnitude) {
      best = row[k];
      best_magnitude = m;
    }
  }
  return best;
}

/// The sweep test (sweep/propagate_sweep.h): keep a row while some column is nonzero and its largest value
/// column (the first `values` columns; derivative columns follow) passes the per-term test.
template <int W, Coefficient C>
inline bool keeps(const Truncation& truncation, const PauliString<W>& key, std::span<const C> row,
                  std::size_t values) {
  const C c = largest(row.first(values));
  if (c == C(0.0) && std::all_of(row.begin() + static_cast<std::ptrdiff_t>(values), row.end(),
                                 [](const C& x) { return x == C(0.0); })) {
    return false;
  }
  return truncation.keep(key, c);
}

}  // namespace sweep_detail

template <int W, Coefficient C>
class ReferenceSweepEngine {
 public:
  /// `values`: the value columns (the first ones; the rest are derivative columns).
  ReferenceSweepEngine(const SweepSum<W, C>& sum, std::size_t values)
      : num_qubits_(sum.num_qubits()),
        columns_(sum.columns()),
        values_(values),
        keys_(sum.keys().begin(), sum.keys().end()) {
    coefficients_.reserve(keys_.size() * columns_);
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      const auto row = sum.row(i);
      coefficients_.insert(coefficients_.end(), row.begin(), row.end());
    }
  }

  std::size_t size() const { return keys_.size(); }
  std::size_t columns() const { return columns_; }

  /// Applies the layer: column j under layer.table_of(j), plus its source term; adds each column's dropped
  /// Σ|c|² to dropped[j].
  void apply_layer(const SweepLayer<W>& layer, const Truncation& truncation, std::span<double> dropped) {
    std::unordered_map<PauliString<W>, std::size_t> index;
    std::vector<PauliString<W>> keys;
    std::vector<C> coefficients;
    auto emit_into = [&](std::size_t column, const C& c, double factor) {
      return [&, column, factor](const PauliString<W>& out, const Complex& amplitude, int) {
        auto [it, fresh] = index.try_emplace(out, keys.size());
        if (fresh) {
          keys.push_back(out);
          coefficients.resize(coefficients.size() + columns_, C(0.0));
        }
        sweep_detail::add_scaled(coefficients[it->second * columns_ + column], factor * amplitude, c);
      };
    };
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      for (std::size_t k = 0; k < columns_; ++k) {
        const C c = coefficients_[i * columns_ + k];
        if (c != C(0.0)) layer.table_of(k).for_each_output(keys_[i], emit_into(k, c, 1.0));
        if (const auto* source = layer.source_of(k)) {
          const C v = coefficients_[i * columns_ + source->from];
          if (v == C(0.0)) continue;
          source->plus->for_each_output(keys_[i], emit_into(k, v, source->scale));
          source->minus->for_each_output(keys_[i], emit_into(k, v, -source->scale));
        }
      }
    }
    keys_ = std::move(keys);
    coefficients_ = std::move(coefficients);
    std::vector<char> keep(keys_.size());
    for (std::size_t i = 0; i < keys_.size(); ++i)
      keep[i] = sweep_detail::keeps(truncation, keys_[i], row(i), values_);
    retain_rows(keep, dropped);
  }

  /// The truncation's layer passes (rows ranked by their largest value column's |c|²).
  LayerPassResult finalize_layer(const Truncation& truncation, std::span<double> dropped) {
    Target target{*this, dropped};
    return truncation.finalize_layer_on(target);
  }

  SweepSum<W, C> result() const { return SweepSum<W, C>(num_qubits_, columns_, keys_, coefficients_); }
  /// f(key, row) for every term in result()'s order.
  template <class F>
  void for_each_row(F&& f) const {
    for (std::size_t i = 0; i < keys_.size(); ++i)
      f(keys_[i], std::span<const C>(coefficients_.data() + i * columns_, columns_));
  }

 private:
  std::span<const C> row(std::size_t i) const {
    return std::span<const C>(coefficients_).subspan(i * columns_, columns_);
  }
  /// Keeps the flagged rows in key order; the others' Σ|c|² goes to dropped per column.
  void retain_rows(std::span<const char> keep, std::span<double> dropped) {
    std::vector<std::size_t> order(keys_.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys_[a] < keys_[b]; });
    std::vector<PauliString<W>> keys;
    std::vector<C> coefficients;
    for (std::size_t i : order) {
      const auto r = row(i);
      if (keep[i]) {
        keys.push_back(keys_[i]);
        coefficients.insert(coefficients.end(), r.begin(), r.end());
      } else {
        for (std::size_t k = 0; k < columns_; ++k) dropped[k] += magnitude_squared(r[k]);
      }
    }
    keys_ = std::move(keys);
    coefficients_ = std::move(coefficients);
  }

  /// finalize_layer_on's target: rows are in key order already.
  struct Target {
    ReferenceSweepEngine& engine;
    std::span<double> dropped;
    std::size_t size() const { return engine.size(); }
    std::vector<double> magnitudes_squared(bool) const {
      std::vector<double> m(engine.size());
      for (std::size_t i = 0; i < m.size(); ++i)
        m[i] = magnitude_squared(sweep_detail::largest(engine.row(i).first(engine.values_)));
      return m;
    }
    void retain(std::span<const char> keep) { engine.retain_rows(keep, dropped); }
    void collapse_to(std::size_t) {
      throw std::invalid_argument("collapse_sample has no meaning in a sweep");
    }
  };

  std::size_t num_qubits_;
  std::size_t columns_;
  std::size_t values_;
  std::vector<PauliString<W>> keys_;
  std::vector<C> coefficients_;  // row-major: keys_.size() × columns_
};

}  // namespace paulistrings
