// Template bodies of the oracle bridge (included by oracle_bridge.h).

#include <bit>
#include <stdexcept>

namespace paulistrings::testing {

template <int W, Coefficient C>
dense::Matrix dense_operator(const PauliSum<W, C>& sum, std::size_t num_qubits, std::size_t offset) {
  if (num_qubits > static_cast<std::size_t>(dense::kMaxQubits))
    throw std::invalid_argument("too many qubits for the oracle");
  const std::size_t dim = std::size_t{1} << num_qubits;
  dense::Matrix op = dense::Matrix::zeros(static_cast<int>(dim));
  for (std::size_t t = 0; t < sum.size(); ++t) {
    const PauliString<W>& key = sum.keys()[t];
    if (key.span() > offset + num_qubits) throw std::invalid_argument("term outside the oracle's qubits");
    std::uint64_t x = 0, z = 0;
    for (std::size_t q = 0; q < num_qubits; ++q) {
      const int code = key.code(offset + q);
      x |= static_cast<std::uint64_t>(code & 1) << q;
      z |= static_cast<std::uint64_t>((code >> 1) & 1) << q;
    }
    if (key.weight() != std::popcount(x | z)) throw std::invalid_argument("term outside the oracle's qubits");
    // P(x,z) = i^{x·z} X^x Z^z: column j maps to row j ⊕ x with sign (−1)^{z·j}.
    static const Complex kPowers[4] = {1.0, Complex(0, 1), -1.0, Complex(0, -1)};
    const Complex phase = Complex(sum.coefficients()[t]) * kPowers[std::popcount(x & z) & 3];
    for (std::size_t j = 0; j < dim; ++j) {
      const double sign = (std::popcount(z & j) & 1) ? -1.0 : 1.0;
      op(static_cast<int>(j ^ x), static_cast<int>(j)) += sign * phase;
    }
  }
  return op;
}

template <int W>
PauliSum<W, Complex> sum_from_dense(const dense::Matrix& op, std::size_t num_qubits, std::size_t total_qubits,
                                    std::size_t offset, double drop_below) {
  const std::size_t dim = std::size_t{1} << num_qubits;
  static const Complex kPowers[4] = {1.0, Complex(0, 1), -1.0, Complex(0, -1)};
  std::vector<typename PauliSum<W, Complex>::Term> terms;
  for (std::uint64_t x = 0; x < dim; ++x) {
    for (std::uint64_t z = 0; z < dim; ++z) {
      // tr(P A) = Σ_k P[k⊕x, k] A[k, k⊕x].
      Complex trace = 0.0;
      const Complex phase = kPowers[std::popcount(x & z) & 3];
      for (std::size_t k = 0; k < dim; ++k) {
        const double sign = (std::popcount(z & k) & 1) ? -1.0 : 1.0;
        trace += sign * phase * op(static_cast<int>(k), static_cast<int>(k ^ x));
      }
      const Complex c = trace / static_cast<double>(dim);
      if (std::abs(c) <= drop_below) continue;
      PauliString<W> key;
      for (std::size_t q = 0; q < num_qubits; ++q)
        key.set_code(offset + q, static_cast<int>(((x >> q) & 1) | (((z >> q) & 1) << 1)));
      terms.push_back({key, c});
    }
  }
  return PauliSum<W, Complex>::from_terms(total_qubits, std::move(terms));
}

}  // namespace paulistrings::testing
