#pragma once
// Read-outs that need no state (those of the original crate's Python API): overlap tr(A†B)/2^n, the anticommute
// histogram behind the Monte-Carlo operator Loschmidt echo, the exact rotated overlap
// 2^-n Tr(A V† A V) with V = Π_{q∈sites} exp(−iδG_q), and the diagonal echo formula.

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "paulistrings/core/pauli_sum.h"

namespace paulistrings {

/// 'x' (G = X) or 'z' (G = Z), case-insensitive; throws std::invalid_argument otherwise.
char parse_axis(std::string_view axis);

/// Σ conj(a_P) b_P over shared keys, i.e. tr(A† B)/2^n.
template <int W, Coefficient C1, Coefficient C2>
Complex overlap(const PauliSum<W, C1>& a, const PauliSum<W, C2>& b) {
  if (a.num_qubits() != b.num_qubits()) {
    throw std::invalid_argument("overlap: sums on " + std::to_string(a.num_qubits()) + " and " +
                                std::to_string(b.num_qubits()) + " qubits");
  }
  Complex total = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto other = b.coefficient(a.keys()[i]);
    if (other != decltype(other)(0.0)) total += std::conj(Complex(a.coefficients()[i])) * Complex(other);
  }
  return total;
}

/// Mask of `sites` as a key's x (or z) words; throws for repeated or out-of-range sites.
template <int W>
PauliString<W> site_mask(std::span<const std::size_t> sites, std::size_t num_qubits) {
  PauliString<W> mask;
  for (std::size_t q : sites) {
    if (q >= num_qubits) {
      throw std::invalid_argument("site " + std::to_string(q) + " is out of range for " +
                                  std::to_string(num_qubits) + " qubits");
    }
    if (mask.code(q) != 0) throw std::invalid_argument("site " + std::to_string(q) + " is listed twice");
    mask.set_code(q, 3);
  }
  return mask;
}

/// w[k] = Σ|c|² of the strings that anticommute with exactly k of the G_q (q ∈ sites); Σw = Σ|c|².
template <int W, Coefficient C>
std::vector<double> anticommute_histogram(const PauliSum<W, C>& sum, std::span<const std::size_t> sites,
                                          std::string_view axis = "x") {
  const char g = parse_axis(axis);
  const PauliString<W> mask = site_mask<W>(sites, sum.num_qubits());
  std::vector<double> histogram(sites.size() + 1, 0.0);
  for (std::size_t i = 0; i < sum.size(); ++i) {
    const PauliString<W>& key = sum.keys()[i];
    int count = 0;
    // A string anticommutes with X_q iff its z bit is set at q, and with Z_q iff its x bit is.
    for (int w = 0; w < W; ++w) count += std::popcount((g == 'x' ? key.z[w] : key.x[w]) & mask.x[w]);
    histogram[static_cast<std::size_t>(count)] += magnitude_squared(sum.coefficients()[i]);
  }
  return histogram;
}

/// 2^-n Tr(A V† A V), V = Π_{q∈sites} exp(−iδG_q), exact and without forming V†AV: strings equal
/// away from the bits V flips are grouped, and each pair in a group contributes
/// a_P a_Q Π_q (cos 2δ or ±sin 2δ). δ = 0 gives Σ a_P² (= Σ|c|² for a Hermitian A).
template <int W, Coefficient C>
Complex rotated_overlap(const PauliSum<W, C>& sum, std::span<const std::size_t> sites, double delta,
                        std::string_view axis = "x") {
  if (!std::isfinite(delta)) throw std::invalid_argument("rotated_overlap: delta is not finite");
  const char g = parse_axis(axis);
  const PauliString<W> mask = site_mask<W>(sites, sum.num_qubits());
  const double c2 = std::cos(2.0 * delta), s2 = std::sin(2.0 * delta);
  // For axis x, V flips the x bit wherever the string has Z or Y on a site (z bit set):
  // Z → cos·Z + sin·Y and Y → cos·Y − sin·Z. For axis z it flips the z bit where x is set:
  // X → cos·X − sin·Y and Y → cos·Y + sin·X.
  struct Member {
    PauliString<W> key;
    Complex coefficient;
  };
  std::unordered_map<PauliString<W>, std::vector<Member>> groups;
  for (std::size_t i = 0; i < sum.size(); ++i) {
    PauliString<W> group = sum.keys()[i];
    for (int w = 0; w < W; ++w) {
      if (g == 'x')
        group.x[w] &= ~(mask.x[w] & group.z[w]);
      else
        group.z[w] &= ~(mask.x[w] & group.x[w]);
    }
    groups[group].push_back({sum.keys()[i], Complex(sum.coefficients()[i])});
  }
  Complex total = 0.0;
  for (const auto& [group, members] : groups) {
    for (const Member& p : members) {
      for (const Member& q : members) {
        double factor = 1.0;
        for (int w = 0; w < W && factor != 0.0; ++w) {
          const std::uint64_t flippable = mask.x[w] & (g == 'x' ? p.key.z[w] : p.key.x[w]);
          const std::uint64_t flipped = g == 'x' ? (p.key.x[w] ^ q.key.x[w]) : (p.key.z[w] ^ q.key.z[w]);
          const std::uint64_t from_y = flipped & p.key.x[w] & p.key.z[w];  // flips leaving Y
          const int kept = std::popcount(flippable & ~flipped);
          const int flips = std::popcount(flipped);
          const int negative = g == 'x' ? std::popcount(from_y) : flips - std::popcount(from_y);
          factor *= std::pow(c2, kept) * std::pow(s2, flips) * ((negative & 1) ? -1.0 : 1.0);
        }
        total += p.coefficient * q.coefficient * factor;
      }
    }
  }
  return total;
}

/// Σ_k w[k]·cos(2δ)^k / Σ_k w[k] for an anticommute histogram; NaN when every w[k] is zero.
double diagonal_echo(std::span<const double> histogram, double delta);

}  // namespace paulistrings
