#pragma once
// Assertion helpers shared by the test files: a check that an action throws std::invalid_argument
// naming the problem, a relative-tolerance comparison of complex numbers, and the construction of
// a PauliSum<W, C> from (label, complex coefficient) terms.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <concepts>
#include <cstddef>
#include <exception>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paulistrings/core/pauli_sum.h"

namespace paulistrings::testing {

/// Passes when `action` throws std::invalid_argument whose message contains every one of `needles`.
template <class F>
::testing::AssertionResult ThrowsInvalidArgumentMentioning(F&& action,
                                                           std::initializer_list<std::string> needles) {
  try {
    action();
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    for (const std::string& needle : needles) {
      if (message.find(needle) == std::string::npos) {
        return ::testing::AssertionFailure()
               << "message \"" << message << "\" does not mention \"" << needle << "\"";
      }
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a different exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

/// Passes when |actual − expected| ≤ tolerance·max(1, |expected|).
inline ::testing::AssertionResult ComplexClose(Complex actual, Complex expected, double tolerance = 1e-12) {
  const double scale = std::max(1.0, std::abs(expected));
  if (std::abs(actual - expected) <= tolerance * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "actual " << actual << " vs expected " << expected
                                       << " (difference " << std::abs(actual - expected) << ")";
}

/// Passes when both sums hold the same keys and every coefficient agrees to tolerance·max(1, |expected|)
/// (tolerance 0: the same coefficient bits), in any storage order.
template <int W, Coefficient C>
::testing::AssertionResult SumsMatch(const PauliSum<W, C>& actual, const PauliSum<W, C>& expected,
                                     double tolerance = 1e-12) {
  const auto a = actual.sorted_terms();
  const auto b = expected.sorted_terms();
  if (a.size() != b.size()) {
    return ::testing::AssertionFailure() << "term counts differ: " << a.size() << " vs " << b.size();
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key) {
      return ::testing::AssertionFailure()
             << "term " << i << ": " << a[i].key.to_sparse_label() << " vs " << b[i].key.to_sparse_label();
    }
    const double scale = std::max(1.0, std::abs(b[i].coefficient));
    if (std::abs(a[i].coefficient - b[i].coefficient) > tolerance * scale) {
      return ::testing::AssertionFailure() << "coefficient of " << a[i].key.to_sparse_label() << ": "
                                           << a[i].coefficient << " vs " << b[i].coefficient;
    }
  }
  return ::testing::AssertionSuccess();
}

/// Term-by-term comparison of engines that add equal keys in different orders (partitions): |a − b| ≤
/// 1e-12·max(|a|, |b|) + 1e-14·(largest |c|), a missing term counting as 0. The absolute part covers
/// terms made by cancellation, whose rounding is relative to the terms that cancelled, and an exact
/// cancellation on one side that leaves a rounding residue on the other.
template <int W, Coefficient C>
::testing::AssertionResult TermsMatchSummedInAnyOrder(const PauliSum<W, C>& actual, const PauliSum<W, C>& expected) {
  std::map<PauliString<W>, std::pair<C, C>> both;
  double largest = 0.0;
  for (const auto& t : actual.sorted_terms()) {
    both[t.key].first = t.coefficient;
    largest = std::max(largest, std::abs(t.coefficient));
  }
  for (const auto& t : expected.sorted_terms()) {
    both[t.key].second = t.coefficient;
    largest = std::max(largest, std::abs(t.coefficient));
  }
  for (const auto& [key, values] : both) {
    const double difference = std::abs(values.first - values.second);
    if (difference <= 1e-12 * std::max(std::abs(values.first), std::abs(values.second)) + 1e-14 * largest)
      continue;
    return ::testing::AssertionFailure() << "term " << key.to_sparse_label() << ": " << values.first << " vs "
                                         << values.second;
  }
  return ::testing::AssertionSuccess();
}

/// A PauliSum<W, C> from (label, complex coefficient) terms; real C keeps the real parts.
template <int W, Coefficient C>
PauliSum<W, C> MakeSum(std::size_t num_qubits, const std::vector<std::pair<std::string, Complex>>& terms) {
  std::vector<std::pair<std::string, C>> converted;
  for (const auto& [label, c] : terms) {
    if constexpr (std::same_as<C, double>) {
      converted.emplace_back(label, c.real());
    } else {
      converted.emplace_back(label, c);
    }
  }
  return PauliSum<W, C>::from_labels(num_qubits, converted);
}

}  // namespace paulistrings::testing
