// The runtime-width front: one dispatch per call over the ten instantiated PauliSum types.

#include "paulistrings/core/any_pauli_sum.h"

#include <stdexcept>

namespace paulistrings {
namespace {

template <Coefficient C>
AnyPauliSum::Variant empty_sum(std::size_t num_qubits) {
  switch (width_for_qubits(num_qubits)) {
    case 1:
      return PauliSum<1, C>(num_qubits);
    case 2:
      return PauliSum<2, C>(num_qubits);
    case 4:
      return PauliSum<4, C>(num_qubits);
    case 8:
      return PauliSum<8, C>(num_qubits);
    default:
      return PauliSum<16, C>(num_qubits);
  }
}

bool needs_complex(std::span<const Complex> values) {
  for (const Complex& v : values) {
    if (v.imag() != 0.0) return true;
  }
  return false;
}

template <class Sum>
using CoeffOf = typename std::decay_t<Sum>::Coeff;

template <Coefficient C>
C narrow(const Complex& v) {
  if constexpr (std::same_as<C, double>) {
    return v.real();
  } else {
    return v;
  }
}

}  // namespace

AnyPauliSum::AnyPauliSum(std::size_t num_qubits, bool complex_coefficients)
    : sum_(complex_coefficients ? empty_sum<Complex>(num_qubits) : empty_sum<double>(num_qubits)) {}

AnyPauliSum AnyPauliSum::from_labels(std::size_t num_qubits,
                                     std::span<const std::pair<std::string, Complex>> terms,
                                     bool force_complex) {
  bool complex = force_complex;
  for (const auto& term : terms) complex |= term.second.imag() != 0.0;
  AnyPauliSum result(num_qubits, complex);
  result.visit([&](auto& sum) {
    using Sum = std::decay_t<decltype(sum)>;
    using C = typename Sum::Coeff;
    std::vector<typename Sum::Term> parsed;
    parsed.reserve(terms.size());
    for (const auto& [label, c] : terms)
      parsed.push_back({Sum::Key::from_label(label, num_qubits), narrow<C>(c)});
    sum = Sum::from_terms(num_qubits, std::move(parsed));
  });
  return result;
}

AnyPauliSum AnyPauliSum::from_arrays(std::size_t num_qubits, std::span<const std::uint64_t> x,
                                     std::span<const std::uint64_t> z, std::size_t words_per_row,
                                     std::span<const Complex> coefficients, bool force_complex) {
  AnyPauliSum result(num_qubits, force_complex || needs_complex(coefficients));
  result.visit([&](auto& sum) {
    using Sum = std::decay_t<decltype(sum)>;
    using C = typename Sum::Coeff;
    std::vector<C> values(coefficients.size());
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = narrow<C>(coefficients[i]);
    sum = Sum::from_arrays(num_qubits, x, z, words_per_row, values);
  });
  return result;
}

std::size_t AnyPauliSum::num_qubits() const {
  return visit([](const auto& s) { return s.num_qubits(); });
}
std::size_t AnyPauliSum::size() const {
  return visit([](const auto& s) { return s.size(); });
}
std::size_t AnyPauliSum::num_buckets() const {
  return visit([](const auto& s) { return s.num_buckets(); });
}
int AnyPauliSum::width() const {
  return visit([](const auto& s) { return std::decay_t<decltype(s)>::kWidth; });
}

Complex AnyPauliSum::coefficient(std::string_view label) const {
  return visit([&](const auto& s) { return Complex(s.coefficient(label)); });
}
Complex AnyPauliSum::identity_coefficient() const {
  return visit([](const auto& s) { return Complex(s.identity_coefficient()); });
}
double AnyPauliSum::norm_squared() const {
  return visit([](const auto& s) { return s.norm_squared(); });
}

std::vector<std::pair<std::string, Complex>> AnyPauliSum::terms() const {
  return visit([](const auto& s) {
    std::vector<std::pair<std::string, Complex>> out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
      out.emplace_back(s.keys()[i].to_label(s.num_qubits()), Complex(s.coefficients()[i]));
    }
    return out;
  });
}

void AnyPauliSum::make_complex() {
  if (is_complex()) return;
  Variant converted = visit([](const auto& s) -> Variant { return s.to_complex(); });
  sum_ = std::move(converted);
}

void AnyPauliSum::make_real() {
  if (!is_complex()) return;
  Variant converted = visit([](const auto& s) -> Variant { return s.to_real(); });
  sum_ = std::move(converted);
}

AnyPauliSum& AnyPauliSum::operator+=(const AnyPauliSum& other) {
  if (num_qubits() != other.num_qubits()) {
    throw std::invalid_argument("cannot add Pauli sums on " + std::to_string(num_qubits()) + " and " +
                                std::to_string(other.num_qubits()) + " qubits");
  }
  AnyPauliSum rhs = other;
  if (is_complex() || rhs.is_complex()) {
    make_complex();
    rhs.make_complex();
  }
  std::visit(
      [](auto& a, const auto& b) {
        if constexpr (std::is_same_v<std::decay_t<decltype(a)>, std::decay_t<decltype(b)>>) {
          a += b;
        } else {
          throw std::logic_error("AnyPauliSum: operands of equal qubit count hold different widths");
        }
      },
      sum_, rhs.sum_);
  return *this;
}

AnyPauliSum& AnyPauliSum::operator-=(const AnyPauliSum& other) { return *this += other * Complex(-1.0); }

AnyPauliSum& AnyPauliSum::operator*=(Complex scalar) {
  if (scalar.imag() != 0.0) make_complex();
  visit([&](auto& s) { s *= narrow<typename std::decay_t<decltype(s)>::Coeff>(scalar); });
  return *this;
}

bool operator==(const AnyPauliSum& a, const AnyPauliSum& b) {
  if (a.num_qubits() != b.num_qubits()) return false;
  AnyPauliSum x = a, y = b;
  x.make_complex();
  y.make_complex();
  return std::visit(
      [](const auto& s, const auto& t) {
        if constexpr (std::is_same_v<std::decay_t<decltype(s)>, std::decay_t<decltype(t)>>) {
          return s == t;
        } else {
          return false;
        }
      },
      x.variant(), y.variant());
}

}  // namespace paulistrings
