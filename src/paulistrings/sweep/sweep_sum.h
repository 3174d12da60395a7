#pragma once
// SweepSum<W, C>: a sum whose every term holds K coefficients, one per column of a sweep
// (sweep/propagate_sweep.h). Rows are (key, K coefficients) in the order the engine left them (fixed for
// a given run, whatever the thread count); a row has at least one nonzero coefficient; keys are unique.

#include <algorithm>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/core/pauli_sum.h"

namespace paulistrings {

template <int W, Coefficient C>
class SweepSum {
 public:
  using Key = PauliString<W>;
  using Coeff = C;
  static constexpr int kWidth = W;
  static constexpr bool kIsComplex = std::same_as<C, Complex>;

  SweepSum() = default;
  /// From rows (keys unique, trusted to fit num_qubits); coefficients row-major
  /// (keys.size() × columns). Rows whose columns are all zero are dropped.
  SweepSum(std::size_t num_qubits, std::size_t columns, std::vector<Key> keys, std::vector<C> coefficients)
      : num_qubits_(num_qubits), columns_(columns) {
    if (columns == 0) throw std::invalid_argument("a sweep has at least one column");
    if (coefficients.size() != keys.size() * columns)
      throw std::invalid_argument("SweepSum: " + std::to_string(coefficients.size()) + " coefficients for " +
                                  std::to_string(keys.size()) + " keys × " + std::to_string(columns) +
                                  " columns");
    std::size_t out = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto row = std::span<const C>(coefficients).subspan(i * columns, columns);
      if (std::all_of(row.begin(), row.end(), [](const C& c) { return c == C(0.0); })) continue;
      if (out != i) {
        keys[out] = keys[i];
        std::copy(row.begin(), row.end(), coefficients.begin() + static_cast<std::ptrdiff_t>(out * columns));
      }
      ++out;
    }
    keys.resize(out);
    coefficients.resize(out * columns);
    keys_ = std::move(keys);
    coefficients_ = std::move(coefficients);
  }
  std::size_t num_qubits() const { return num_qubits_; }
  std::size_t columns() const { return columns_; }
  std::size_t size() const { return keys_.size(); }
  std::span<const Key> keys() const { return keys_; }
  /// Every row's coefficients, row-major (size() × columns()).
  std::span<const C> coefficients() const { return coefficients_; }
  /// Row i's K coefficients.
  std::span<const C> row(std::size_t i) const {
    return std::span<const C>(coefficients_).subspan(i * columns_, columns_);
  }
  /// Column k as a sum of its own (its nonzero coefficients).
  PauliSum<W, C> column(std::size_t k) const {
    if (k >= columns_)
      throw std::out_of_range("column " + std::to_string(k) + " of a sweep of " + std::to_string(columns_));
    std::vector<typename PauliSum<W, C>::Term> terms;
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      const C c = coefficients_[i * columns_ + k];
      if (c != C(0.0)) terms.push_back({keys_[i], c});
    }
    return PauliSum<W, C>::from_terms(num_qubits_, std::move(terms));
  }

 private:
  std::size_t num_qubits_ = 0;
  std::size_t columns_ = 1;
  std::vector<Key> keys_;
  std::vector<C> coefficients_;
};

}  // namespace paulistrings
