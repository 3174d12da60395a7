#pragma once
// ProductState: expectation values ⟨s|O|s⟩ in product states (read out after a Heisenberg run, that is
// the circuit's ⟨O⟩: docs/design.md §2.4). A state is given as a uniform name "z+", "x+", "y+"
// (case-insensitive; "z+" = |0…0⟩) or as one character per qubit over qiskit's alphabet 0 1 (Z±),
// + - (X±), r l (Y±). A term contributes Π_q ⟨P_q⟩, with ⟨P_q⟩ = ±1 when P_q is the qubit's axis, 1 for
// I and 0 otherwise: one masked pass over the terms.

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "paulistrings/core/pauli_sum.h"

namespace paulistrings {

class ProductState {
 public:
  /// Throws std::invalid_argument for an unknown name, a wrong length or a bad character.
  static ProductState parse(std::string_view spec, std::size_t num_qubits);

  std::size_t num_qubits() const { return num_qubits_; }
  /// The per-qubit label ("0+r…") of this state.
  std::string label() const;

  template <int W, Coefficient C>
  C expectation(const PauliSum<W, C>& sum) const;
  /// ⟨s|P|s⟩ of one string: ±1 when every qubit of P is its axis, else 0 (P must fit the state).
  template <int W>
  int value(const PauliString<W>& key) const {
    int sign = 0;
    for (int w = 0; w < W; ++w) {
      const std::uint64_t support = key.x[w] | key.z[w];
      if (key.x[w] != (axis_x_[w] & support) || key.z[w] != (axis_z_[w] & support)) return 0;
      sign += std::popcount(support & negative_[w]);
    }
    return (sign & 1) ? -1 : 1;
  }

 private:
  std::size_t num_qubits_ = 0;
  std::vector<std::uint64_t> axis_x_, axis_z_, negative_;  // the axis Pauli per qubit, and its sign
};

template <int W, Coefficient C>
C ProductState::expectation(const PauliSum<W, C>& sum) const {
  if (sum.num_qubits() != num_qubits_) {
    throw std::invalid_argument("expectation: the state has " + std::to_string(num_qubits_) +
                                " qubits but the sum has " + std::to_string(sum.num_qubits()));
  }
  C total = C(0.0);
  for (std::size_t i = 0; i < sum.size(); ++i) {
    const int v = value(sum.keys()[i]);
    if (v != 0) total += v < 0 ? -sum.coefficients()[i] : sum.coefficients()[i];
  }
  return total;
}

}  // namespace paulistrings
