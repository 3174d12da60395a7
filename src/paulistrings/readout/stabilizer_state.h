#pragma once
// StabilizerState: expectation values in the stabilizer state of n signed, pairwise commuting,
// independent generators ("+XX", "-ZZ", bare = +; dense or sparse labels). The generators are
// brought to reduced row echelon form once (O(n³/64)); a term's value is ±1 when ±P is in the
// stabilizer group and 0 otherwise, found by reducing P against the pivots (O(n²/64) per term).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "paulistrings/core/pauli_sum.h"

namespace paulistrings {

class StabilizerState {
 public:
  /// Throws std::invalid_argument unless there are exactly num_qubits Hermitian generators that
  /// commute pairwise and are independent.
  static StabilizerState from_generators(std::span<const std::string> generators, std::size_t num_qubits);

  std::size_t num_qubits() const { return num_qubits_; }

  template <int W, Coefficient C>
  C expectation(const PauliSum<W, C>& sum) const;

 private:
  struct Row {
    PauliString<16> key;
    int phase;  ///< the group element is i^phase · key, phase ∈ {0, 2}
    int pivot;  ///< column: qubit q for x bit q, num_qubits + q for z bit q
  };
  std::size_t num_qubits_ = 0;
  std::vector<Row> rows_;  // reduced rows; pivot columns are exclusive to their row
};

template <int W, Coefficient C>
C StabilizerState::expectation(const PauliSum<W, C>& sum) const {
  if (sum.num_qubits() != num_qubits_) {
    throw std::invalid_argument("expectation_stabilizer: the state has " + std::to_string(num_qubits_) +
                                " qubits but the sum has " + std::to_string(sum.num_qubits()));
  }
  struct NarrowRow {
    PauliString<W> key;
    int phase;
    std::size_t word;
    std::uint64_t bit;
    bool on_z;
  };
  std::vector<NarrowRow> rows;
  rows.reserve(rows_.size());
  for (const Row& r : rows_) {
    NarrowRow n{};
    for (int w = 0; w < W; ++w) {
      n.key.x[w] = r.key.x[w];
      n.key.z[w] = r.key.z[w];
    }
    n.phase = r.phase;
    const std::size_t q = static_cast<std::size_t>(r.pivot) % num_qubits_;
    n.on_z = static_cast<std::size_t>(r.pivot) >= num_qubits_;
    n.word = q >> 6;
    n.bit = std::uint64_t{1} << (q & 63);
    rows.push_back(n);
  }
  C total = C(0.0);
  for (std::size_t i = 0; i < sum.size(); ++i) {
    PauliString<W> remainder = sum.keys()[i];
    PauliString<W> product;  // running product of the rows used, as i^phase · product
    int phase = 0;
    for (const NarrowRow& r : rows) {
      const std::uint64_t word = r.on_z ? remainder.z[r.word] : remainder.x[r.word];
      if (!(word & r.bit)) continue;
      phase += r.phase + product_phase(product, r.key);
      product ^= r.key;
      remainder ^= r.key;
    }
    if (!remainder.is_identity()) continue;  // P anticommutes with some stabilizer: ⟨P⟩ = 0
    // The group element i^phase·P stabilizes the state, so ⟨P⟩ = i^{-phase} = ±1.
    total += (phase & 3) == 0 ? sum.coefficients()[i] : -sum.coefficients()[i];
  }
  return total;
}

}  // namespace paulistrings
