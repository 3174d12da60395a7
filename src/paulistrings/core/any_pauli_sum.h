#pragma once
// AnyPauliSum: the runtime-width front. It holds a PauliSum<W, C> for the smallest width W that
// fits the qubit count (≤ 1024) and real or complex coefficients, and dispatches once per call
// (std::visit), never inside a loop. The command line and Python use this type.

#include <complex>
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "paulistrings/core/pauli_sum.h"

namespace paulistrings {

class AnyPauliSum {
 public:
  using Variant =
      std::variant<PauliSum<1, double>, PauliSum<2, double>, PauliSum<4, double>, PauliSum<8, double>,
                   PauliSum<16, double>, PauliSum<1, Complex>, PauliSum<2, Complex>, PauliSum<4, Complex>,
                   PauliSum<8, Complex>, PauliSum<16, Complex>>;

  /// The empty sum; throws std::invalid_argument above 1024 qubits.
  explicit AnyPauliSum(std::size_t num_qubits = 0, bool complex_coefficients = false);
  /// Wraps a typed sum, re-packed to the smallest width that fits its qubit count when W is wider.
  template <int W, Coefficient C>
  AnyPauliSum(PauliSum<W, C> sum) : sum_(with_smallest_width(std::move(sum))) {}

  /// From (label, coefficient) pairs (dense or sparse labels); storage is real unless some
  /// coefficient has a nonzero imaginary part or force_complex is set.
  static AnyPauliSum from_labels(std::size_t num_qubits,
                                 std::span<const std::pair<std::string, Complex>> terms,
                                 bool force_complex = false);
  /// From row-major x/z words (n_terms × words_per_row) and coefficients; same storage rule.
  static AnyPauliSum from_arrays(std::size_t num_qubits, std::span<const std::uint64_t> x,
                                 std::span<const std::uint64_t> z, std::size_t words_per_row,
                                 std::span<const Complex> coefficients, bool force_complex = false);

  std::size_t num_qubits() const;
  std::size_t size() const;
  std::size_t num_buckets() const;
  /// Words per Pauli string (1, 2, 4, 8 or 16).
  int width() const;
  bool is_complex() const { return sum_.index() >= 5; }

  Complex coefficient(std::string_view label) const;
  Complex identity_coefficient() const;
  double norm_squared() const;
  /// (dense label, coefficient) in canonical order.
  std::vector<std::pair<std::string, Complex>> terms() const;

  /// Switches storage to complex coefficients (exact).
  void make_complex();
  /// Switches storage to real coefficients; throws std::invalid_argument if an imaginary part is nonzero.
  void make_real();

  AnyPauliSum& operator+=(const AnyPauliSum& other);
  AnyPauliSum& operator-=(const AnyPauliSum& other);
  AnyPauliSum& operator*=(Complex scalar);
  friend AnyPauliSum operator+(AnyPauliSum a, const AnyPauliSum& b) { return a += b; }
  friend AnyPauliSum operator-(AnyPauliSum a, const AnyPauliSum& b) { return a -= b; }
  friend AnyPauliSum operator*(AnyPauliSum a, Complex s) { return a *= s; }
  friend AnyPauliSum operator*(Complex s, AnyPauliSum a) { return a *= s; }
  friend bool operator==(const AnyPauliSum& a, const AnyPauliSum& b);

  template <class F>
  decltype(auto) visit(F&& f) {
    return std::visit(std::forward<F>(f), sum_);
  }
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(std::forward<F>(f), sum_);
  }
  Variant& variant() { return sum_; }
  const Variant& variant() const { return sum_; }

  /// The same terms at width To (To·64 must hold the qubit count).
  template <int To, int From, Coefficient C>
  static PauliSum<To, C> convert_width(PauliSum<From, C> sum) {
    if constexpr (To == From) {
      return sum;
    } else {
      std::vector<typename PauliSum<To, C>::Term> terms(sum.size());
      for (std::size_t i = 0; i < sum.size(); ++i) {
        for (int w = 0; w < std::min(To, From); ++w) {
          terms[i].key.x[w] = sum.keys()[i].x[w];
          terms[i].key.z[w] = sum.keys()[i].z[w];
        }
        terms[i].coefficient = sum.coefficients()[i];
      }
      return PauliSum<To, C>::from_terms(sum.num_qubits(), std::move(terms), sum.hash().seed());
    }
  }

 private:
  template <int W, Coefficient C>
  static Variant with_smallest_width(PauliSum<W, C> sum) {
    switch (width_for_qubits(sum.num_qubits())) {
      case 1:
        return convert_width<1>(std::move(sum));
      case 2:
        return convert_width<2>(std::move(sum));
      case 4:
        return convert_width<4>(std::move(sum));
      case 8:
        return convert_width<8>(std::move(sum));
      default:
        return convert_width<16>(std::move(sum));
    }
  }

  Variant sum_;
};

}  // namespace paulistrings
