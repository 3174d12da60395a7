#pragma once
// Inputs shared by the engine-equivalence tests (CPU, GPU and partitioned engines against the reference
// engine): the truncation policies they cycle through and random sums on a window of qubits.

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "paulistrings/core/pauli_sum.h"
#include "paulistrings/truncation/truncation.h"

namespace paulistrings::testing {

inline constexpr int kTruncationCases = 9;

/// A fresh policy per run (collapse_sample carries a pass counter), chosen by which % 9: none, coeff,
/// weight, topn, approx_topn, collapse_sample, coeff & weight, topn | coeff, approx_topn & coeff.
inline Truncation truncation_case(int which, std::uint64_t seed) {
  switch (which % kTruncationCases) {
    case 0:
      return Truncation();
    case 1:
      return Truncation::coeff(1e-3);
    case 2:
      return Truncation::weight(4);
    case 3:
      return Truncation::topn(300);
    case 4:
      return Truncation::approx_topn(300);
    case 5:
      return Truncation::collapse_sample(200, seed);
    case 6:
      return Truncation::coeff(1e-4) & Truncation::weight(6);
    case 7:
      return Truncation::topn(500) | Truncation::coeff(1e-2);
    default:
      return Truncation::approx_topn(2000) & Truncation::coeff(1e-5);
  }
}

/// `terms` random strings on qubits offset…offset+active−1 of a total-qubit register, with normal
/// (complex: normal real and imaginary parts) coefficients; duplicates summed.
template <int W, Coefficient C>
PauliSum<W, C> random_window_sum(std::mt19937_64& rng, std::size_t terms, std::size_t total, std::size_t offset,
                                 std::size_t active) {
  std::vector<typename PauliSum<W, C>::Term> list;
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> letter(0, 3);
  for (std::size_t t = 0; t < terms; ++t) {
    PauliString<W> key;
    for (std::size_t q = 0; q < active; ++q) key.set_code(offset + q, letter(rng));
    C c;
    if constexpr (std::same_as<C, Complex>) {
      c = Complex(normal(rng), normal(rng));
    } else {
      c = normal(rng);
    }
    list.push_back({key, c});
  }
  return PauliSum<W, C>::from_terms(total, list);
}

}  // namespace paulistrings::testing
